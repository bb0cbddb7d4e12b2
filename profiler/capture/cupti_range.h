// Internal to profiler/: pass 3 of a measurement, counters from the CUPTI Range Profiler
// (cupti_range_profiler.h) evaluated by the CUPTI profiler host API (cupti_profiler_host.h).
// Called by cupti_profiler.cpp; ResolveMetrics is also used by the CPU tests, since the host
// API works from a chip name alone, without a GPU. Includes CUPTI headers.
// Invariants: the range profiler is enabled only inside RunRangePass and disabled on every
// path out; every requested metric comes back in the MetricInfo list, available or with the
// reason it is not, and the available ones keep their requested order.
#pragma once

#include <cuda_runtime.h>
#include <cupti_profiler_host.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "profiler/model/profile_result.h"
#include "profiler/profiler.h"

namespace stof::profiler::detail {

// Metric names tried, in order, for kTensorPipeAlias: the first the chip knows wins. On Hopper
// the HMMA pipe counter also counts HGMMA (wgmma) and QGMMA; newer chips only have the
// generic tensor pipe counter.
const std::vector<std::string>& TensorPipeCandidates();

// The C strings of `names` (valid while `names` lives), as the CUPTI calls take metric names.
std::vector<const char*> CStrings(const std::vector<std::string>& names);

// A CUPTI profiler host object (metric database of one chip); deinitialised on destruction.
class HostObject {
 public:
  static engine::Expected<std::unique_ptr<HostObject>> Create(
      const std::string& chip, const std::vector<uint8_t>& counter_availability);
  ~HostObject();
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* Get() const { return m_object; }

 private:
  HostObject() = default;
  CUpti_Profiler_Host_Object* m_object = nullptr;
};

struct MetricConfig {
  std::vector<MetricInfo> infos;      // one per requested name (aliases resolved)
  std::vector<std::string> names;     // the available ones, in order: what is collected
  std::vector<uint8_t> config_image;  // for cuptiRangeProfilerSetConfig (empty if none)
  int passes = 0;                     // replay passes CUPTI needs for `names`
  std::unique_ptr<HostObject> host;   // configured with `names`; evaluates the counter data
};

// Host side only: checks each requested metric on `chip` (properties, then whether the config
// accepts it), keeps the good ones and builds the config image. `counter_availability` may be
// empty (no device at hand). Fails only when the chip itself is unknown to CUPTI.
engine::Expected<MetricConfig> ResolveMetrics(const std::string& chip,
                                              const std::vector<uint8_t>& counter_availability,
                                              const std::vector<std::string>& requested);

struct RangePassResult {
  std::string chip;
  std::vector<MetricInfo> metrics;  // filled as soon as known, also when the pass then fails
  std::vector<RangeRecord> ranges;
  uint64_t ranges_dropped = 0;
  int passes = 0;                   // counter passes actually run
  std::vector<std::string> notes;
};

// Collects options.metrics (aliases allowed) over `work` on `stream` of CUDA device `device`:
// auto range + kernel replay (work runs once; CUPTI replays each kernel, restoring memory) or
// user range + user replay (work runs once per pass, between Push/PopRange).
engine::Status RunRangePass(const WorkFn& work, const MeasureOptions& options, int device,
                            cudaStream_t stream, RangePassResult* out);

}  // namespace stof::profiler::detail
