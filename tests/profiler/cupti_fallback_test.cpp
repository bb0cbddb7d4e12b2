// CPU (CUDA builds with CUPTI): the CUPTI profiler's failure paths must be data, not crashes.
// On a machine without a GPU (CI, this project's build machine) Measure returns a result with
// every part unavailable and "no GPU" in the reasons, and never calls `work`; forced
// unavailability (options or STOF_PROFILER_DISABLE) names its cause. On a machine with a GPU
// the "no GPU" tests skip (tests/gpu covers the GPU paths).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "profiler/model/profile_export.h"
#include "profiler/profiler.h"
#include "tests/profiler/unavailable_profile.h"

namespace sp = stof::profiler;
namespace st = stof::testing;
using stof::engine::Status;

namespace {
bool HaveGpu() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return ok;
}
}  // namespace

TEST(CuptiProfilerFallback, NoGpuIsAResultNotACrash) {
  if (HaveGpu()) GTEST_SKIP() << "a GPU is present; tests/gpu covers the measuring paths";
  auto p = sp::CreateProfiler();
  ASSERT_EQ(p->Name(), "cupti");
  sp::MeasureOptions o;
  o.label = "copy";
  o.min_bytes = 1e9;
  o.peak_dram_bytes_per_s = 1e12;
  sp::ProfileResult r;
  ASSERT_NO_FATAL_FAILURE(st::MeasureNothing(*p, o, &r));
  EXPECT_EQ(r.profiler, "cupti");
  EXPECT_EQ(r.availability.events_why_not.rfind("no GPU: ", 0), 0u)
      << r.availability.events_why_not;
  EXPECT_DOUBLE_EQ(*r.summary.floor_us, 1000.0);
  // The result exports and reads back like any other.
  st::ExpectJsonRoundTrip(r);
  // A second call is just as calm (no sticky CUDA state).
  auto again = p->Measure([](void*) { return Status::Ok(); }, o);
  ASSERT_TRUE(again.IsOk());
  EXPECT_EQ(again->availability.events_why_not, r.availability.events_why_not);
}

TEST(CuptiProfilerFallback, ForcedUnavailabilityNamesItsCause) {
  if (HaveGpu()) GTEST_SKIP() << "a GPU is present; tests/gpu checks forced unavailability there";
  sp::MeasureOptions o;
  o.disable_activity = true;
  auto r = sp::CreateProfiler()->Measure([](void*) { return Status::Ok(); }, o);
  ASSERT_TRUE(r.IsOk());
  EXPECT_EQ(r->availability.activity_why_not, "disabled by MeasureOptions.disable_activity");
  EXPECT_EQ(r->availability.range_why_not.rfind("no GPU: ", 0), 0u);

  setenv("STOF_PROFILER_DISABLE", "range", 1);
  auto e = sp::CreateProfiler()->Measure([](void*) { return Status::Ok(); }, {});
  unsetenv("STOF_PROFILER_DISABLE");
  ASSERT_TRUE(e.IsOk());
  EXPECT_EQ(e->availability.range_why_not, "disabled by STOF_PROFILER_DISABLE");
  EXPECT_EQ(e->availability.activity_why_not.rfind("no GPU: ", 0), 0u);

  setenv("STOF_PROFILER_DISABLE", "nonsense", 1);
  auto n = sp::CreateProfiler()->Measure([](void*) { return Status::Ok(); }, {});
  unsetenv("STOF_PROFILER_DISABLE");
  ASSERT_TRUE(n.IsOk());
  ASSERT_EQ(n->notes.size(), 1u);
  EXPECT_NE(n->notes[0].find("nonsense"), std::string::npos);
}

TEST(CuptiProfilerFallback, BadOptionsAreErrors) {
  auto p = sp::CreateProfiler();
  auto ok = [](void*) { return Status::Ok(); };
  sp::MeasureOptions o;
  o.runs = 0;
  auto r = p->Measure(ok, o);
  ASSERT_FALSE(r.IsOk());
  EXPECT_EQ(r.Message(), "MeasureOptions.runs: must be >= 1, got 0");
  o = {};
  o.max_ranges = 0;
  EXPECT_FALSE(p->Measure(ok, o).IsOk());
  o = {};
  EXPECT_FALSE(p->Measure(nullptr, o).IsOk());
}

TEST(CuptiProfilerFallback, EventTimerSaysWhyWithoutGpu) {
  if (HaveGpu()) GTEST_SKIP() << "a GPU is present";
  auto t = sp::TimeWithCudaEvents([](void*) { return Status::Ok(); }, 0, 3);
  ASSERT_FALSE(t.IsOk());
  EXPECT_NE(t.Message().find("cudaStreamCreateWithFlags"), std::string::npos) << t.Message();
}
