// What one measurement produces: plain, CUDA-free structs filled by a Profiler (profiler.h)
// and written by the exporters (profile_export.h). Read by the CLI (`stof profile`), the tests,
// and later the tuner and the studio, which may open a profile measured on another machine.
// Invariants: times are microseconds unless a name says _ns; byte and FLOP counts are doubles
// (they exceed 2^53 only far beyond any real run); a part that could not be measured says so in
// Availability with a reason and leaves its data empty, never half-filled.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stof::profiler {

// The metric list used when MeasureOptions::metrics is empty. kTensorPipeAlias stands for the
// tensor-pipe utilisation metric of the device at hand (its real name differs by chip); the
// CUPTI layer resolves it and reports the resolved name with the alias beside it.
inline constexpr const char* kTensorPipeAlias = "tensor_pipe";
std::vector<std::string> DefaultMetricNames();

// Auto: CUPTI makes one range per kernel and replays each kernel itself (kernel replay), so
// `work` runs once in the counter pass. User: one range around the whole `work` call; CUPTI
// needs `work` to run once per counter pass (user replay), so `work` must be re-runnable and
// give the same result each time (see docs/profiler.md).
enum class RangeMode { kAuto, kUser };
const char* RangeModeName(RangeMode m);  // "auto" / "user"

struct MeasureOptions {
  std::string label;             // what is measured, e.g. "copy 268435456 B"; copied to the result
  int warmup = 5;                // pass 1: untimed launches before the timed ones
  int runs = 50;                 // pass 1: timed launches (median reported); >= 1
  int activity_runs = 5;         // pass 2: launches traced by the Activity API; >= 1
  bool measure_overhead = false; // pass 2b: time `runs` launches again with tracing on
  std::vector<std::string> metrics;  // pass 3: empty = DefaultMetricNames()
  RangeMode range_mode = RangeMode::kAuto;
  int max_ranges = 64;           // auto range: kernels profiled per counter pass; more are dropped
  int max_passes = 64;           // user replay: give up if CUPTI wants more passes than this
  // Forced unavailability (tests, or to skip a slow pass). The environment variable
  // STOF_PROFILER_DISABLE=activity,range (or "cupti" for both) does the same.
  bool disable_activity = false;
  bool disable_range = false;
  // For the summary. flop_count and min_bytes are what the work must do (0 = unknown); the
  // peaks come from the caller (kernels::QueryDeviceSpec) since profiler/ does not own specs.
  double flop_count = 0;
  double min_bytes = 0;
  double peak_dram_bytes_per_s = 0;
  double peak_flops_per_s = 0;
  bool operator==(const MeasureOptions&) const = default;
};

// One kernel execution seen by the Activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
struct KernelRecord {
  std::string name;          // demangled
  std::string mangled_name;  // as CUPTI reported it (equal to name for extern "C" kernels)
  int run = 0;               // which traced launch of `work` (0-based)
  uint64_t start_ns = 0, end_ns = 0;  // CUPTI timestamps (same clock as cuptiGetTimestamp)
  std::array<int, 3> grid{0, 0, 0}, block{0, 0, 0};
  int registers_per_thread = 0;
  int64_t static_smem_bytes = 0, dynamic_smem_bytes = 0;
  uint32_t device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;

  double DurationUs() const { return end_ns > start_ns ? (end_ns - start_ns) * 1e-3 : 0.0; }
  bool operator==(const KernelRecord&) const = default;
};

// One requested counter metric: whether this chip can collect it, and its unit.
struct MetricInfo {
  std::string name;         // resolved CUPTI name, e.g. "dram__bytes_read.sum"
  std::string alias;        // "tensor_pipe" when it stands for an alias, else empty
  bool available = false;
  std::string unit;         // CUPTI's dimension unit: "byte", "nanosecond", "percent", ...
  std::string description;  // CUPTI's one-line description
  std::string why_not;      // set when !available
  bool operator==(const MetricInfo&) const = default;
};

struct MetricValue {
  std::string name;
  double value = 0;  // NaN when CUPTI could not evaluate it for this range
  std::string unit;
  bool operator==(const MetricValue& o) const;  // NaN equals NaN here (round trips)
};

// One counter range: a kernel (auto range) or the whole `work` call (user range).
struct RangeRecord {
  int index = 0;
  std::string name;         // CUPTI's range name: "0", "1", ... (auto) or the label (user)
  std::string kernel_name;  // auto range: the kernel at this position in an activity run, when
                            // the counts agree (best effort); empty otherwise
  std::vector<MetricValue> metrics;

  std::optional<double> Find(const std::string& metric) const;
  bool operator==(const RangeRecord&) const = default;
};

struct Availability {
  bool events = false;    // pass 1: CUDA-event latency
  bool activity = false;  // pass 2: CUPTI Activity API kernel records
  bool range = false;     // pass 3: CUPTI Range Profiler counters
  std::string events_why_not, activity_why_not, range_why_not;
  bool operator==(const Availability&) const = default;
};

struct LatencyStats {
  int runs = 0;
  double median_us = 0, min_us = 0, max_us = 0, mean_us = 0;
  double wall_us_per_run = 0;      // host wall time of the timed loop (launch to sync) / runs
  std::vector<double> samples_us;  // every timed run, in order
  bool operator==(const LatencyStats&) const = default;
};

struct DeviceInfo {
  int index = -1;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string chip;  // CUPTI's chip name, "GH100" (empty when CUPTI could not say)
  int cc_major = 0, cc_minor = 0;
  bool operator==(const DeviceInfo&) const = default;
};

// Pass 2b: CUDA-event latency of the same back-to-back launches with and without tracing.
struct ActivityOverhead {
  bool measured = false;
  double events_median_us_off = 0, events_median_us_on = 0;  // GPU-side, per launch
  double wall_us_per_run_off = 0, wall_us_per_run_on = 0;    // host-side, per launch
  double EventsPct() const;  // 100 * (on / off - 1)
  double WallPct() const;
  bool operator==(const ActivityOverhead&) const = default;
};

// Derived numbers. Latency is the CUDA-event median (pass 1) whenever events are available;
// the activity median (pass 2) is reported beside it as a cross-check, never used instead.
struct ProfileSummary {
  std::string latency_source;                 // "cuda_events", "activity" or "" (none)
  std::optional<double> latency_us;
  std::optional<double> activity_latency_us;  // median over activity runs of the GPU span
  std::optional<double> activity_vs_events;   // activity / events - 1 (0.01 = 1 % slower)
  int kernels_per_run = 0;
  std::optional<double> kernel_time_us;       // sum of kernel durations, median over runs
  std::optional<double> dram_bytes_read, dram_bytes_write, dram_bytes, lts_bytes;
  std::optional<double> counter_gpu_time_us;  // gpu__time_duration.sum over ranges (under replay)
  std::optional<double> achieved_bytes_per_s; // dram_bytes / latency
  std::optional<double> flop_count;           // as given by the caller
  std::optional<double> achieved_flops_per_s; // flop_count / latency
  std::optional<double> floor_us;             // max(bytes / peak bandwidth, flops / peak rate)
  std::string floor_bytes_source;             // "caller" (min_bytes), "counters" or ""
  std::optional<double> ratio_to_floor;       // latency / floor (>= 1 up to measurement noise)
  std::optional<double> bandwidth_fraction_of_peak, flops_fraction_of_peak;
  bool operator==(const ProfileSummary&) const = default;
};

struct ProfileResult {
  static constexpr int kSchemaVersion = 1;
  std::string profiler;  // "cupti" or "null"
  std::string label;
  DeviceInfo device;
  MeasureOptions options;        // as used (metrics expanded to the requested list)
  Availability availability;
  LatencyStats latency;          // pass 1 (valid when availability.events)
  // pass 2
  int activity_runs = 0;
  std::vector<double> activity_run_us;  // GPU span of each traced run (first start to last end)
  std::vector<KernelRecord> kernels;
  uint64_t dropped_records = 0;
  // pass 3
  std::string range_mode;   // "auto" / "user"
  std::string replay_mode;  // "kernel" / "user"
  int counter_passes = 0;
  uint64_t ranges_dropped = 0;
  std::vector<MetricInfo> metrics;
  std::vector<RangeRecord> ranges;

  ActivityOverhead overhead;
  ProfileSummary summary;
  std::vector<std::string> notes;  // warnings that did not make a part unavailable

  const MetricInfo* FindMetric(const std::string& name) const;
  // Sum of one metric over all ranges; nullopt when unavailable or no range has it.
  std::optional<double> SumMetric(const std::string& name) const;
  bool operator==(const ProfileResult&) const = default;
};

// Fills result->summary from the rest of the result (pure arithmetic; CUDA-free).
void ComputeSummary(ProfileResult* result);

// Median of a non-empty list (mean of the middle two for even sizes); 0 for an empty one.
double Median(std::vector<double> values);

}  // namespace stof::profiler
