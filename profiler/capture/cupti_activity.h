// Internal to profiler/: pass 2 of a measurement, kernel records from the CUPTI Activity API
// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which keeps kernels concurrent), and pass 2b, the
// tracing overhead. Called by cupti_profiler.cpp only. Includes CUDA headers.
// Invariants: tracing is enabled only inside these functions and always disabled and flushed
// before they return, on every path, so passes 1 and 3 never run under tracing. The buffer
// callbacks catch everything: no exception crosses into CUPTI.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "engine/core/status.h"
#include "profiler/model/profile_result.h"
#include "profiler/profiler.h"

namespace stof::profiler::detail {

struct ActivityPassResult {
  std::vector<KernelRecord> kernels;  // demangled, assigned to runs, sorted
  std::vector<double> run_us;         // GPU span of each run
  uint64_t dropped_records = 0;       // CUPTI ran out of buffer space
  size_t foreign_records = 0;         // records outside every run (another thread's kernels)
  // Runs told apart by external correlation ids (true), or by CUPTI timestamps taken after
  // each run (false: CUPTI refused correlation; short runs may then lose kernels in a
  // long-lived process, whose CPU and GPU clocks drift apart).
  bool by_correlation = false;
};

// Runs `work` `runs` times with kernel tracing on, each run inside its own external
// correlation id, synchronising after each run, so each kernel record is assigned to the run
// whose API call launched it (by timestamps only where CUPTI refuses correlation). A failure
// of a CUPTI or CUDA call comes back as the error (the caller reports the pass unavailable).
engine::Status RunActivityPass(const WorkFn& work, int runs, cudaStream_t stream,
                               ActivityPassResult* out);

// Times `runs` back-to-back launches with CUDA events while tracing is on (records are
// counted, then discarded): compared with pass 1 it gives the tracing overhead.
engine::Expected<LatencyStats> RunOverheadPass(const WorkFn& work, int warmup, int runs,
                                               cudaStream_t stream);

}  // namespace stof::profiler::detail
