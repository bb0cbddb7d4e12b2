// CUDA-free parts of the measurement layer (profile_result.h, measure_internal.h): default
// metrics, the summary arithmetic, run bookkeeping and the STOF_PROFILER_DISABLE switch.
// Always built, so the CPU tests and the CUDA-off build share them with the CUPTI profiler.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "profiler/measure_internal.h"
#include "profiler/model/profile_result.h"
#include "profiler/profiler.h"

namespace stof::profiler {

std::vector<std::string> DefaultMetricNames() {
  return {"dram__bytes_read.sum",
          "dram__bytes_write.sum",
          "lts__t_bytes.sum",
          "gpu__time_duration.sum",
          "sm__throughput.avg.pct_of_peak_sustained_elapsed",
          kTensorPipeAlias};
}

const char* RangeModeName(RangeMode m) { return m == RangeMode::kUser ? "user" : "auto"; }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool MetricValue::operator==(const MetricValue& o) const {
  const bool same_value = (std::isnan(value) && std::isnan(o.value)) || value == o.value;
  return name == o.name && unit == o.unit && same_value;
}

std::optional<double> RangeRecord::Find(const std::string& metric) const {
  for (const MetricValue& m : metrics)
    if (m.name == metric && std::isfinite(m.value)) return m.value;
  return std::nullopt;
}

double ActivityOverhead::EventsPct() const {
  return events_median_us_off > 0 ? 100.0 * (events_median_us_on / events_median_us_off - 1) : 0;
}
double ActivityOverhead::WallPct() const {
  return wall_us_per_run_off > 0 ? 100.0 * (wall_us_per_run_on / wall_us_per_run_off - 1) : 0;
}

const MetricInfo* ProfileResult::FindMetric(const std::string& name) const {
  for (const MetricInfo& m : metrics)
    if (m.name == name || (!m.alias.empty() && m.alias == name)) return &m;
  return nullptr;
}

std::optional<double> ProfileResult::SumMetric(const std::string& name) const {
  const MetricInfo* info = FindMetric(name);
  if (!availability.range || !info || !info->available) return std::nullopt;
  std::optional<double> sum;
  for (const RangeRecord& r : ranges) {
    if (auto v = r.Find(info->name)) sum = sum.value_or(0) + *v;
  }
  return sum;
}

void ComputeSummary(ProfileResult* r) {
  ProfileSummary s;
  const MeasureOptions& o = r->options;
  if (r->availability.events && r->latency.runs > 0) {
    s.latency_us = r->latency.median_us;
    s.latency_source = "cuda_events";
  }
  // Runs without kernels (work that only copies, or a record outside its run) have span 0
  // and say nothing about latency.
  std::vector<double> spans;
  for (double us : r->activity_run_us)
    if (us > 0) spans.push_back(us);
  if (r->availability.activity && !spans.empty()) {
    s.activity_latency_us = Median(spans);
    if (!s.latency_us) {
      s.latency_us = s.activity_latency_us;
      s.latency_source = "activity";
    } else if (*s.latency_us > 0) {
      s.activity_vs_events = *s.activity_latency_us / *s.latency_us - 1;
    }
    const int runs = std::max(r->activity_runs, 1);
    s.kernels_per_run = static_cast<int>(r->kernels.size() / static_cast<size_t>(runs));
    s.kernel_time_us = Median(detail::RunKernelTimesUs(r->kernels, runs));
  }
  s.dram_bytes_read = r->SumMetric("dram__bytes_read.sum");
  s.dram_bytes_write = r->SumMetric("dram__bytes_write.sum");
  if (s.dram_bytes_read && s.dram_bytes_write)
    s.dram_bytes = *s.dram_bytes_read + *s.dram_bytes_write;
  s.lts_bytes = r->SumMetric("lts__t_bytes.sum");
  if (auto ns = r->SumMetric("gpu__time_duration.sum")) s.counter_gpu_time_us = *ns * 1e-3;

  const bool have_latency = s.latency_us && *s.latency_us > 0;
  const double seconds = have_latency ? *s.latency_us * 1e-6 : 0;
  if (have_latency && s.dram_bytes) s.achieved_bytes_per_s = *s.dram_bytes / seconds;
  if (o.flop_count > 0) {
    s.flop_count = o.flop_count;
    if (have_latency) s.achieved_flops_per_s = o.flop_count / seconds;
  }
  // Floor: the bytes that must move (the caller's count, else what the counters saw) at peak
  // bandwidth, or the FLOPs at the peak tensor rate, whichever takes longer.
  double floor_s = 0;
  if (o.peak_dram_bytes_per_s > 0) {
    if (o.min_bytes > 0) {
      floor_s = o.min_bytes / o.peak_dram_bytes_per_s;
      s.floor_bytes_source = "caller";
    } else if (s.dram_bytes) {
      floor_s = *s.dram_bytes / o.peak_dram_bytes_per_s;
      s.floor_bytes_source = "counters";
    }
  }
  if (o.flop_count > 0 && o.peak_flops_per_s > 0)
    floor_s = std::max(floor_s, o.flop_count / o.peak_flops_per_s);
  if (floor_s > 0) {
    s.floor_us = floor_s * 1e6;
    if (have_latency) s.ratio_to_floor = seconds / floor_s;
  }
  if (s.achieved_bytes_per_s && o.peak_dram_bytes_per_s > 0)
    s.bandwidth_fraction_of_peak = *s.achieved_bytes_per_s / o.peak_dram_bytes_per_s;
  if (s.achieved_flops_per_s && o.peak_flops_per_s > 0)
    s.flops_fraction_of_peak = *s.achieved_flops_per_s / o.peak_flops_per_s;
  r->summary = std::move(s);
}

engine::Expected<DisableSpec> ParseDisableSpec(const std::string& text) {
  DisableSpec d;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    // Trim blanks so "activity, range" works.
    const size_t b = word.find_first_not_of(" \t");
    const size_t e = word.find_last_not_of(" \t");
    word = b == std::string::npos ? "" : word.substr(b, e - b + 1);
    if (word.empty()) continue;
    if (word == "activity") {
      d.activity = true;
    } else if (word == "range" || word == "counters") {
      d.range = true;
    } else if (word == "cupti" || word == "all") {
      d.activity = d.range = true;
    } else {
      return engine::Error{"STOF_PROFILER_DISABLE: unknown part '" + word +
                           "' (expected activity, range, cupti or all)"};
    }
  }
  return d;
}

namespace detail {

namespace {
// Keeps the records `run_of` gives a run (>= 0), sets it, sorts by (run, start, correlation
// id) and returns how many were dropped.
template <typename RunOf>
size_t KeepRuns(std::vector<KernelRecord>* kernels, RunOf run_of) {
  std::vector<KernelRecord> kept;
  kept.reserve(kernels->size());
  for (KernelRecord& k : *kernels) {
    const int run = run_of(k);
    if (run < 0) continue;
    k.run = run;
    kept.push_back(std::move(k));
  }
  const size_t dropped = kernels->size() - kept.size();
  std::sort(kept.begin(), kept.end(), [](const KernelRecord& a, const KernelRecord& b) {
    if (a.run != b.run) return a.run < b.run;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.correlation_id < b.correlation_id;
  });
  *kernels = std::move(kept);
  return dropped;
}
}  // namespace

size_t AssignRuns(std::vector<KernelRecord>* kernels, const std::vector<uint64_t>& boundaries) {
  return KeepRuns(kernels, [&](const KernelRecord& k) {
    // upper_bound gives the first boundary > start; the run is the one before it.
    auto it = std::upper_bound(boundaries.begin(), boundaries.end(), k.start_ns);
    if (it == boundaries.begin() || it == boundaries.end()) return -1;
    return static_cast<int>(it - boundaries.begin()) - 1;
  });
}

size_t AssignRunsByCorrelation(std::vector<KernelRecord>* kernels,
                               const std::unordered_map<uint32_t, int>& run_of_correlation) {
  return KeepRuns(kernels, [&](const KernelRecord& k) {
    const auto it = run_of_correlation.find(k.correlation_id);
    return it == run_of_correlation.end() ? -1 : it->second;
  });
}

std::vector<double> RunSpansUs(const std::vector<KernelRecord>& kernels, int runs) {
  std::vector<uint64_t> first(static_cast<size_t>(std::max(runs, 0)),
                              std::numeric_limits<uint64_t>::max());
  std::vector<uint64_t> last(first.size(), 0);
  for (const KernelRecord& k : kernels) {
    if (k.run < 0 || k.run >= runs) continue;
    first[k.run] = std::min(first[k.run], k.start_ns);
    last[k.run] = std::max(last[k.run], k.end_ns);
  }
  std::vector<double> spans(first.size(), 0.0);
  for (size_t i = 0; i < spans.size(); ++i)
    if (last[i] > first[i]) spans[i] = (last[i] - first[i]) * 1e-3;
  return spans;
}

std::vector<double> RunKernelTimesUs(const std::vector<KernelRecord>& kernels, int runs) {
  std::vector<double> t(static_cast<size_t>(std::max(runs, 0)), 0.0);
  for (const KernelRecord& k : kernels)
    if (k.run >= 0 && k.run < runs) t[k.run] += k.DurationUs();
  return t;
}

void MatchRangesToKernels(std::vector<RangeRecord>* ranges,
                          const std::vector<KernelRecord>& kernels) {
  std::vector<const KernelRecord*> run0;
  for (const KernelRecord& k : kernels)
    if (k.run == 0) run0.push_back(&k);
  if (run0.size() != ranges->size()) return;
  for (size_t i = 0; i < run0.size(); ++i) (*ranges)[i].kernel_name = run0[i]->name;
}

uint64_t UnprofiledKernels(size_t ranges, const std::vector<KernelRecord>& kernels) {
  size_t run0 = 0;
  for (const KernelRecord& k : kernels) run0 += k.run == 0;
  return run0 > ranges ? run0 - ranges : 0;
}

DisableSpec DisableSpecFromEnv(std::string* note) {
  const char* env = std::getenv("STOF_PROFILER_DISABLE");
  if (!env) return {};
  auto spec = ParseDisableSpec(env);
  if (!spec.IsOk()) {
    if (note) *note = spec.Message() + "; ignored";
    return {};
  }
  return *spec;
}

std::string WithHint(const std::string& message) {
  if (message.find("INSUFFICIENT_PRIVILEGES") != std::string::npos)
    return message +
           "; GPU performance counters are restricted to administrators on this system "
           "(driver option NVreg_RestrictProfilingToAdminUsers=1): run as root or see "
           "https://developer.nvidia.com/ERR_NVGPUCTRPERM";
  if (message.find("MULTIPLE_SUBSCRIBERS") != std::string::npos)
    return message + "; another CUPTI client (Nsight Systems/Compute, a framework profiler) is "
                     "attached to this process";
  return message;
}

}  // namespace detail

}  // namespace stof::profiler
