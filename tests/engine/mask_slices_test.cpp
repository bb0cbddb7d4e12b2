// Tests of the slice and column-interval forms (engine/mask/mask_slices.h): random cases
// against the masks evaluated cell by cell from the forms' definitions, the known masks written
// in each form (causal, documents, a KV cache's rows, a causal sliding window) equal to the
// generators' row runs, up to L = 262144, and the refusals naming the field.
#include "engine/mask/mask_slices.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/mask/mask_spec.h"

using stof::engine::ColumnIntervals;
using stof::engine::Mask;
using stof::engine::MaskSlice;
using stof::engine::MaskSpec;
using stof::engine::RowRuns;
using stof::engine::RowRunsFromColumnIntervals;
using stof::engine::RowRunsFromSlices;
using stof::engine::SliceKind;

namespace {

RowRuns FromSpecOrDie(const std::string& pattern, int64_t L, bool causal = false,
                      std::vector<int64_t> docs = {}, int64_t width = -1) {
  MaskSpec s;
  s.pattern = pattern;
  s.seq_len = L;
  s.causal = causal;
  s.doc_lengths = std::move(docs);
  s.width = width;
  auto r = RowRuns::FromSpec(s);
  EXPECT_TRUE(r.IsOk()) << r.Message();
  return r.IsOk() ? std::move(*r) : RowRuns();
}

// The definition, one cell at a time.
bool SliceAttends(const MaskSlice& s, int64_t r, int64_t c) {
  if (r < s.q_begin || r >= s.q_end || c < s.k_begin || c >= s.k_end) return false;
  const int64_t i = r - s.q_begin, j = c - s.k_begin;
  const int64_t shift = (s.k_end - s.k_begin) - (s.q_end - s.q_begin);
  const bool below = j <= i + shift, above = j >= i;
  switch (s.kind) {
    case SliceKind::kFull: return true;
    case SliceKind::kCausal: return below;
    case SliceKind::kInverseCausal: return above;
    case SliceKind::kBiCausal: return below && above;
  }
  return false;
}

}  // namespace

TEST(MaskSlices, RandomSlicesEqualTheCellByCellUnion) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 70);
    const int64_t cols = 1 + static_cast<int64_t>(rng() % 70);
    std::vector<MaskSlice> slices(rng() % 7);
    for (MaskSlice& s : slices) {
      s.q_begin = static_cast<int64_t>(rng() % rows);
      s.q_end = s.q_begin + 1 + static_cast<int64_t>(rng() % (rows - s.q_begin));
      s.k_begin = static_cast<int64_t>(rng() % cols);
      s.k_end = s.k_begin + 1 + static_cast<int64_t>(rng() % (cols - s.k_begin));
      s.kind = static_cast<SliceKind>(rng() % 4);
    }
    auto want = Mask::Create(rows, cols);
    ASSERT_TRUE(want.IsOk());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        for (const MaskSlice& s : slices)
          if (SliceAttends(s, r, c)) want->Set(r, c, true);
    auto got = RowRunsFromSlices(rows, cols, slices);
    ASSERT_TRUE(got.IsOk()) << got.Message();
    ASSERT_EQ(*got, RowRuns::FromMask(*want)) << "trial " << trial;
  }
}

TEST(MaskSlices, KnownMasksAsSlicesEqualTheGenerators) {
  const int64_t L = 1000;
  EXPECT_EQ(*RowRunsFromSlices(L, L, {{0, L, 0, L, SliceKind::kCausal}}),
            FromSpecOrDie("causal", L));
  EXPECT_EQ(*RowRunsFromSlices(L, L, {{0, L, 0, L, SliceKind::kFull}}), FromSpecOrDie("full", L));
  // Packed documents: one square slice per document, full or causal.
  const std::vector<int64_t> docs = {300, 1, 499, 200};
  for (bool causal : {false, true}) {
    std::vector<MaskSlice> per_doc;
    int64_t at = 0;
    for (int64_t n : docs) {
      per_doc.push_back({at, at + n, at, at + n, causal ? SliceKind::kCausal : SliceKind::kFull});
      at += n;
    }
    EXPECT_EQ(*RowRunsFromSlices(L, L, per_doc), FromSpecOrDie("document", L, causal, docs))
        << "causal " << causal;
  }
  // A KV cache's 4 new rows over 1000 keys: causal aligned to the bottom right, as the last 4
  // rows of the square causal mask.
  auto cache = RowRunsFromSlices(4, L, {{0, 4, 0, L, SliceKind::kCausal}});
  ASSERT_TRUE(cache.IsOk());
  const RowRuns square = FromSpecOrDie("causal", L);
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_TRUE(std::ranges::equal(cache->Row(r), square.Row(L - 4 + r))) << r;
  // Inverse causal is the transpose of causal on a square; bi-causal of a square its diagonal.
  auto inv = RowRunsFromSlices(5, 5, {{0, 5, 0, 5, SliceKind::kInverseCausal}});
  auto bi = RowRunsFromSlices(5, 5, {{0, 5, 0, 5, SliceKind::kBiCausal}});
  ASSERT_TRUE(inv.IsOk() && bi.IsOk());
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 5; ++c) {
      EXPECT_EQ(inv->Get(r, c), c >= r);
      EXPECT_EQ(bi->Get(r, c), c == r);
    }
  // No slice: nothing attended.
  auto none = RowRunsFromSlices(3, 4, {});
  ASSERT_TRUE(none.IsOk());
  EXPECT_EQ(none->Count(), 0);
}

TEST(MaskSlices, LongContextWithoutTheBits) {
  const int64_t L = 262144;
  auto causal = RowRunsFromSlices(L, L, {{0, L, 0, L, SliceKind::kCausal}});
  ASSERT_TRUE(causal.IsOk());
  EXPECT_EQ(*causal, FromSpecOrDie("causal", L));
  EXPECT_EQ(causal->Count(), L * (L + 1) / 2);
}

TEST(MaskSlices, RefusalsNameTheSliceAndField) {
  const auto message = [](int64_t rows, int64_t cols, std::vector<MaskSlice> s) {
    auto r = RowRunsFromSlices(rows, cols, s);
    EXPECT_FALSE(r.IsOk());
    return r.IsOk() ? std::string() : r.Message();
  };
  EXPECT_EQ(message(10, 10, {{0, 10, 0, 10}, {4, 4, 0, 10}}),
            "slices[1].q_end: must be in 1..10 and above q_begin 4, got 4");
  EXPECT_EQ(message(10, 8, {{0, 10, 0, 9}}),
            "slices[0].k_end: must be in 1..8 and above k_begin 0, got 9");
  EXPECT_EQ(message(10, 8, {{-1, 10, 0, 8}}), "slices[0].q_begin: must be in 0..9, got -1");
  EXPECT_NE(message(0, 8, {}).find("rows"), std::string::npos);
  EXPECT_EQ(stof::engine::ParseSliceKind("lower", "slices[0].kind").Message(),
            "slices[0].kind: expected full, causal, inv_causal or bi_causal, got 'lower'");
  for (SliceKind k : {SliceKind::kFull, SliceKind::kCausal, SliceKind::kInverseCausal,
                      SliceKind::kBiCausal})
    EXPECT_EQ(*stof::engine::ParseSliceKind(stof::engine::SliceKindName(k), "k"), k);
}

TEST(ColumnIntervals, RandomRangesEqualTheCellByCellMask) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 60);
    const int64_t cols = 1 + static_cast<int64_t>(rng() % 60);
    ColumnIntervals m;
    for (auto* v : {&m.lower_begin, &m.lower_end, &m.upper_begin, &m.upper_end})
      for (int64_t j = 0; j < cols; ++j) v->push_back(static_cast<int64_t>(rng() % (rows + 1)));
    auto want = Mask::Create(rows, cols);
    ASSERT_TRUE(want.IsOk());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const auto j = static_cast<size_t>(c);
        const bool lower = r >= m.lower_begin[j] && r < m.lower_end[j];
        const bool upper = r >= m.upper_begin[j] && r < m.upper_end[j];
        want->Set(r, c, !lower && !upper);
      }
    auto got = RowRunsFromColumnIntervals(rows, cols, m);
    ASSERT_TRUE(got.IsOk()) << got.Message();
    ASSERT_EQ(*got, RowRuns::FromMask(*want)) << "trial " << trial;
  }
}

// FlashMask's examples: causal (column j masks the rows above it) and a causal sliding window
// of w keys (also the rows w or more below), up to L = 262144.
TEST(ColumnIntervals, KnownMasksEqualTheGenerators) {
  for (int64_t L : {int64_t{1000}, int64_t{262144}}) {
    ColumnIntervals causal, window;
    const int64_t w = 100;
    for (int64_t j = 0; j < L; ++j) {
      causal.upper_begin.push_back(0);
      causal.upper_end.push_back(j);
      causal.lower_begin.push_back(L);
      causal.lower_end.push_back(L);
      window.upper_begin.push_back(0);
      window.upper_end.push_back(j);
      window.lower_begin.push_back(std::min(L, j + w));
      window.lower_end.push_back(L);
    }
    auto c = RowRunsFromColumnIntervals(L, L, causal);
    ASSERT_TRUE(c.IsOk()) << c.Message();
    EXPECT_EQ(*c, FromSpecOrDie("causal", L)) << L;
    auto s = RowRunsFromColumnIntervals(L, L, window);
    ASSERT_TRUE(s.IsOk()) << s.Message();
    EXPECT_EQ(*s, FromSpecOrDie("sliding_window", L, true, {}, w)) << L;
  }
}

TEST(ColumnIntervals, RefusalsNameTheVectorAndColumn) {
  ColumnIntervals m;
  m.lower_begin = m.lower_end = m.upper_begin = {0, 0, 0};
  m.upper_end = {0, 5, 0};
  auto r = RowRunsFromColumnIntervals(4, 3, m);
  ASSERT_FALSE(r.IsOk());
  EXPECT_EQ(r.Message(), "column intervals: upper_end[1]: must be in 0..4, got 5");
  m.upper_end = {0, 0};
  r = RowRunsFromColumnIntervals(4, 3, m);
  ASSERT_FALSE(r.IsOk());
  EXPECT_EQ(r.Message(),
            "column intervals: upper_end: has 2 values, expected one per column (3)");
}
