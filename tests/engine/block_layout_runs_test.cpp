// Tests of BlockLayout::Build(const RowRuns&), BlockLayout::StatsOf and BlockLayout::ToRowRuns
// (engine/layout/block_layout_runs.cpp): against the dense Build field by field for every
// block-size pair in {16..256}^2 on random and structured masks (test_masks.h), square,
// non-square and ragged; refusals (empty runs, bad block sizes, more valid blocks than int32
// indices hold); and masks that exist only as runs, causal, sliding window (w = 4096) and
// documents of 4096 at L = 131072 and 262144, at 128 x 128, checked against counts worked
// out by hand and round-tripped through ToRowRuns.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/layout/block_layout.h"
#include "engine/mask/mask_spec.h"
#include "engine/mask/row_runs.h"
#include "layout_equal.h"
#include "test_masks.h"

using stof::engine::BlockClass;
using stof::engine::BlockLayout;
using stof::engine::Mask;
using stof::engine::MaskSpec;
using stof::engine::RowRuns;
using stof::engine::testing::RandomMask;
using stof::engine::testing::StructuredMask;

namespace {

constexpr int64_t kSizes[] = {16, 32, 64, 128, 256};

void ExpectSameAsDenseAllBlockSizes(const Mask& mask) {
  const RowRuns runs = RowRuns::FromMask(mask);
  for (int64_t bm : kSizes) {
    for (int64_t bn : kSizes) {
      SCOPED_TRACE(std::to_string(mask.Rows()) + "x" + std::to_string(mask.Cols()) + " @ " +
                   std::to_string(bm) + "x" + std::to_string(bn));
      auto want = BlockLayout::Build(mask, bm, bn);
      auto got = BlockLayout::Build(runs, bm, bn);
      ASSERT_TRUE(want.IsOk() && got.IsOk()) << want.Message() << got.Message();
      ASSERT_NO_FATAL_FAILURE(stof::engine::testing::ExpectSameLayout(*got, *want));
      auto stats = BlockLayout::StatsOf(runs, bm, bn);
      ASSERT_TRUE(stats.IsOk()) << stats.Message();
      ASSERT_NO_FATAL_FAILURE(stof::engine::testing::ExpectSameStats(*stats, want->Stats()));
      ASSERT_EQ(got->ToRowRuns(), runs);
      ASSERT_TRUE(got->ToMask() == mask);
    }
  }
}

MaskSpec Spec(const std::string& pattern, int64_t L) {
  MaskSpec s;
  s.pattern = pattern;
  s.seq_len = L;
  return s;
}

// Builds the spec as runs, its 128 x 128 layout from them, and checks the layout gives the
// runs back and StatsOf its statistics; returns the layout.
BlockLayout LongLayout(const MaskSpec& spec, RowRuns* runs_out) {
  auto runs = RowRuns::FromSpec(spec);
  EXPECT_TRUE(runs.IsOk()) << runs.Message();
  auto l = BlockLayout::Build(*runs, 128, 128);
  EXPECT_TRUE(l.IsOk()) << l.Message();
  EXPECT_TRUE(l->ToRowRuns() == *runs) << "ToRowRuns round trip";
  auto stats = BlockLayout::StatsOf(*runs, 128, 128);
  EXPECT_TRUE(stats.IsOk()) << stats.Message();
  stof::engine::testing::ExpectSameStats(*stats, l->Stats());
  EXPECT_EQ(l->ToMask().Rows(), 0) << "no dense mask past Mask::kMaxLen";
  *runs_out = std::move(runs).Value();
  return std::move(l).Value();
}

}  // namespace

TEST(BlockLayoutRuns, EqualsTheDenseLayoutOnRandomMasksAllBlockSizes) {
  uint64_t seed = 3;
  for (int64_t len : {1, 17, 256, 1000}) {
    for (double density : {0.0, 0.02, 0.3, 1.0}) {
      SCOPED_TRACE("L=" + std::to_string(len) + " density=" + std::to_string(density));
      ASSERT_NO_FATAL_FAILURE(
          ExpectSameAsDenseAllBlockSizes(RandomMask(len, len, density, seed++)));
    }
  }
}

TEST(BlockLayoutRuns, EqualsTheDenseLayoutOnStructuredRaggedAndNonSquare) {
  uint64_t seed = 40;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{512, 512}, {1000, 1000}, {3000, 3000},
                            {300, 1000}, {1000, 130}, {257, 4099}}) {
    ASSERT_NO_FATAL_FAILURE(ExpectSameAsDenseAllBlockSizes(StructuredMask(rows, cols, seed++)));
  }
}

TEST(BlockLayoutRuns, RefusesEmptyRunsBadBlockSizesAndTooManyBlocks) {
  auto e = BlockLayout::Build(RowRuns(), 64, 64);
  ASSERT_FALSE(e.IsOk());
  EXPECT_EQ(e.Message(), "layout: row runs: is empty (0 x 0); each side must be at least 1");
  EXPECT_EQ(BlockLayout::StatsOf(RowRuns(), 64, 64).Message(),
            "layout: row runs: is empty (0 x 0); each side must be at least 1");
  const RowRuns r = *RowRuns::Create(64, 64);
  EXPECT_EQ(BlockLayout::Build(r, 48, 64).Message(),
            "layout: block_m: must be a power of two in 16..256, got 48");
  EXPECT_EQ(BlockLayout::Build(r, 64, 512).Message(),
            "layout: block_n: must be a power of two in 16..256, got 512");
  // Nothing attended: no blocks, all-zero row pointers.
  auto none = BlockLayout::Build(r, 16, 16);
  ASSERT_TRUE(none.IsOk());
  EXPECT_EQ(none->Stats().empty_blocks, 16);
  EXPECT_EQ(none->LoadRowPtr(), std::vector<int32_t>(5, 0));

  // Causal at L = 2^20 and 16 x 16: n (n + 1) / 2 valid blocks for n = 65536, past int32.
  auto causal = RowRuns::FromSpec(Spec("causal", RowRuns::kMaxLen));
  ASSERT_TRUE(causal.IsOk()) << causal.Message();
  auto big = BlockLayout::Build(*causal, 16, 16);
  ASSERT_FALSE(big.IsOk());
  EXPECT_EQ(big.Message(),
            "layout: row runs: 2147516416 valid blocks at 16 x 16 exceed the int32 CSR indices "
            "(at most 2147483647); use larger blocks");
  // Its statistics need no CSR arrays: n (n - 1) / 2 full and n part blocks, every row's
  // blocks, 3 (n + 1) row pointers and two column lists of int32.
  auto stats16 = BlockLayout::StatsOf(*causal, 16, 16);
  ASSERT_TRUE(stats16.IsOk()) << stats16.Message();
  const int64_t n16 = 65536;
  EXPECT_EQ(stats16->full_blocks, n16 * (n16 - 1) / 2);
  EXPECT_EQ(stats16->part_blocks, n16);
  EXPECT_EQ(stats16->nnz, RowRuns::kMaxLen * (RowRuns::kMaxLen + 1) / 2);
  EXPECT_EQ(stats16->min_blocks_per_row, 1);
  EXPECT_EQ(stats16->max_blocks_per_row, n16);
  EXPECT_EQ(stats16->index_bytes, 4 * (3 * (n16 + 1) + 2 * (n16 * (n16 + 1) / 2)));
  EXPECT_EQ(stats16->bitmap_bytes, n16 * 32);
  // The same mask at 256 x 256 fits: n = 4096, n (n - 1) / 2 full + n part.
  auto ok = BlockLayout::Build(*causal, 256, 256);
  ASSERT_TRUE(ok.IsOk()) << ok.Message();
  EXPECT_EQ(ok->Stats().full_blocks, int64_t{4096} * 4095 / 2);
  EXPECT_EQ(ok->Stats().part_blocks, 4096);
}

TEST(BlockLayoutRuns, LongCausalSlidingWindowAndDocumentsFromRuns) {
  for (int64_t L : {131072, 262144}) {
    SCOPED_TRACE("L=" + std::to_string(L));
    const int64_t n = L / 128;  // blocks per side

    // Causal: the n diagonal blocks are part (a lower triangle with its diagonal, 128 * 129 / 2
    // cells), the n (n - 1) / 2 below them full.
    RowRuns causal;
    const BlockLayout c = LongLayout(Spec("causal", L), &causal);
    EXPECT_EQ(causal.RunCount(), L);
    EXPECT_EQ(causal.Count(), L * (L + 1) / 2);
    EXPECT_EQ(c.Stats().nnz, L * (L + 1) / 2);
    EXPECT_EQ(c.Stats().part_blocks, n);
    EXPECT_EQ(c.Stats().full_blocks, n * (n - 1) / 2);
    EXPECT_EQ(c.ClassAt(n - 1, n - 1), BlockClass::kPart);
    EXPECT_EQ(c.ClassAt(n - 1, 0), BlockClass::kFull);
    EXPECT_EQ(c.ClassAt(0, 1), BlockClass::kEmpty);
    EXPECT_EQ(c.PopcountAt(n - 1, n - 1), 128 * 129 / 2);
    EXPECT_EQ(c.LoadRowPtr().back(), n * (n + 1) / 2);
    // The last diagonal block's bitmap: row i holds bits i*128 .. i*128 + i.
    const uint64_t* last = c.PartBitmaps().data() + (n - 1) * c.BitmapWords();
    EXPECT_EQ(last[0], uint64_t{1});                // row 0: cell (0, 0)
    EXPECT_EQ(last[2], uint64_t{3});                // row 1: cells (1, 0), (1, 1)
    EXPECT_EQ(last[c.BitmapWords() - 1], ~uint64_t{0});  // row 127, upper half: all set

    // Sliding window w = 4096 = 32 blocks: blocks at offset |k| <= 31 are full, |k| = 32 part
    // (cells with |i - j| from 3969 to 4223), further ones empty.
    RowRuns band;
    MaskSpec sw = Spec("sliding_window", L);
    sw.width = 4096;
    const BlockLayout b = LongLayout(sw, &band);
    const int64_t w = 4096;
    EXPECT_EQ(band.Count(), L * (2 * w - 1) - w * (w - 1));
    EXPECT_EQ(b.Stats().nnz, L * (2 * w - 1) - w * (w - 1));
    EXPECT_EQ(b.Stats().full_blocks, 63 * n - 31 * 32);
    EXPECT_EQ(b.Stats().part_blocks, 2 * (n - 32));
    EXPECT_EQ(b.ClassAt(100, 100 + 31), BlockClass::kFull);
    EXPECT_EQ(b.ClassAt(100, 100 - 32), BlockClass::kPart);
    EXPECT_EQ(b.ClassAt(100, 100 + 33), BlockClass::kEmpty);
    // Offset +32: cell (i, j) attended when j - i < 4096, i.e. c < a in block coordinates.
    EXPECT_EQ(b.PopcountAt(100, 132), 128 * 127 / 2);

    // Documents of 4096: L / 4096 diagonal squares of 32 x 32 full blocks, nothing part.
    RowRuns docs;
    MaskSpec d = Spec("document", L);
    d.doc_lengths.assign(static_cast<size_t>(L / 4096), 4096);
    const BlockLayout dl = LongLayout(d, &docs);
    EXPECT_EQ(docs.RunCount(), L);
    EXPECT_EQ(dl.Stats().nnz, L * 4096);
    EXPECT_EQ(dl.Stats().full_blocks, (L / 4096) * 32 * 32);
    EXPECT_EQ(dl.Stats().part_blocks, 0);
    EXPECT_EQ(dl.Stats().max_blocks_per_row, 32);
    EXPECT_EQ(dl.ClassAt(n - 1, n - 32), BlockClass::kFull);
    EXPECT_EQ(dl.ClassAt(n - 1, n - 33), BlockClass::kEmpty);
  }
}
