// Internal to profiler/: CUDA-event timing on a caller's stream, shared by the public
// TimeWithCudaEvents (its own stream) and the CUPTI profiler's passes 1 and 2b (the stream of
// the whole measurement). Includes CUDA headers; not part of the public API.
#pragma once

#include <cuda_runtime.h>

#include "engine/core/status.h"
#include "profiler/model/profile_result.h"
#include "profiler/profiler.h"

namespace stof::profiler::detail {

// `warmup` untimed launches, a synchronisation, then `runs` launches back to back, each between
// its own pair of events (so every sample is its own), then order statistics. wall_us_per_run
// is the host time from the first timed launch to the final synchronisation over `runs`.
// A failure of `work` comes back with work's own message.
engine::Expected<LatencyStats> TimeOnStream(const WorkFn& work, int warmup, int runs,
                                            cudaStream_t stream);

}  // namespace stof::profiler::detail
