// GPU: the profiler's calibration and failure paths on a real device.
//  - a 256 MiB copy reads and writes 256 MiB +-2 % by dram__bytes_read/write (auto range: summed
//    over kernels; user range: one range), and its activity-duration latency agrees with the
//    CUDA-event latency within 3 %;
//  - default metrics resolve with units; an unknown metric is reported and the others kept;
//  - more kernels than max_ranges are reported, not fatal; forced unavailability keeps the
//    latency; a failing `work` is an error; a cuBLAS GEMM shows its kernels.
// Counters may be forbidden by the system (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, vGPU, ...):
// those tests then skip with CUPTI's reason; any other counter failure fails.
#include <cstdio>

#include "gpu_test_util.h"
#include "kernels/gemm/cublas_gemm.h"
#include "kernels/util/copy_kernel.h"
#include "profiler/model/profile_export.h"
#include "profiler/profiler.h"

namespace sp = stof::profiler;
namespace sk = stof::kernels;
using stof::engine::Status;

namespace {
constexpr size_t kCopyBytes = size_t{256} << 20;

bool SystemForbidsCounters(const std::string& why) {
  for (const char* s : {"INSUFFICIENT_PRIVILEGES", "cannot be range-profiled",
                        "VIRTUALIZED_DEVICE", "CMP_DEVICE_NOT_SUPPORTED", "NOT_SUPPORTED"})
    if (why.find(s) != std::string::npos) return true;
  return false;
}

#define STOF_REQUIRE_COUNTERS(result)                                             \
  do {                                                                            \
    if (!(result).availability.range) {                                           \
      if (SystemForbidsCounters((result).availability.range_why_not))             \
        GTEST_SKIP() << "counters forbidden here: " << (result).availability.range_why_not; \
      FAIL() << "counters unavailable: " << (result).availability.range_why_not;  \
    }                                                                             \
  } while (0)

void Print(const sp::ProfileResult& r) {
  const sp::ProfileSummary& s = r.summary;
  std::printf("%s [%s range]: events %.2f us, activity %.2f us (%+.2f %%), read %.4f MiB, "
              "write %.4f MiB, %d ranges, %d passes\n",
              r.label.c_str(), r.range_mode.c_str(), s.latency_us.value_or(-1),
              s.activity_latency_us.value_or(-1), 100 * s.activity_vs_events.value_or(0),
              s.dram_bytes_read.value_or(-1) / (1 << 20), s.dram_bytes_write.value_or(-1) / (1 << 20),
              static_cast<int>(r.ranges.size()), r.counter_passes);
  for (const std::string& n : r.notes) std::printf("  note: %s\n", n.c_str());
}

sp::ProfileResult MeasureCopy(sk::CopyWorkload& w, sp::RangeMode mode,
                              std::vector<std::string> metrics) {
  sp::MeasureOptions o;
  o.label = std::string("copy 256 MiB");
  o.runs = 30;
  o.activity_runs = 5;
  o.range_mode = mode;
  o.metrics = std::move(metrics);
  o.min_bytes = w.MinBytes();
  auto r = sp::CreateProfiler()->Measure([&](void* s) { return w.Run(s); }, o);
  EXPECT_TRUE(r.IsOk()) << r.Message();
  return r.IsOk() ? *r : sp::ProfileResult{};
}

void ExpectCopyCalibrated(const sp::ProfileResult& r) {
  const double read = r.summary.dram_bytes_read.value_or(0);
  const double write = r.summary.dram_bytes_write.value_or(0);
  EXPECT_NEAR(read / kCopyBytes, 1.0, 0.02) << "dram__bytes_read.sum = " << read;
  EXPECT_NEAR(write / kCopyBytes, 1.0, 0.02) << "dram__bytes_write.sum = " << write;
}
}  // namespace

TEST(GpuProfiler, CopyCalibrationAutoRange) {
  STOF_REQUIRE_GPU();
  auto w = sk::CopyWorkload::Create(kCopyBytes);
  ASSERT_TRUE(w.IsOk()) << w.Message();
  // The default metrics, as `stof profile copy` uses them. With them CUPTI replays the kernel
  // several times; with the two dram metrics alone (one pass) it counted a few MiB too many
  // written at every size from 64 MiB to 1 GiB: still inside 2 %, but with little margin
  // (measured: docs/profiler.md, "Metrics").
  const sp::ProfileResult r = MeasureCopy(**w, sp::RangeMode::kAuto, sp::DefaultMetricNames());
  Print(r);
  auto bad = (*w)->Verify();
  ASSERT_TRUE(bad.IsOk()) << bad.Message();
  EXPECT_EQ(*bad, 0);
  ASSERT_TRUE(r.availability.events) << r.availability.events_why_not;
  ASSERT_TRUE(r.availability.activity) << r.availability.activity_why_not;
  EXPECT_EQ(r.summary.kernels_per_run, 1);
  ASSERT_EQ(r.kernels.size(), 5u);
  EXPECT_NE(r.kernels[0].name.find("CopyVec16Kernel"), std::string::npos) << r.kernels[0].name;
  EXPECT_GT(r.kernels[0].registers_per_thread, 0);
  EXPECT_GT(r.kernels[0].grid[0], 0);
  EXPECT_EQ(r.kernels[0].block[0], 256);
  EXPECT_EQ(r.dropped_records, 0u);
  ASSERT_TRUE(r.summary.activity_vs_events.has_value());
  EXPECT_NEAR(*r.summary.activity_vs_events, 0.0, 0.03);
  STOF_REQUIRE_COUNTERS(r);
  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_NE(r.ranges[0].kernel_name.find("CopyVec16Kernel"), std::string::npos);
  ExpectCopyCalibrated(r);
}

// Passes 2 and 3 must leave nothing behind that slows later pass-1 timings (CUPTI stays loaded
// in the process): the CUDA-event latency after a full measurement matches the one before it.
// A 64 MiB copy keeps the GPU the bottleneck; with a 1 MiB copy back-to-back event timing is
// bound by the host's launch rate and differs by tens of percent between two identical
// events-only measurements (measured: docs/profiler.md, "Passes"), which says nothing about
// CUPTI.
TEST(GpuProfiler, TracingAndCountersLeaveLaterLatencyAlone) {
  STOF_REQUIRE_GPU();
  auto w = sk::CopyWorkload::Create(size_t{64} << 20);
  ASSERT_TRUE(w.IsOk()) << w.Message();
  auto work = [&](void* s) { return (*w)->Run(s); };
  sp::MeasureOptions events_only;
  events_only.runs = 200;
  events_only.warmup = 20;
  events_only.disable_activity = events_only.disable_range = true;
  auto prof = sp::CreateProfiler();
  auto before = prof->Measure(work, events_only);
  sp::MeasureOptions full;
  full.runs = 20;
  auto middle = prof->Measure(work, full);
  auto after = prof->Measure(work, events_only);
  ASSERT_TRUE(before.IsOk() && middle.IsOk() && after.IsOk());
  std::printf("64 MiB copy, CUDA events: before %.3f us, after a full measurement %.3f us "
              "(host %.3f -> %.3f us per run)\n",
              before->latency.median_us, after->latency.median_us,
              before->latency.wall_us_per_run, after->latency.wall_us_per_run);
  EXPECT_NEAR(after->latency.median_us / before->latency.median_us, 1.0, 0.05);
}

TEST(GpuProfiler, CopyCalibrationUserRange) {
  STOF_REQUIRE_GPU();
  auto w = sk::CopyWorkload::Create(kCopyBytes);
  ASSERT_TRUE(w.IsOk()) << w.Message();
  const sp::ProfileResult r =
      MeasureCopy(**w, sp::RangeMode::kUser, {"dram__bytes_read.sum", "dram__bytes_write.sum"});
  Print(r);
  ASSERT_TRUE(r.availability.events) << r.availability.events_why_not;
  STOF_REQUIRE_COUNTERS(r);
  EXPECT_EQ(r.replay_mode, "user");
  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_EQ(r.ranges[0].name, "copy 256 MiB");
  EXPECT_GE(r.counter_passes, 1);
  ExpectCopyCalibrated(r);
}

TEST(GpuProfiler, DefaultMetricsHaveUnits) {
  STOF_REQUIRE_GPU();
  auto w = sk::CopyWorkload::Create(size_t{64} << 20);
  ASSERT_TRUE(w.IsOk()) << w.Message();
  sp::MeasureOptions o;
  o.runs = 5;
  o.activity_runs = 1;
  o.disable_activity = true;
  auto r = sp::CreateProfiler()->Measure([&](void* s) { return (*w)->Run(s); }, o);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  Print(*r);
  STOF_REQUIRE_COUNTERS(*r);
  ASSERT_EQ(r->metrics.size(), 6u);
  for (const sp::MetricInfo& m : r->metrics) {
    EXPECT_TRUE(m.available) << m.name << ": " << m.why_not;
    EXPECT_FALSE(m.unit.empty()) << m.name;
  }
  EXPECT_EQ(r->FindMetric("dram__bytes_read.sum")->unit, "byte");
  EXPECT_EQ(r->FindMetric("gpu__time_duration.sum")->unit, "nanosecond");
  EXPECT_EQ(r->FindMetric(sp::kTensorPipeAlias)->unit, "percent");
  EXPECT_FALSE(r->device.chip.empty());
  ASSERT_EQ(r->ranges.size(), 1u);
  EXPECT_EQ(r->ranges[0].metrics.size(), 6u);
  EXPECT_GT(*r->SumMetric("lts__t_bytes.sum"), 0);
}

TEST(GpuProfiler, UnknownMetricIsReportedOthersKept) {
  STOF_REQUIRE_GPU();
  auto w = sk::CopyWorkload::Create(size_t{64} << 20);
  ASSERT_TRUE(w.IsOk()) << w.Message();
  sp::MeasureOptions o;
  o.runs = 3;
  o.disable_activity = true;
  o.metrics = {"dram__bytes_read.sum", "no_such__metric.sum"};
  auto r = sp::CreateProfiler()->Measure([&](void* s) { return (*w)->Run(s); }, o);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  STOF_REQUIRE_COUNTERS(*r);
  ASSERT_EQ(r->metrics.size(), 2u);
  EXPECT_TRUE(r->metrics[0].available);
  EXPECT_FALSE(r->metrics[1].available);
  EXPECT_NE(r->metrics[1].why_not.find("unknown metric"), std::string::npos);
  EXPECT_NEAR(*r->summary.dram_bytes_read / (64 << 20), 1.0, 0.02);
}

TEST(GpuProfiler, TooManyRangesAreReported) {
  STOF_REQUIRE_GPU();
  auto w = sk::CopyWorkload::Create(size_t{4} << 20);
  ASSERT_TRUE(w.IsOk()) << w.Message();
  sp::MeasureOptions o;
  o.runs = 3;
  o.activity_runs = 1;
  o.max_ranges = 3;
  o.metrics = {"dram__bytes_read.sum"};
  auto eight = [&](void* s) -> Status {
    for (int i = 0; i < 8; ++i) STOF_RETURN_IF_ERROR((*w)->Run(s));
    return Status::Ok();
  };
  auto r = sp::CreateProfiler()->Measure(eight, o);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  Print(*r);
  STOF_REQUIRE_COUNTERS(*r);
  EXPECT_EQ(r->ranges.size(), 3u);
  EXPECT_EQ(r->ranges_dropped, 5u);
  bool noted = false;
  for (const std::string& n : r->notes) noted |= n.find("ranges dropped") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(GpuProfiler, ForcedUnavailabilityKeepsLatency) {
  STOF_REQUIRE_GPU();
  auto w = sk::CopyWorkload::Create(size_t{16} << 20);
  ASSERT_TRUE(w.IsOk()) << w.Message();
  sp::MeasureOptions o;
  o.runs = 5;
  o.disable_activity = o.disable_range = true;
  auto r = sp::CreateProfiler()->Measure([&](void* s) { return (*w)->Run(s); }, o);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_TRUE(r->availability.events);
  EXPECT_FALSE(r->availability.activity);
  EXPECT_FALSE(r->availability.range);
  EXPECT_EQ(r->availability.activity_why_not, "disabled by MeasureOptions.disable_activity");
  EXPECT_EQ(r->availability.range_why_not, "disabled by MeasureOptions.disable_range");
  EXPECT_EQ(r->summary.latency_source, "cuda_events");
  EXPECT_GT(*r->summary.latency_us, 0);
  EXPECT_TRUE(r->kernels.empty());
}

TEST(GpuProfiler, WorkFailureIsAnError) {
  STOF_REQUIRE_GPU();
  int calls = 0;
  auto fail_third = [&](void*) -> Status {
    return ++calls == 3 ? Status(stof::engine::Error{"work: planted failure"}) : Status::Ok();
  };
  sp::MeasureOptions o;
  o.warmup = 0;
  o.runs = 5;
  auto r = sp::CreateProfiler()->Measure(fail_third, o);
  ASSERT_FALSE(r.IsOk());
  EXPECT_EQ(r.Message(), "work: planted failure");
  // The profiler is still usable afterwards.
  auto ok = sp::CreateProfiler()->Measure([](void*) { return Status::Ok(); }, o);
  ASSERT_TRUE(ok.IsOk()) << ok.Message();
  EXPECT_TRUE(ok->availability.events);
}

TEST(GpuProfiler, CublasGemmShowsItsKernels) {
  STOF_REQUIRE_GPU();
  auto g = sk::GemmWorkload::Create(2048, 2048, 2048);
  ASSERT_TRUE(g.IsOk()) << g.Message();
  sp::MeasureOptions o;
  o.label = "gemm 2048^3";
  o.runs = 20;
  o.activity_runs = 2;
  o.flop_count = (*g)->Flops();
  o.metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum", sp::kTensorPipeAlias};
  auto r = sp::CreateProfiler()->Measure([&](void* s) { return (*g)->Run(s); }, o);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  Print(*r);
  auto err = (*g)->Verify();
  ASSERT_TRUE(err.IsOk()) << err.Message();
  EXPECT_LT(*err, 2e-3);
  ASSERT_TRUE(r->availability.activity) << r->availability.activity_why_not;
  EXPECT_GE(r->summary.kernels_per_run, 1);
  for (const sp::KernelRecord& k : r->kernels) std::printf("  kernel %s\n", k.name.c_str());
  EXPECT_GT(*r->summary.achieved_flops_per_s, 1e12);
  STOF_REQUIRE_COUNTERS(*r);
  // A, B and C are 8 MiB each: at least C is written, and A, B are read.
  EXPECT_GT(*r->summary.dram_bytes_write, 4e6);
  EXPECT_GT(*r->SumMetric(sp::kTensorPipeAlias), 1.0);
}
