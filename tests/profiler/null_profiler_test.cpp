// CPU: the NullProfiler (every build) and what CreateProfiler gives in this build: the null
// profiler never calls `work` and reports every part unavailable with its reason; a build
// without CUDA says so from TimeWithCudaEvents too.
#include <gtest/gtest.h>

#include "profiler/model/profile_export.h"
#include "profiler/profiler.h"
#include "tests/profiler/unavailable_profile.h"

namespace sp = stof::profiler;
namespace st = stof::testing;

TEST(NullProfiler, ReportsEverythingUnavailable) {
  auto p = sp::CreateNullProfiler();
  EXPECT_EQ(p->Name(), "null");
  sp::MeasureOptions o;
  o.label = "nothing";
  o.flop_count = 100;
  o.peak_flops_per_s = 1e3;
  sp::ProfileResult r;
  ASSERT_NO_FATAL_FAILURE(st::MeasureNothing(*p, o, &r));
  EXPECT_EQ(r.profiler, "null");
  EXPECT_EQ(r.label, "nothing");
  EXPECT_EQ(r.availability.events_why_not, "this build has no CUDA (STOF_CUDA=OFF)");
  EXPECT_EQ(r.options.metrics, sp::DefaultMetricNames());
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_TRUE(r.ranges.empty());
  EXPECT_DOUBLE_EQ(*r.summary.floor_us, 0.1 * 1e6);
  // It exports like any result.
  st::ExpectJsonRoundTrip(r);
}

TEST(NullProfiler, CustomReason) {
  auto r = sp::CreateNullProfiler("profiling off in the studio settings")
               ->Measure([](void*) { return stof::engine::Status::Ok(); }, {});
  ASSERT_TRUE(r.IsOk());
  EXPECT_EQ(r->availability.range_why_not, "profiling off in the studio settings");
}

TEST(CreateProfiler, MatchesTheBuild) {
  auto p = sp::CreateProfiler();
  EXPECT_EQ(p->Name(), sp::BuildHasCupti() ? "cupti" : "null");
#ifndef STOF_TEST_HAVE_CUDA
  auto t = sp::TimeWithCudaEvents([](void*) { return stof::engine::Status::Ok(); }, 0, 3);
  ASSERT_FALSE(t.IsOk());
  EXPECT_NE(t.Message().find("no CUDA"), std::string::npos) << t.Message();
#endif
}
