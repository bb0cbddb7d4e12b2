// Shared by the profiler tests of a profiler that cannot measure (null_profiler_test.cpp: the
// NullProfiler; cupti_fallback_test.cpp: the CUPTI profiler without a GPU): one Measure whose
// `work` must never run, with every part unavailable for one and the same reason, and the
// JSON round trip of the result.
#pragma once

#include <gtest/gtest.h>

#include "profiler/model/profile_export.h"
#include "profiler/profiler.h"

namespace stof::testing {

// p.Measure(work, o) with a `work` that counts its calls: a result (in *out), `work` never
// called, events, activity and range all unavailable with the events' reason given for the
// other two, and no latency.
inline void MeasureNothing(profiler::Profiler& p, const profiler::MeasureOptions& o,
                           profiler::ProfileResult* out) {
  int calls = 0;
  auto r = p.Measure(
      [&](void*) {
        ++calls;
        return engine::Status::Ok();
      },
      o);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(r->availability.events);
  EXPECT_FALSE(r->availability.activity);
  EXPECT_FALSE(r->availability.range);
  EXPECT_EQ(r->availability.activity_why_not, r->availability.events_why_not);
  EXPECT_EQ(r->availability.range_why_not, r->availability.events_why_not);
  EXPECT_FALSE(r->summary.latency_us.has_value());
  *out = *r;
}

// The result exports to JSON and reads back equal, like any other.
inline void ExpectJsonRoundTrip(const profiler::ProfileResult& r) {
  auto back = profiler::ProfileFromJson(profiler::ProfileToJson(r));
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(*back == r);
}

}  // namespace stof::testing
