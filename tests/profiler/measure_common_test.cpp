// CPU: the bookkeeping of the profiler that needs no GPU: the summary arithmetic (latency
// source, bandwidth, FLOP/s, floor), splitting activity records into runs by CUPTI timestamps
// and by external correlation ids (immune to clock drift),
// per-run spans, naming auto ranges after kernels, and the STOF_PROFILER_DISABLE parser.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "profiler/measure_internal.h"
#include "profiler/model/profile_result.h"
#include "profiler/profiler.h"

namespace sp = stof::profiler;

namespace {
sp::KernelRecord Kernel(const std::string& name, uint64_t start, uint64_t end, uint32_t corr = 0) {
  sp::KernelRecord k;
  k.name = name;
  k.mangled_name = name;
  k.start_ns = start;
  k.end_ns = end;
  k.correlation_id = corr;
  return k;
}

sp::MetricInfo Metric(const std::string& name, const std::string& unit) {
  sp::MetricInfo m;
  m.name = name;
  m.available = true;
  m.unit = unit;
  return m;
}
}  // namespace

TEST(ProfilerMedian, OddEvenEmpty) {
  EXPECT_EQ(sp::Median({3, 1, 2}), 2);
  EXPECT_EQ(sp::Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(sp::Median({}), 0);
}

TEST(ProfilerSummary, CopyCalibrationNumbers) {
  // A 256 MiB copy at 200 us on a 3.35 TB/s device, counters over two kernels.
  sp::ProfileResult r;
  r.availability.events = r.availability.activity = r.availability.range = true;
  r.latency.runs = 3;
  r.latency.median_us = 200;
  r.activity_runs = 2;
  r.activity_run_us = {196, 198};
  r.kernels = {Kernel("copy", 0, 150'000), Kernel("tail", 150'000, 196'000)};
  r.kernels[1].run = 0;
  r.kernels.push_back(Kernel("copy", 1'000'000, 1'198'000));
  r.kernels.back().run = 1;
  r.kernels.push_back(Kernel("tail", 1'198'000, 1'198'000));
  r.kernels.back().run = 1;
  r.metrics = {Metric("dram__bytes_read.sum", "byte"), Metric("dram__bytes_write.sum", "byte"),
               Metric("gpu__time_duration.sum", "nanosecond")};
  const double half = 128.0 * (1 << 20);
  r.ranges = {{0, "0", "", {{"dram__bytes_read.sum", half, "byte"},
                            {"dram__bytes_write.sum", half, "byte"},
                            {"gpu__time_duration.sum", 150'000, "nanosecond"}}},
              {1, "1", "", {{"dram__bytes_read.sum", half, "byte"},
                            {"dram__bytes_write.sum", half, "byte"},
                            {"gpu__time_duration.sum", 50'000, "nanosecond"}}}};
  r.options.min_bytes = 2 * 2 * half;
  r.options.peak_dram_bytes_per_s = 3.35e12;
  sp::ComputeSummary(&r);
  const sp::ProfileSummary& s = r.summary;
  EXPECT_EQ(s.latency_source, "cuda_events");
  EXPECT_DOUBLE_EQ(*s.latency_us, 200);
  EXPECT_DOUBLE_EQ(*s.activity_latency_us, 197);
  EXPECT_NEAR(*s.activity_vs_events, -0.015, 1e-12);
  EXPECT_EQ(s.kernels_per_run, 2);
  EXPECT_DOUBLE_EQ(*s.kernel_time_us, 197);  // runs: 196 and 198 us of kernels
  EXPECT_DOUBLE_EQ(*s.dram_bytes_read, 2 * half);
  EXPECT_DOUBLE_EQ(*s.dram_bytes_write, 2 * half);
  EXPECT_DOUBLE_EQ(*s.dram_bytes, 4 * half);
  EXPECT_FALSE(s.lts_bytes.has_value());  // not requested
  EXPECT_DOUBLE_EQ(*s.counter_gpu_time_us, 200);
  EXPECT_DOUBLE_EQ(*s.achieved_bytes_per_s, 4 * half / 200e-6);
  EXPECT_FALSE(s.flop_count.has_value());
  EXPECT_FALSE(s.achieved_flops_per_s.has_value());
  EXPECT_EQ(s.floor_bytes_source, "caller");
  EXPECT_DOUBLE_EQ(*s.floor_us, 4 * half / 3.35e12 * 1e6);
  EXPECT_DOUBLE_EQ(*s.ratio_to_floor, 200 / *s.floor_us);
  EXPECT_DOUBLE_EQ(*s.bandwidth_fraction_of_peak, 4 * half / 200e-6 / 3.35e12);
}

TEST(ProfilerSummary, ComputeBoundFloorAndFlops) {
  sp::ProfileResult r;
  r.availability.events = true;
  r.latency.runs = 1;
  r.latency.median_us = 250;
  r.options.flop_count = 2.0 * 4096 * 4096 * 4096;
  r.options.min_bytes = 3.0 * 4096 * 4096 * 2;
  r.options.peak_dram_bytes_per_s = 3.35e12;
  r.options.peak_flops_per_s = 989e12;
  sp::ComputeSummary(&r);
  const sp::ProfileSummary& s = r.summary;
  EXPECT_DOUBLE_EQ(*s.flop_count, r.options.flop_count);
  EXPECT_DOUBLE_EQ(*s.achieved_flops_per_s, r.options.flop_count / 250e-6);
  // 137.4 GFLOP at 989 TFLOP/s = 139 us beats 100 MB at 3.35 TB/s = 30 us.
  EXPECT_DOUBLE_EQ(*s.floor_us, r.options.flop_count / 989e12 * 1e6);
  EXPECT_DOUBLE_EQ(*s.flops_fraction_of_peak, r.options.flop_count / 250e-6 / 989e12);
  EXPECT_FALSE(s.dram_bytes.has_value());            // no counters
  EXPECT_FALSE(s.achieved_bytes_per_s.has_value());
  EXPECT_FALSE(s.activity_vs_events.has_value());
}

TEST(ProfilerSummary, NothingAvailableGivesNothing) {
  sp::ProfileResult r;
  r.options.flop_count = 10;
  r.options.peak_flops_per_s = 100;
  r.latency.median_us = 5;  // ignored: events not available
  sp::ComputeSummary(&r);
  EXPECT_EQ(r.summary.latency_source, "");
  EXPECT_FALSE(r.summary.latency_us.has_value());
  EXPECT_FALSE(r.summary.achieved_flops_per_s.has_value());
  EXPECT_FALSE(r.summary.ratio_to_floor.has_value());
  EXPECT_DOUBLE_EQ(*r.summary.floor_us, 0.1 * 1e6);  // the floor needs no measurement
}

TEST(ProfilerSummary, ActivityStandsInWhenEventsAreMissing) {
  sp::ProfileResult r;
  r.availability.activity = true;
  r.activity_runs = 1;
  r.activity_run_us = {42};
  sp::ComputeSummary(&r);
  EXPECT_EQ(r.summary.latency_source, "activity");
  EXPECT_DOUBLE_EQ(*r.summary.latency_us, 42);
  EXPECT_FALSE(r.summary.activity_vs_events.has_value());
}

TEST(ProfilerSummary, RunsWithoutKernelsAreIgnored) {
  sp::ProfileResult r;
  r.availability.activity = true;
  r.activity_runs = 3;
  r.activity_run_us = {0, 10, 12};
  sp::ComputeSummary(&r);
  EXPECT_DOUBLE_EQ(*r.summary.activity_latency_us, 11);
  r.activity_run_us = {0, 0, 0};
  sp::ComputeSummary(&r);
  EXPECT_FALSE(r.summary.activity_latency_us.has_value());
}

TEST(ProfilerSummary, UnavailableMetricIsNotSummed) {
  sp::ProfileResult r;
  r.availability.range = true;
  sp::MetricInfo m = Metric("dram__bytes_read.sum", "byte");
  m.available = false;
  r.metrics = {m};
  r.ranges = {{0, "0", "", {{"dram__bytes_read.sum", 10, "byte"}}}};
  EXPECT_FALSE(r.SumMetric("dram__bytes_read.sum").has_value());
  r.metrics[0].available = true;
  EXPECT_DOUBLE_EQ(*r.SumMetric("dram__bytes_read.sum"), 10);
  r.ranges[0].metrics[0].value = std::nan("");
  EXPECT_FALSE(r.SumMetric("dram__bytes_read.sum").has_value());
}

TEST(ProfilerSummary, AliasFindsResolvedMetric) {
  sp::ProfileResult r;
  r.availability.range = true;
  sp::MetricInfo m = Metric("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
                            "percent");
  m.alias = sp::kTensorPipeAlias;
  r.metrics = {m};
  r.ranges = {{0, "0", "", {{m.name, 12.5, "percent"}}}};
  ASSERT_NE(r.FindMetric("tensor_pipe"), nullptr);
  EXPECT_DOUBLE_EQ(*r.SumMetric("tensor_pipe"), 12.5);
}

TEST(ProfilerRuns, AssignByTimestampBoundaries) {
  // Boundaries after the sync before run 0 and after each of 3 runs.
  const std::vector<uint64_t> b = {100, 200, 300, 400};
  std::vector<sp::KernelRecord> ks = {Kernel("c", 310, 330, 7), Kernel("a", 110, 150, 1),
                                      Kernel("b", 150, 190, 2),  Kernel("x", 50, 60, 0),
                                      Kernel("d", 210, 290, 4),  Kernel("y", 450, 460, 9)};
  EXPECT_EQ(sp::detail::AssignRuns(&ks, b), 2u);  // x before run 0, y after the last run
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_EQ(ks[0].name, "a");
  EXPECT_EQ(ks[0].run, 0);
  EXPECT_EQ(ks[1].name, "b");
  EXPECT_EQ(ks[1].run, 0);
  EXPECT_EQ(ks[2].name, "d");
  EXPECT_EQ(ks[2].run, 1);
  EXPECT_EQ(ks[3].name, "c");
  EXPECT_EQ(ks[3].run, 2);
  const std::vector<double> spans = sp::detail::RunSpansUs(ks, 3);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_DOUBLE_EQ(spans[0], 0.080);
  EXPECT_DOUBLE_EQ(spans[1], 0.080);
  EXPECT_DOUBLE_EQ(spans[2], 0.020);
  const std::vector<double> busy = sp::detail::RunKernelTimesUs(ks, 3);
  EXPECT_DOUBLE_EQ(busy[0], 0.080);
  // A run without kernels has span 0.
  EXPECT_EQ(sp::detail::RunSpansUs(ks, 4)[3], 0);
}

// The clock-free assignment: the run is the one whose pushed external correlation id covered
// the launching API call. Here the kernels' timestamps have drifted 3 ms away from the runs'
// CPU windows (a long-lived process): the timestamp rule drops them all, the correlation rule
// keeps every one in its run.
TEST(ProfilerRuns, AssignByCorrelationIgnoresClockDrift) {
  const std::vector<uint64_t> b = {100, 200, 300, 400};
  const uint64_t drift = 3'000'000;
  std::vector<sp::KernelRecord> ks = {Kernel("c", drift + 310, drift + 330, 7),
                                      Kernel("a", drift + 110, drift + 150, 1),
                                      Kernel("b", drift + 150, drift + 190, 2),
                                      Kernel("x", drift + 50, drift + 60, 99),
                                      Kernel("d", drift + 210, drift + 290, 4)};
  std::vector<sp::KernelRecord> by_time = ks;
  EXPECT_EQ(sp::detail::AssignRuns(&by_time, b), 5u);
  EXPECT_TRUE(by_time.empty());
  const std::unordered_map<uint32_t, int> runs = {{1, 0}, {2, 0}, {3, 0}, {4, 1}, {7, 2}, {8, -1}};
  EXPECT_EQ(sp::detail::AssignRunsByCorrelation(&ks, runs), 1u);  // x: not launched in a run
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_EQ(ks[0].name, "a");
  EXPECT_EQ(ks[0].run, 0);
  EXPECT_EQ(ks[1].name, "b");
  EXPECT_EQ(ks[1].run, 0);
  EXPECT_EQ(ks[2].name, "d");
  EXPECT_EQ(ks[2].run, 1);
  EXPECT_EQ(ks[3].name, "c");
  EXPECT_EQ(ks[3].run, 2);
  EXPECT_DOUBLE_EQ(sp::detail::RunSpansUs(ks, 3)[0], 0.080);
}

TEST(ProfilerRuns, RangesNamedOnlyWhenCountsAgree) {
  std::vector<sp::KernelRecord> ks = {Kernel("gemm", 0, 10), Kernel("reduce", 10, 12)};
  std::vector<sp::RangeRecord> two(2), three(3);
  sp::detail::MatchRangesToKernels(&two, ks);
  EXPECT_EQ(two[0].kernel_name, "gemm");
  EXPECT_EQ(two[1].kernel_name, "reduce");
  sp::detail::MatchRangesToKernels(&three, ks);
  EXPECT_EQ(three[0].kernel_name, "");
}

TEST(ProfilerRuns, UnprofiledKernelsCountRunZeroOnly) {
  std::vector<sp::KernelRecord> ks(8);
  for (size_t i = 0; i < ks.size(); ++i) ks[i].run = i < 5 ? 0 : 1;
  EXPECT_EQ(sp::detail::UnprofiledKernels(3, ks), 2u);
  EXPECT_EQ(sp::detail::UnprofiledKernels(5, ks), 0u);
  EXPECT_EQ(sp::detail::UnprofiledKernels(9, ks), 0u);
  EXPECT_EQ(sp::detail::UnprofiledKernels(0, {}), 0u);
}

TEST(ProfilerDisable, ParsesParts) {
  auto none = sp::ParseDisableSpec("");
  ASSERT_TRUE(none.IsOk());
  EXPECT_FALSE(none->activity || none->range);
  auto both = sp::ParseDisableSpec("activity, range");
  ASSERT_TRUE(both.IsOk());
  EXPECT_TRUE(both->activity && both->range);
  auto cupti = sp::ParseDisableSpec("cupti");
  ASSERT_TRUE(cupti.IsOk());
  EXPECT_TRUE(cupti->activity && cupti->range);
  auto only = sp::ParseDisableSpec("counters");
  ASSERT_TRUE(only.IsOk());
  EXPECT_FALSE(only->activity);
  EXPECT_TRUE(only->range);
  auto bad = sp::ParseDisableSpec("activity,events");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("'events'"), std::string::npos) << bad.Message();
}

TEST(ProfilerDisable, EnvironmentVariable) {
  std::string note;
  setenv("STOF_PROFILER_DISABLE", "range", 1);
  sp::DisableSpec d = sp::detail::DisableSpecFromEnv(&note);
  EXPECT_TRUE(d.range);
  EXPECT_FALSE(d.activity);
  EXPECT_TRUE(note.empty());
  setenv("STOF_PROFILER_DISABLE", "bogus", 1);
  d = sp::detail::DisableSpecFromEnv(&note);
  EXPECT_FALSE(d.range || d.activity);
  EXPECT_NE(note.find("bogus"), std::string::npos);
  unsetenv("STOF_PROFILER_DISABLE");
}

TEST(ProfilerHints, PrivilegesGetAFix) {
  const std::string m = sp::detail::WithHint("x: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (...)");
  EXPECT_NE(m.find("NVreg_RestrictProfilingToAdminUsers"), std::string::npos);
  EXPECT_EQ(sp::detail::WithHint("other"), "other");
}

TEST(ProfilerDefaults, MetricList) {
  const std::vector<std::string> d = sp::DefaultMetricNames();
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0], "dram__bytes_read.sum");
  EXPECT_EQ(d[1], "dram__bytes_write.sum");
  EXPECT_EQ(d[2], "lts__t_bytes.sum");
  EXPECT_EQ(d[3], "gpu__time_duration.sum");
  EXPECT_EQ(d[4], "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(d[5], sp::kTensorPipeAlias);
}
