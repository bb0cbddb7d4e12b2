// Status, Expected and the early-return macros (engine/core/status.h).
#include "engine/core/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

using stof::engine::Error;
using stof::engine::Expected;
using stof::engine::Status;

Expected<int> Half(int x) {
  if (x % 2 != 0) return Error{"x: must be even, got " + std::to_string(x)};
  return x / 2;
}

// Two macro uses in one function (distinct temporaries), a declaration and an assignment.
Expected<int> Quarter(int x) {
  STOF_ASSIGN_OR_RETURN(const int h, Half(x));
  int q = 0;
  STOF_ASSIGN_OR_RETURN(q, Half(h));
  return q;
}

Status QuarterIsPositive(int x) {
  STOF_ASSIGN_OR_RETURN(auto q, Quarter(x));
  if (q <= 0) return Error{"quarter: must be positive, got " + std::to_string(q)};
  return Status::Ok();
}

Expected<std::unique_ptr<int>> Boxed(bool ok) {
  if (!ok) return Error{"box: refused"};
  return std::make_unique<int>(7);
}

Expected<int> Unbox(bool ok) {
  STOF_ASSIGN_OR_RETURN(auto box, Boxed(ok));  // move-only values move out
  return *box;
}

TEST(Status, AssignOrReturnGivesTheValueOrTheFirstError) {
  auto q = Quarter(12);
  ASSERT_TRUE(q.IsOk()) << q.Message();
  EXPECT_EQ(*q, 3);
  q = Quarter(6);  // 6 / 2 = 3 is odd: the second call fails
  ASSERT_FALSE(q.IsOk());
  EXPECT_EQ(q.Message(), "x: must be even, got 3");
  q = Quarter(5);
  EXPECT_EQ(q.Message(), "x: must be even, got 5");
  EXPECT_TRUE(QuarterIsPositive(8).IsOk());
  EXPECT_EQ(QuarterIsPositive(-8).Message(), "quarter: must be positive, got -2");
  EXPECT_EQ(QuarterIsPositive(2).Message(), "x: must be even, got 1");
  auto u = Unbox(true);
  ASSERT_TRUE(u.IsOk());
  EXPECT_EQ(*u, 7);
  EXPECT_EQ(Unbox(false).Message(), "box: refused");
}

TEST(Status, ReturnIfErrorAndContext) {
  const auto check = [](int x) -> Status {
    STOF_RETURN_IF_ERROR(Half(x).ToStatus());
    return Status::Ok();
  };
  EXPECT_TRUE(check(4).IsOk());
  EXPECT_EQ(check(3).Message(), "x: must be even, got 3");
  EXPECT_EQ(Status(Error{"bad"}).WithContext("plan.json: ").Message(), "plan.json: bad");
  EXPECT_TRUE(Status::Ok().WithContext("plan.json: ").IsOk());
}

}  // namespace
