// Tests of RowRuns::FromSpec (engine/mask/row_runs_spec.cpp) against the dense generator:
// for every pattern with default and explicit parameters, the causal flag, documents of
// several lengths, BigBird and random blocks with seeds, and and / or / not compositions, at
// L in {1, 63, 64, 100, 1000, 4096}: the runs equal FromMask(Generate(spec)) exactly, ToMask
// gives Generate's mask back, and the layout built from the runs equals the dense layout in
// every field at 16 x 16, 64 x 64, 128 x 64 and 128 x 128. Then lengths past Mask::kMaxLen
// (built as runs, refused as bits), the refusals that name the spec's field, and FromSpecRows:
// a range of rows equals those rows of the whole runs (every case; the last 16 rows of a
// 262144-key BigBird), bad ranges refused by name.
#include "engine/mask/row_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/layout/block_layout.h"
#include "engine/mask/mask_spec.h"
#include "layout_equal.h"

using stof::engine::BlockLayout;
using stof::engine::Mask;
using stof::engine::MaskSpec;
using stof::engine::RowRuns;

namespace {

MaskSpec Spec(const std::string& pattern, int64_t L) {
  MaskSpec s;
  s.pattern = pattern;
  s.seq_len = L;
  return s;
}

MaskSpec Causal(MaskSpec s) {
  s.causal = true;
  return s;
}

MaskSpec Compose(const std::string& op, int64_t L, std::vector<MaskSpec> operands) {
  MaskSpec s = Spec(op, L);
  s.operands = std::move(operands);
  return s;
}

// Documents of uneven lengths (L / 2, 1, 37, then pieces of 300) summing to L.
std::vector<int64_t> DocLengths(int64_t L) {
  std::vector<int64_t> out;
  int64_t left = L;
  for (int64_t want : {L / 2, int64_t{1}, int64_t{37}}) {
    const int64_t n = std::min(want, left);
    if (n > 0) out.push_back(n);
    left -= n;
  }
  while (left > 0) {
    out.push_back(std::min<int64_t>(300, left));
    left -= out.back();
  }
  return out;
}

// Every pattern, default and explicit parameters (clamped so that each is valid at L = 1),
// the causal flag and compositions, all at length L.
std::vector<std::pair<std::string, MaskSpec>> Cases(int64_t L) {
  auto cap = [L](int64_t v) { return std::min(v, L); };
  std::vector<std::pair<std::string, MaskSpec>> c;
  c.emplace_back("full", Spec("full", L));
  c.emplace_back("causal", Spec("causal", L));
  c.emplace_back("sliding_window", Spec("sliding_window", L));
  MaskSpec sw = Spec("sliding_window", L);
  sw.width = cap(5);
  c.emplace_back("sliding_window w5 causal", Causal(sw));
  c.emplace_back("dilated", Spec("dilated", L));
  MaskSpec dil = Spec("dilated", L);
  dil.width = cap(4);
  dil.dilation = cap(3);
  c.emplace_back("dilated w4 r3", dil);
  dil.dilation = 0;
  c.emplace_back("dilated r0", dil);
  c.emplace_back("global", Spec("global", L));
  MaskSpec g0 = Spec("global", L);
  g0.global = 0;
  c.emplace_back("global g0", g0);
  c.emplace_back("random_blocks", Spec("random_blocks", L));
  MaskSpec rb = Spec("random_blocks", L);
  rb.fill = 0.3;
  rb.block = cap(3);
  rb.seed = 7;
  c.emplace_back("random_blocks f0.3 b3 s7", rb);
  rb.fill = 1.0;
  rb.block = cap(16);
  c.emplace_back("random_blocks f1 b16 causal", Causal(rb));
  c.emplace_back("longformer", Spec("longformer", L));
  c.emplace_back("longformer causal", Causal(Spec("longformer", L)));
  c.emplace_back("bigbird", Spec("bigbird", L));
  MaskSpec bb = Spec("bigbird", L);
  bb.seed = 42;
  bb.fill = 0.25;
  bb.block = cap(24);
  bb.width = cap(9);
  bb.global = cap(3);
  c.emplace_back("bigbird s42 f0.25 b24 w9 g3", bb);
  bb.seed = 5;
  bb.block = cap(7);
  c.emplace_back("bigbird s5 b7 causal", Causal(bb));
  // Blocks whose nearest cell lies exactly w from the diagonal (8k - 7 = 9): just outside the
  // band, so candidates.
  bb.seed = 3;
  bb.block = cap(8);
  bb.global = cap(2);
  c.emplace_back("bigbird s3 b8 w9 g2", bb);
  MaskSpec doc = Spec("document", L);
  doc.doc_lengths = DocLengths(L);
  c.emplace_back("document", doc);
  c.emplace_back("document causal", Causal(doc));
  MaskSpec one_doc = Spec("document", L);
  one_doc.doc_lengths = {L};
  c.emplace_back("document one", one_doc);
  c.emplace_back("or(sliding_window w5, global)", Compose("or", L, {sw, Spec("global", L)}));
  c.emplace_back("and(bigbird, not(causal))",
                 Compose("and", L, {bb, Compose("not", L, {Spec("causal", L)})}));
  c.emplace_back("not(document)", Compose("not", L, {doc}));
  c.emplace_back("or(dilated, random_blocks, document) causal",
                 Causal(Compose("or", L, {dil, rb, doc})));
  c.emplace_back("and(or(causal, global), not(random_blocks))",
                 Compose("and", L,
                         {Compose("or", L, {Spec("causal", L), Spec("global", L)}),
                          Compose("not", L, {Spec("random_blocks", L)})}));
  return c;
}

constexpr int64_t kBlocks[][2] = {{16, 16}, {64, 64}, {128, 64}, {128, 128}};

}  // namespace

TEST(RowRunsSpec, EveryPatternEqualsTheDenseGeneratorAndItsLayouts) {
  for (int64_t L : {1, 63, 64, 100, 1000, 4096}) {
    for (const auto& [name, spec] : Cases(L)) {
      SCOPED_TRACE(name + " L=" + std::to_string(L));
      auto dense = Generate(spec);
      ASSERT_TRUE(dense.IsOk()) << dense.Message();
      auto runs = RowRuns::FromSpec(spec);
      ASSERT_TRUE(runs.IsOk()) << runs.Message();
      ASSERT_EQ(*runs, RowRuns::FromMask(*dense));
      EXPECT_EQ(runs->Count(), dense->Count());
      auto back = runs->ToMask();
      ASSERT_TRUE(back.IsOk()) << back.Message();
      ASSERT_TRUE(*back == *dense);
      for (const auto& b : kBlocks) {
        SCOPED_TRACE(std::to_string(b[0]) + "x" + std::to_string(b[1]));
        auto want = BlockLayout::Build(*dense, b[0], b[1]);
        auto got = BlockLayout::Build(*runs, b[0], b[1]);
        ASSERT_TRUE(want.IsOk() && got.IsOk()) << want.Message() << got.Message();
        ASSERT_NO_FATAL_FAILURE(stof::engine::testing::ExpectSameLayout(*got, *want));
        EXPECT_EQ(got->ToRowRuns(), *runs);
      }
    }
  }
}

TEST(RowRunsSpec, SeedsChooseTheSameBlocksAsGenerate) {
  // Several seeds at a length where the random grid is ragged (1000 = 15 * 64 + 40).
  for (uint64_t seed : {0u, 1u, 2u, 99u, 123456789u}) {
    for (const char* pattern : {"bigbird", "random_blocks"}) {
      MaskSpec s = Spec(pattern, 1000);
      s.seed = seed;
      SCOPED_TRACE(std::string(pattern) + " seed " + std::to_string(seed));
      auto runs = RowRuns::FromSpec(s);
      ASSERT_TRUE(runs.IsOk()) << runs.Message();
      EXPECT_EQ(*runs, RowRuns::FromMask(*Generate(s)));
    }
  }
}

TEST(RowRunsSpec, LengthsPastMaskMaxLenAreRunsNotBits) {
  const int64_t L = Mask::kMaxLen + 1000;
  MaskSpec s = Spec("sliding_window", L);
  s.width = 3;
  EXPECT_FALSE(Generate(s).IsOk());
  auto runs = RowRuns::FromSpec(s);
  ASSERT_TRUE(runs.IsOk()) << runs.Message();
  EXPECT_EQ(runs->Rows(), L);
  EXPECT_EQ(runs->RunCount(), L);
  EXPECT_EQ(runs->Count(), 5 * L - 2 * 3);  // 2w - 1 per row, minus w (w - 1) at the edges
  EXPECT_TRUE(runs->Get(L - 1, L - 3));
  EXPECT_FALSE(runs->Get(L - 1, L - 4));
  auto dense = runs->ToMask();
  ASSERT_FALSE(dense.IsOk());
  EXPECT_NE(dense.Message().find("a square mask must be at most 32768 on a side"),
            std::string::npos);
  // Defaults resolve at the long length: w = g = round(sqrt(L)).
  auto bb = RowRuns::FromSpec(Spec("bigbird", L));
  ASSERT_TRUE(bb.IsOk()) << bb.Message();
  EXPECT_TRUE(bb->Get(L - 1, 0));  // global column, w = g = 184
  EXPECT_TRUE(bb->Get(0, L - 1));  // global row
}

TEST(RowRunsSpec, RefusalsNameTheSpecField) {
  auto too_long = RowRuns::FromSpec(Spec("causal", RowRuns::kMaxLen + 1));
  ASSERT_FALSE(too_long.IsOk());
  EXPECT_EQ(too_long.Message(), "mask.seq_len: must be in 1..1048576, got 1048577");
  auto zero = RowRuns::FromSpec(Spec("causal", 0));
  ASSERT_FALSE(zero.IsOk());
  EXPECT_EQ(zero.Message(), "mask.seq_len: must be in 1..1048576, got 0");
  MaskSpec w = Spec("sliding_window", 100);
  w.width = 0;
  auto bad_w = RowRuns::FromSpec(w);
  ASSERT_FALSE(bad_w.IsOk());
  EXPECT_EQ(bad_w.Message(), "mask.width: must be in 1..100, got 0");
  // A random-block grid past 2^15 blocks per side (2^30 draws) is refused by its block size,
  // also inside a composition.
  MaskSpec rb = Spec("random_blocks", RowRuns::kMaxLen);
  rb.block = 16;
  auto grid = RowRuns::FromSpec(Compose("or", RowRuns::kMaxLen, {Spec("causal", 0), rb}));
  ASSERT_FALSE(grid.IsOk());
  EXPECT_EQ(grid.Message(),
            "mask.operands[1].block: 16 makes a random-block grid of 65536 x 65536 at seq_len "
            "1048576 (one random draw per block); at most 32768 blocks per side, so a block of "
            "at least 32");
  MaskSpec unknown = Spec("diagonal", 10);
  EXPECT_NE(RowRuns::FromSpec(unknown).Message().find("mask.pattern: unknown 'diagonal'"),
            std::string::npos);
}

// A range of rows equals those rows of the whole runs, for every case above (compositions and
// the causal flag on the range's own row numbers): the last 1 and 7 rows, a middle range, all.
TEST(RowRunsSpec, RowRangesEqualThoseRowsOfTheWholeMask) {
  for (int64_t L : {1, 100, 1000}) {
    for (const auto& [name, spec] : Cases(L)) {
      SCOPED_TRACE(name + " L=" + std::to_string(L));
      auto whole = RowRuns::FromSpec(spec);
      ASSERT_TRUE(whole.IsOk()) << whole.Message();
      const std::pair<int64_t, int64_t> ranges[] = {
          {L - 1, 1}, {std::max<int64_t>(0, L - 7), std::min<int64_t>(7, L)}, {L / 3, L / 3 + 1},
          {0, L}};
      for (const auto& [first, rows] : ranges) {
        if (rows < 1 || first + rows > L) continue;
        SCOPED_TRACE("rows " + std::to_string(first) + " + " + std::to_string(rows));
        auto part = RowRuns::FromSpecRows(spec, first, rows);
        ASSERT_TRUE(part.IsOk()) << part.Message();
        ASSERT_EQ(part->Rows(), rows);
        ASSERT_EQ(part->Cols(), L);
        for (int64_t r = 0; r < rows; ++r) {
          const auto got = part->Row(r), want = whole->Row(first + r);
          ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()))
              << "row " << first + r;
        }
      }
    }
  }
}

TEST(RowRunsSpec, LastRowsOfALongBigBirdAndBadRanges) {
  // 16 rows of a 262144-key BigBird: its global columns and band, from the rows alone.
  const int64_t L = 262144;
  MaskSpec bb = Spec("bigbird", L);
  auto rows = RowRuns::FromSpecRows(bb, L - 16, 16);
  ASSERT_TRUE(rows.IsOk()) << rows.Message();
  EXPECT_EQ(rows->Rows(), 16);
  EXPECT_TRUE(rows->Get(15, 0));      // a global column (g = round(sqrt(L)) = 512)
  EXPECT_TRUE(rows->Get(15, L - 1));  // the band around the diagonal
  auto whole = RowRuns::FromSpec(bb);  // the same rows of the whole runs
  ASSERT_TRUE(whole.IsOk()) << whole.Message();
  for (int64_t r = 0; r < 16; ++r) {
    const auto got = rows->Row(r), want = whole->Row(L - 16 + r);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end())) << "row " << r;
  }
  auto mask = rows->LastRowsToMask(16);
  ASSERT_TRUE(mask.IsOk()) << mask.Message();
  EXPECT_EQ(mask->Rows(), 16);
  EXPECT_EQ(mask->Cols(), L);
  // A window at the same length: exactly the band's cells.
  MaskSpec sw = Spec("sliding_window", L);
  sw.width = 4096;
  auto last = RowRuns::FromSpecRows(sw, L - 1, 1);
  ASSERT_TRUE(last.IsOk()) << last.Message();
  EXPECT_EQ(last->Count(), 4096);
  auto bad = RowRuns::FromSpecRows(sw, L - 1, 2, "--q-len");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_EQ(bad.Message(), "--q-len: rows 262143..262144 are not all inside the 262144-long mask");
  auto none = RowRuns::FromSpecRows(sw, 0, 0, "--q-len");
  ASSERT_FALSE(none.IsOk());
  EXPECT_EQ(none.Message(), "--q-len: expected 1..262144 (the mask's rows), got 0");
}
