// Tests of RowRuns (engine/mask/row_runs.h) apart from FromSpec: a hand-written 3 x 10 mask
// (runs, Get, counts, memory); FromMask / ToMask round trips on random and ragged masks; or /
// and / not against Mask's on the same masks; and every refusal: sizes 0, negative and past
// kMaxLen, raw runs out of order, overlapping, touching, empty, outside the columns, a bad
// row_ptr, shapes that differ, and a dense mask past Mask::kMaxLen.
#include "engine/mask/row_runs.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "test_masks.h"

using stof::engine::ColumnRun;
using stof::engine::Mask;
using stof::engine::RowRuns;
using stof::engine::testing::RandomMask;

namespace {

// Random bits plus a few solid rectangles, so rows hold single cells and long runs that
// cross word boundaries.
Mask MixedMask(int64_t rows, int64_t cols, uint64_t seed) {
  Mask m = RandomMask(rows, cols, 0.1, seed);
  std::mt19937_64 rng(seed + 7);
  for (int i = 0; i < 5; ++i) {
    const auto r0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows));
    const auto c0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(cols));
    m.SetRect(r0, r0 + 1 + static_cast<int64_t>(rng() % 90), c0,
              c0 + 1 + static_cast<int64_t>(rng() % 150));
  }
  return m;
}

// Rows: [0, 3) [5, 6); nothing; [2, 10).
RowRuns Hand3x10() {
  auto r = RowRuns::FromRuns(3, 10, {0, 2, 2, 3}, {{0, 3}, {5, 6}, {2, 10}});
  EXPECT_TRUE(r.IsOk()) << r.Message();
  return std::move(r).Value();
}

// The message of a FromRuns call that must fail.
std::string RunsError(int64_t rows, int64_t cols, std::vector<int64_t> row_ptr,
                      std::vector<ColumnRun> runs) {
  auto r = RowRuns::FromRuns(rows, cols, std::move(row_ptr), std::move(runs));
  EXPECT_FALSE(r.IsOk());
  return r.Message();
}

}  // namespace

TEST(RowRuns, HandWrittenRunsGetAndCounts) {
  const RowRuns r = Hand3x10();
  EXPECT_EQ(r.Rows(), 3);
  EXPECT_EQ(r.Cols(), 10);
  EXPECT_EQ(r.RunCount(), 3);
  EXPECT_EQ(r.CountRow(0), 4);
  EXPECT_EQ(r.CountRow(1), 0);
  EXPECT_EQ(r.CountRow(2), 8);
  EXPECT_EQ(r.Count(), 12);
  EXPECT_EQ(r.MemoryBytes(), 4 * 8 + 3 * 8);
  ASSERT_EQ(r.Row(0).size(), 2u);
  EXPECT_EQ(r.Row(0)[1], (ColumnRun{5, 6}));
  const char* want[] = {"1110010000", "0000000000", "0011111111"};
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 10; ++j) {
      EXPECT_EQ(r.Get(i, j), want[i][j] == '1') << i << "," << j;
    }
  }
  // Outside the mask: false, never a read past the arrays.
  EXPECT_FALSE(r.Get(-1, 0));
  EXPECT_FALSE(r.Get(0, -1));
  EXPECT_FALSE(r.Get(3, 0));
  EXPECT_FALSE(r.Get(2, 10));
  auto dense = r.ToMask();
  ASSERT_TRUE(dense.IsOk()) << dense.Message();
  EXPECT_EQ(dense->Count(), 12);
  EXPECT_TRUE(dense->Get(0, 5));
  EXPECT_FALSE(dense->Get(0, 4));
  EXPECT_EQ(RowRuns::FromMask(*dense), r);
}

TEST(RowRuns, CreateIsEmptyAndDefaultIsZeroByZero) {
  auto r = RowRuns::Create(4, 300000);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->Count(), 0);
  EXPECT_EQ(r->RunCount(), 0);
  EXPECT_EQ(r->RowPtr(), std::vector<int64_t>(5, 0));
  EXPECT_FALSE(r->Get(3, 299999));
  const RowRuns none;
  EXPECT_TRUE(none.Empty());
  EXPECT_EQ(none.Rows(), 0);
  EXPECT_EQ(RowRuns::FromMask(Mask()), none);
  auto dense = none.ToMask();
  ASSERT_TRUE(dense.IsOk());
  EXPECT_TRUE(dense->Empty());
}

TEST(RowRuns, FromMaskToMaskRoundTripRaggedAndRandom) {
  uint64_t seed = 11;
  for (int64_t rows : {1, 7, 64, 130}) {
    for (int64_t cols : {1, 63, 64, 65, 200, 1000}) {
      for (double density : {0.0, 0.05, 0.5, 0.97, 1.0}) {
        const Mask m = RandomMask(rows, cols, density, seed++);
        const RowRuns r = RowRuns::FromMask(m);
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " p=" +
                     std::to_string(density));
        EXPECT_EQ(r.Count(), m.Count());
        EXPECT_EQ(RowRuns::CountRuns(m), r.RunCount());
        auto back = r.ToMask();
        ASSERT_TRUE(back.IsOk()) << back.Message();
        ASSERT_TRUE(*back == m);
        // Canonical: FromRuns accepts what FromMask made.
        auto again = RowRuns::FromRuns(r.Rows(), r.Cols(), r.RowPtr(), r.Runs());
        ASSERT_TRUE(again.IsOk()) << again.Message();
        for (int64_t i = 0; i < rows; i += 5) {
          for (int64_t j = 0; j < cols; j += 3) ASSERT_EQ(r.Get(i, j), m.Get(i, j));
        }
      }
    }
  }
  // A full row is one run; alternating bits are one run each.
  Mask alt = std::move(Mask::Create(2, 130)).Value();
  alt.SetRange(0, 0, 130);
  for (int64_t c = 0; c < 130; c += 2) alt.Set(1, c);
  const RowRuns r = RowRuns::FromMask(alt);
  EXPECT_EQ(r.Row(0).size(), 1u);
  EXPECT_EQ(r.Row(0)[0], (ColumnRun{0, 130}));
  EXPECT_EQ(r.Row(1).size(), 65u);
  // Runs across word boundaries count once: bits 60..70 and 127..129 of one row.
  EXPECT_EQ(RowRuns::CountRuns(alt), 66);
  Mask across = std::move(Mask::Create(1, 130)).Value();
  across.SetRange(0, 60, 71);
  across.SetRange(0, 127, 130);
  EXPECT_EQ(RowRuns::CountRuns(across), 2);
  EXPECT_EQ(RowRuns::CountRuns(Mask()), 0);
}

TEST(RowRuns, OrAndNotMatchTheDenseMasks) {
  uint64_t seed = 500;
  for (int64_t rows : {1, 33, 100}) {
    for (int64_t cols : {1, 64, 97, 300}) {
      const Mask a = MixedMask(rows, cols, seed++);
      const Mask b = MixedMask(rows, cols, seed++);
      const RowRuns ra = RowRuns::FromMask(a), rb = RowRuns::FromMask(b);
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
      auto o = RowRuns::Or(ra, rb);
      auto n = RowRuns::And(ra, rb);
      ASSERT_TRUE(o.IsOk() && n.IsOk());
      // Equal runs, not only equal bits: the results are canonical.
      EXPECT_EQ(*o, RowRuns::FromMask(*Mask::Or(a, b)));
      EXPECT_EQ(*n, RowRuns::FromMask(*Mask::And(a, b)));
      EXPECT_EQ(RowRuns::Not(ra), RowRuns::FromMask(Mask::Not(a)));
      EXPECT_EQ(RowRuns::Not(RowRuns::Not(ra)), ra);
    }
  }
  // Touching runs from the two sides join into one.
  auto a = RowRuns::FromRuns(1, 10, {0, 1}, {{0, 4}});
  auto b = RowRuns::FromRuns(1, 10, {0, 1}, {{4, 7}});
  auto o = RowRuns::Or(*a, *b);
  ASSERT_TRUE(o.IsOk());
  EXPECT_EQ(o->Runs(), (std::vector<ColumnRun>{{0, 7}}));
  EXPECT_EQ(RowRuns::And(*a, *b)->RunCount(), 0);
  EXPECT_EQ(RowRuns::Not(*o).Runs(), (std::vector<ColumnRun>{{7, 10}}));
}

TEST(RowRuns, SizesOutsideOneToMaxLenNameTheField) {
  for (int64_t bad : {int64_t{0}, int64_t{-3}, RowRuns::kMaxLen + 1}) {
    auto r = RowRuns::Create(bad, 8);
    ASSERT_FALSE(r.IsOk());
    EXPECT_EQ(r.Message(), "row runs: rows: must be in 1..1048576, got " + std::to_string(bad));
    auto c = RowRuns::Create(8, bad, "spec runs");
    ASSERT_FALSE(c.IsOk());
    EXPECT_EQ(c.Message(), "spec runs: cols: must be in 1..1048576, got " + std::to_string(bad));
    auto f = RowRuns::FromRuns(bad, 8, {0}, {});
    ASSERT_FALSE(f.IsOk());
    EXPECT_NE(f.Message().find("rows: must be in 1..1048576"), std::string::npos);
  }
  EXPECT_TRUE(RowRuns::Create(RowRuns::kMaxLen, RowRuns::kMaxLen).IsOk());
}

TEST(RowRuns, RawRunsRefusedWithTheFieldAndIndex) {
  EXPECT_EQ(RunsError(2, 10, {0, 1}, {{0, 1}}),
            "row runs: row_ptr: expected rows + 1 = 3 entries, got 2");
  EXPECT_EQ(RunsError(1, 10, {1, 1}, {{0, 1}}), "row runs: row_ptr[0]: must be 0, got 1");
  EXPECT_EQ(RunsError(1, 10, {0, 1}, {{0, 1}, {3, 4}}),
            "row runs: row_ptr[1]: must be the run count 2, got 1");
  EXPECT_EQ(RunsError(2, 10, {0, 2, 1}, {{0, 1}}),
            "row runs: row_ptr[1]: must be in 0..1 (non-decreasing, at most the run count), "
            "got 2");
  EXPECT_EQ(RunsError(3, 10, {0, 1, 0, 1}, {{0, 1}}),
            "row runs: row_ptr[2]: must be in 1..1 (non-decreasing, at most the run count), "
            "got 0");
  // Out of order, overlapping, touching.
  EXPECT_EQ(RunsError(2, 10, {0, 1, 3}, {{0, 2}, {5, 8}, {1, 3}}),
            "row runs: runs[2] (row 1): begin 1 is not after the previous run's end 8; runs "
            "must be sorted, disjoint and not touching");
  EXPECT_EQ(RunsError(1, 10, {0, 2}, {{0, 5}, {4, 8}}),
            "row runs: runs[1] (row 0): begin 4 is not after the previous run's end 5; runs "
            "must be sorted, disjoint and not touching");
  EXPECT_EQ(RunsError(1, 10, {0, 2}, {{0, 5}, {5, 8}}),
            "row runs: runs[1] (row 0): begin 5 is not after the previous run's end 5; runs "
            "must be sorted, disjoint and not touching");
  // Empty, reversed, outside the columns.
  EXPECT_EQ(RunsError(1, 10, {0, 1}, {{3, 3}}),
            "row runs: runs[0] (row 0): [3, 3) is empty; begin must be below end");
  EXPECT_EQ(RunsError(1, 10, {0, 1}, {{6, 2}}),
            "row runs: runs[0] (row 0): [6, 2) is empty; begin must be below end");
  EXPECT_EQ(RunsError(1, 10, {0, 1}, {{8, 11}}),
            "row runs: runs[0] (row 0): [8, 11) is outside the columns [0, 10)");
  EXPECT_EQ(RunsError(1, 10, {0, 1}, {{-1, 2}}),
            "row runs: runs[0] (row 0): [-1, 2) is outside the columns [0, 10)");
  // The same runs, each in its own row, are fine: order is per row.
  auto ok = RowRuns::FromRuns(3, 10, {0, 1, 2, 3}, {{0, 2}, {5, 8}, {1, 3}});
  ASSERT_TRUE(ok.IsOk()) << ok.Message();
  EXPECT_EQ(ok->Count(), 7);
}

TEST(RowRuns, ShapesMustMatchAndDenseIsLimitedToMaskMaxLen) {
  const RowRuns a = *RowRuns::Create(3, 10);
  const RowRuns b = *RowRuns::Create(3, 11);
  auto o = RowRuns::Or(a, b);
  ASSERT_FALSE(o.IsOk());
  EXPECT_EQ(o.Message(), "row runs or: shapes differ (3 x 10 vs 3 x 11)");
  auto n = RowRuns::And(b, a);
  ASSERT_FALSE(n.IsOk());
  EXPECT_EQ(n.Message(), "row runs and: shapes differ (3 x 11 vs 3 x 10)");

  // One row of 40000 columns (a decode row): bits too, as a mask of few rows may be wide.
  auto wide = RowRuns::FromRuns(1, 40000, {0, 1}, {{0, 40000}});
  ASSERT_TRUE(wide.IsOk()) << wide.Message();
  EXPECT_EQ(wide->Count(), 40000);
  EXPECT_TRUE(wide->Get(0, 39999));
  auto wide_bits = wide->ToMask();
  ASSERT_TRUE(wide_bits.IsOk()) << wide_bits.Message();
  EXPECT_EQ(wide_bits->Count(), 40000);
  // 40000 x 40000 cells: held as runs, refused as bits.
  std::vector<int64_t> row_ptr(40001);
  std::vector<ColumnRun> diag;
  for (int r = 0; r < 40000; ++r) {
    row_ptr[r + 1] = r + 1;
    diag.push_back({r, r + 1});
  }
  auto square = RowRuns::FromRuns(40000, 40000, row_ptr, diag);
  ASSERT_TRUE(square.IsOk()) << square.Message();
  auto dense = square->ToMask();
  ASSERT_FALSE(dense.IsOk());
  EXPECT_EQ(dense.Message(),
            "row runs to a dense mask: size 40000 x 40000 is too large; a square mask must be "
            "at most 32768 on a side, and any mask at most 262144 on a side and 32768 x 32768 "
            "cells");
  // Its last rows as bits: exactly those rows' runs.
  auto last = square->LastRowsToMask(3, "--q-len");
  ASSERT_TRUE(last.IsOk()) << last.Message();
  EXPECT_EQ(last->Rows(), 3);
  EXPECT_EQ(last->Cols(), 40000);
  EXPECT_EQ(last->Count(), 3);
  EXPECT_TRUE(last->Get(0, 39997));
  EXPECT_TRUE(last->Get(2, 39999));
  EXPECT_FALSE(last->Get(2, 39998));
  EXPECT_EQ(square->LastRowsToMask(0, "--q-len").Message(),
            "--q-len: expected 1..40000 (the mask's rows), got 0");
  EXPECT_EQ(square->LastRowsToMask(40001, "--q-len").Message(),
            "--q-len: expected 1..40000 (the mask's rows), got 40001");
  EXPECT_FALSE(square->LastRowsToMask(40000, "--q-len").IsOk());  // the cells again
  auto at_limit = RowRuns::FromRuns(1, Mask::kMaxLen, {0, 1}, {{7, 9}});
  ASSERT_TRUE(at_limit->ToMask().IsOk());
  EXPECT_EQ(at_limit->ToMask()->Count(), 2);
}
