// CuptiProfiler (profiler.h): runs the passes of one measurement in order on one stream of the
// current device, each in isolation: 1 latency by CUDA events (no CUPTI enabled), 2 activity
// trace (+2b overhead, optional), 3 counters with replay. Only pass 1's median is "the latency";
// pass 2's GPU span is compared with it (activity_vs_events) and pass 3 is never timed.
// Every CUPTI or CUDA failure of a pass becomes that pass's why_not; only a failure of `work`
// itself or bad options end Measure with an error. Also CreateProfiler / BuildHasCupti of a
// CUDA build.
#include <cuda_runtime.h>

#include <mutex>
#include <string>

#include "engine/device/no_gpu.h"
#include "profiler/capture/cuda_timing.h"
#include "profiler/capture/cupti_activity.h"
#include "profiler/capture/cupti_check.h"
#include "profiler/capture/cupti_range.h"
#include "profiler/measure_internal.h"
#include "profiler/profiler.h"

namespace stof::profiler {

namespace {

engine::Status ValidateOptions(const MeasureOptions& o) {
  auto bad = [](const char* field, int v, const char* want) {
    return engine::Error{std::string("MeasureOptions.") + field + ": must be " + want + ", got " +
                         std::to_string(v)};
  };
  if (o.runs < 1) return bad("runs", o.runs, ">= 1");
  if (o.warmup < 0) return bad("warmup", o.warmup, ">= 0");
  if (o.activity_runs < 1) return bad("activity_runs", o.activity_runs, ">= 1");
  if (o.max_ranges < 1) return bad("max_ranges", o.max_ranges, ">= 1");
  if (o.max_passes < 1) return bad("max_passes", o.max_passes, ">= 1");
  return engine::Status::Ok();
}

// Owns the measurement's stream; drains it before destroying it on every path out.
class StreamGuard {
 public:
  ~StreamGuard() {
    if (m_stream) {
      (void)cudaStreamSynchronize(m_stream);
      (void)cudaStreamDestroy(m_stream);
    }
  }
  cudaError_t Create() { return cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking); }
  cudaStream_t Get() const { return m_stream; }

 private:
  cudaStream_t m_stream = nullptr;
};

// The passes a measurement may not run, and why: an option names itself, else the environment
// variable STOF_PROFILER_DISABLE; empty: the pass runs.
struct ForcedOff {
  std::string activity, range;
};

ForcedOff ForcedOffPasses(const MeasureOptions& options, ProfileResult* r) {
  std::string env_note;
  const DisableSpec env = detail::DisableSpecFromEnv(&env_note);
  if (!env_note.empty()) r->notes.push_back(env_note);
  ForcedOff off;
  off.activity = options.disable_activity ? "disabled by MeasureOptions.disable_activity"
                 : env.activity           ? "disabled by STOF_PROFILER_DISABLE"
                                          : "";
  off.range = options.disable_range ? "disabled by MeasureOptions.disable_range"
              : env.range           ? "disabled by STOF_PROFILER_DISABLE"
                                    : "";
  return off;
}

// Every pass unavailable for one reason (no GPU, no stream), unless forced off already.
void NoPassRuns(const std::string& why, const ForcedOff& off, Availability* av) {
  av->events_why_not = why;
  av->activity_why_not = off.activity.empty() ? why : off.activity;
  av->range_why_not = off.range.empty() ? why : off.range;
}

// Empty when a GPU is there; else why not, in the words of engine::NoGpuReason.
std::string NoGpu() {
  engine::CudaProbe probe;
  const cudaError_t ce = cudaGetDeviceCount(&probe.device_count);
  if (ce == cudaSuccess && probe.device_count > 0) return "";
  (void)cudaGetLastError();  // clear the error so later CUDA calls see a clean state
  if (ce != cudaSuccess) {
    probe.error = static_cast<int>(ce);
    probe.error_name = cudaGetErrorName(ce);
    probe.error_text = cudaGetErrorString(ce);
    (void)cudaDriverGetVersion(&probe.driver_version);  // 0: no driver installed
    (void)cudaRuntimeGetVersion(&probe.runtime_version);
  }
  return "no GPU: " + engine::NoGpuReason(probe);
}

// The current device's index, name and compute capability (left empty when CUDA refuses).
int DescribeDevice(DeviceInfo* info) {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    info->index = device;
    info->name = prop.name;
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
  }
  return device;
}

// `work` as the passes call it, remembering its first failure: that failure ends the
// measurement with work's own error, every other failure is a pass's why_not.
class TrackedWork {
 public:
  explicit TrackedWork(const WorkFn& work)
      : m_fn([this, &work](void* s) {
          engine::Status st = work(s);
          if (!st.IsOk() && m_failure.IsOk()) m_failure = st;
          return st;
        }) {}
  TrackedWork(const TrackedWork&) = delete;  // m_fn holds `this`
  TrackedWork& operator=(const TrackedWork&) = delete;
  const WorkFn& Fn() const { return m_fn; }
  engine::Status Failure() const {
    if (!m_failure.IsOk()) return engine::Error{m_failure.Message()};
    return engine::Status::Ok();
  }

 private:
  engine::Status m_failure;
  WorkFn m_fn;
};

// Pass 2 (activity trace) and 2b (tracing overhead against pass 1's latency) into `r`.
engine::Status ActivityPass(const TrackedWork& work, const MeasureOptions& options,
                            cudaStream_t stream, ProfileResult* r) {
  Availability& av = r->availability;
  detail::ActivityPassResult a;
  engine::Status s = detail::RunActivityPass(work.Fn(), options.activity_runs, stream, &a);
  STOF_RETURN_IF_ERROR(work.Failure());
  if (!s.IsOk()) {
    av.activity_why_not = detail::WithHint(s.Message());
    return engine::Status::Ok();
  }
  av.activity = true;
  r->activity_runs = options.activity_runs;
  r->activity_run_us = std::move(a.run_us);
  r->kernels = std::move(a.kernels);
  r->dropped_records = a.dropped_records;
  if (a.dropped_records)
    r->notes.push_back("activity: CUPTI dropped " + std::to_string(a.dropped_records) +
                       " records (buffers full)");
  if (a.foreign_records)
    r->notes.push_back("activity: ignored " + std::to_string(a.foreign_records) +
                       " kernel records outside the traced runs (other threads' work)");
  if (!a.by_correlation)
    r->notes.push_back("activity: runs told apart by timestamps (CUPTI refused external "
                       "correlation); in a long-lived process short runs may lose kernels");
  if (r->kernels.empty())
    r->notes.push_back("activity: no kernel records: `work` launched no kernels (copies and "
                       "memsets are not traced)");
  if (!options.measure_overhead || !av.events) return engine::Status::Ok();
  auto on = detail::RunOverheadPass(work.Fn(), options.warmup, options.runs, stream);
  STOF_RETURN_IF_ERROR(work.Failure());
  if (!on.IsOk()) {
    r->notes.push_back("overhead: " + on.Message());
    return engine::Status::Ok();
  }
  r->overhead.measured = true;
  r->overhead.events_median_us_off = r->latency.median_us;
  r->overhead.wall_us_per_run_off = r->latency.wall_us_per_run;
  r->overhead.events_median_us_on = on->median_us;
  r->overhead.wall_us_per_run_on = on->wall_us_per_run;
  return engine::Status::Ok();
}

// Pass 3 (counters, with replay) into `r`; with the auto range, ranges matched to the
// activity trace's kernels and the kernels CUPTI left unprofiled counted.
engine::Status RangePass(const TrackedWork& work, int device, cudaStream_t stream,
                         ProfileResult* r) {
  const MeasureOptions& options = r->options;
  Availability& av = r->availability;
  detail::RangePassResult rp;
  engine::Status s = detail::RunRangePass(work.Fn(), options, device, stream, &rp);
  STOF_RETURN_IF_ERROR(work.Failure());
  r->device.chip = rp.chip;
  r->metrics = std::move(rp.metrics);
  r->notes.insert(r->notes.end(), rp.notes.begin(), rp.notes.end());
  if (!s.IsOk()) {
    av.range_why_not = detail::WithHint(s.Message());
    return engine::Status::Ok();
  }
  av.range = true;
  r->ranges = std::move(rp.ranges);
  r->ranges_dropped = rp.ranges_dropped;
  r->counter_passes = rp.passes;
  if (options.range_mode != RangeMode::kUser) {
    detail::MatchRangesToKernels(&r->ranges, r->kernels);
    // CUPTI silently stops profiling kernels past maxRangesPerPass (seen on an H200,
    // CUDA 13.0): count them from the activity trace when there is one.
    const uint64_t missing = detail::UnprofiledKernels(r->ranges.size(), r->kernels);
    if (missing > r->ranges_dropped) r->ranges_dropped = missing;
    if (!av.activity && r->ranges.size() >= static_cast<size_t>(options.max_ranges))
      r->notes.push_back("counters: " + std::to_string(r->ranges.size()) +
                         " ranges = max_ranges: kernels past the first " +
                         std::to_string(options.max_ranges) +
                         ", if any, were not profiled (no activity trace to tell)");
  }
  if (r->ranges_dropped)
    r->notes.push_back("counters: " + std::to_string(r->ranges_dropped) +
                       " ranges dropped: `work` launched more kernels than max_ranges (" +
                       std::to_string(options.max_ranges) +
                       "); totals cover only the first ones; raise max_ranges or use the "
                       "user range");
  if (r->ranges.empty())
    r->notes.push_back("counters: CUPTI returned no ranges (no kernel ran in the counter pass)");
  return engine::Status::Ok();
}

class CuptiProfiler final : public Profiler {
 public:
  std::string Name() const override { return "cupti"; }
  engine::Expected<ProfileResult> Measure(const WorkFn& work,
                                          const MeasureOptions& options) override;
};

engine::Expected<ProfileResult> CuptiProfiler::Measure(const WorkFn& work,
                                                       const MeasureOptions& options) {
  STOF_RETURN_IF_ERROR(ValidateOptions(options));
  if (!work) return engine::Error{"profiler: work: empty callable"};
  // CUPTI's activity and profiler state is per process: one measurement at a time.
  static std::mutex measure_mutex;
  std::lock_guard<std::mutex> lock(measure_mutex);

  ProfileResult r;
  r.profiler = Name();
  r.label = options.label;
  r.options = options;
  if (r.options.metrics.empty()) r.options.metrics = DefaultMetricNames();
  r.range_mode = RangeModeName(options.range_mode);
  r.replay_mode = options.range_mode == RangeMode::kUser ? "user" : "kernel";
  Availability& av = r.availability;
  const ForcedOff off = ForcedOffPasses(options, &r);

  if (const std::string why = NoGpu(); !why.empty()) {
    NoPassRuns(why, off, &av);
    ComputeSummary(&r);
    return r;
  }
  const int device = DescribeDevice(&r.device);
  StreamGuard stream;
  if (const cudaError_t se = stream.Create(); se != cudaSuccess) {
    (void)cudaGetLastError();
    NoPassRuns(std::string("cudaStreamCreateWithFlags: ") + cudaGetErrorName(se) + " (" +
                   cudaGetErrorString(se) + ")",
               off, &av);
    ComputeSummary(&r);
    return r;
  }
  const TrackedWork tracked(work);

  // Pass 1: latency (CUDA events, no CUPTI).
  auto latency = detail::TimeOnStream(tracked.Fn(), options.warmup, options.runs, stream.Get());
  STOF_RETURN_IF_ERROR(tracked.Failure());
  if (latency.IsOk()) {
    r.latency = std::move(*latency);
    av.events = true;
  } else {
    av.events_why_not = latency.Message();
  }
  // Pass 2: activity trace; 2b: tracing overhead against pass 1.
  if (!off.activity.empty())
    av.activity_why_not = off.activity;
  else
    STOF_RETURN_IF_ERROR(ActivityPass(tracked, options, stream.Get(), &r));
  // Pass 3: counters (replay).
  if (!off.range.empty())
    av.range_why_not = off.range;
  else
    STOF_RETURN_IF_ERROR(RangePass(tracked, device, stream.Get(), &r));
  ComputeSummary(&r);
  return r;
}

}  // namespace

std::unique_ptr<Profiler> CreateProfiler() { return std::make_unique<CuptiProfiler>(); }
bool BuildHasCupti() { return true; }

}  // namespace stof::profiler
