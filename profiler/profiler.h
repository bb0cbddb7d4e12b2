// Public, CUDA-free interface of the measurement layer. A Profiler measures a callable that
// launches work on the opaque stream it is given (a cudaStream_t as void*) in separate passes:
//   1. latency: warm-up, then `runs` launches timed one by one with CUDA events (the median is
//      THE latency used for tuning);
//   2. activity: `activity_runs` launches traced with the CUPTI Activity API (kernel records;
//      their GPU span is a cross-check of pass 1, never mixed into it);
//   3. counters: the CUPTI Range Profiler with replay (never timed).
// Used by `stof profile`, the GPU tests and later the tuner. See docs/profiler.md.
// Invariants: Measure never exits or aborts; a pass that cannot run (no GPU, no CUPTI, no
// permission, unknown metric) is reported in ProfileResult::availability with the reason and
// the other passes still run. It returns an error only for bad options or when `work` fails.
// `work` must be re-runnable: it is called warmup + runs + activity_runs times, plus once per
// counter pass in user-range mode. Calls to Measure are serialised (CUPTI state is global).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/core/status.h"
#include "profiler/model/profile_result.h"

namespace stof::profiler {

using WorkFn = std::function<engine::Status(void* stream)>;

class Profiler {
 public:
  virtual ~Profiler() = default;
  virtual std::string Name() const = 0;  // "cupti" or "null"
  virtual engine::Expected<ProfileResult> Measure(const WorkFn& work,
                                                  const MeasureOptions& options) = 0;
};

// The CUPTI profiler in a CUDA build, else the NullProfiler.
std::unique_ptr<Profiler> CreateProfiler();

// Measures nothing and never calls `work`: every part is unavailable, with `why` (default:
// "this build has no CUDA (STOF_CUDA=OFF)"). Builds without CUDA.
std::unique_ptr<Profiler> CreateNullProfiler(std::string why = "");

// True when this build has the CUDA/CUPTI profiler.
bool BuildHasCupti();

// Launches `work(stream)` `warmup` times, then times `runs` launches one by one with CUDA
// events on a fresh stream. Fails (with the CUDA call and its error) when there is no GPU or
// `work` fails; runs must be >= 1. Without CUDA it fails saying so.
engine::Expected<LatencyStats> TimeWithCudaEvents(const WorkFn& work, int warmup, int runs);

// "activity,range" / "cupti" / "" -> which CUPTI passes STOF_PROFILER_DISABLE turns off.
// Unknown words are an error naming them.
struct DisableSpec {
  bool activity = false;
  bool range = false;
};
engine::Expected<DisableSpec> ParseDisableSpec(const std::string& text);

}  // namespace stof::profiler
