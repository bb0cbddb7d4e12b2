// Tests of BuildBlockSizeTable (engine/layout/block_size_table.h): every row equals the
// statistics of BlockLayout::Build at that size (from the runs and from a layout per size), the
// 16 default sizes, progress and cancellation, and refusal of bad sizes and workloads.
#include "engine/layout/block_size_table.h"

#include <gtest/gtest.h>

#include "engine/mask/row_runs.h"
#include "tests/engine/layout_equal.h"
#include "tests/engine/test_masks.h"

using stof::engine::BlockLayout;
using stof::engine::Mask;
using stof::engine::Workload;

namespace {

Mask BigBird(int64_t n) { return stof::engine::testing::PatternMask("bigbird", n); }

TEST(BlockSizeTable, RowsMatchBuildAtEachSize) {
  const Mask m = BigBird(1000);  // ragged at every size
  Workload w;
  w.seq_len = 1000;
  const auto& sizes = stof::engine::DefaultTableBlockSizes();
  ASSERT_EQ(sizes.size(), 16u);
  EXPECT_EQ(sizes.front(), (std::pair<int64_t, int64_t>{16, 16}));
  EXPECT_EQ(sizes[1], (std::pair<int64_t, int64_t>{16, 32}));
  EXPECT_EQ(sizes.back(), (std::pair<int64_t, int64_t>{128, 128}));
  int64_t calls = 0;
  auto table = BuildBlockSizeTable(m, w, sizes, [&](int64_t done, int64_t total) {
    EXPECT_EQ(done, ++calls);
    EXPECT_EQ(total, 16);
    return true;
  });
  ASSERT_TRUE(table.IsOk()) << table.Message();
  ASSERT_EQ(table->size(), 16u);
  EXPECT_EQ(calls, 16);
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto layout = BlockLayout::Build(m, sizes[i].first, sizes[i].second);
    ASSERT_TRUE(layout.IsOk());
    const auto want = layout->Stats();
    const auto& got = (*table)[i].stats;
    EXPECT_EQ(got.block_m, sizes[i].first);
    EXPECT_EQ(got.block_n, sizes[i].second);
    EXPECT_EQ(got.full_blocks, want.full_blocks) << i;
    EXPECT_EQ(got.part_blocks, want.part_blocks) << i;
    EXPECT_EQ(got.empty_blocks, want.empty_blocks) << i;
    EXPECT_EQ(got.index_bytes, want.index_bytes) << i;
    EXPECT_DOUBLE_EQ((*table)[i].work.wasted_fraction, want.wasted_fraction) << i;
  }
  // Smaller blocks waste less: 16 x 16 wastes less than 128 x 128 on BigBird.
  EXPECT_LT(table->front().work.wasted_fraction, table->back().work.wasted_fraction);
}

// Noise has more runs than the mask has words, so the table builds a layout per size there
// and takes the runs' statistics elsewhere: both equal Build's statistics in every field.
TEST(BlockSizeTable, RunsAndLayoutPathsBothMatchBuild) {
  const Mask noise = stof::engine::testing::RandomMask(700, 700, 0.5, 9);
  const Mask bigbird = BigBird(700);
  for (const Mask* m : {&noise, &bigbird}) {
    const bool noisy = m == &noise;
    SCOPED_TRACE(noisy ? "noise" : "bigbird");
    const int64_t mask_bytes = static_cast<int64_t>(m->Words().size() * sizeof(uint64_t));
    EXPECT_EQ(stof::engine::RowRuns::CountRuns(*m) * 8 > mask_bytes, noisy);
    Workload w;
    w.seq_len = 700;
    auto table = BuildBlockSizeTable(*m, w, stof::engine::DefaultTableBlockSizes());
    ASSERT_TRUE(table.IsOk()) << table.Message();
    for (const auto& row : *table) {
      auto layout = BlockLayout::Build(*m, row.stats.block_m, row.stats.block_n);
      ASSERT_TRUE(layout.IsOk());
      stof::engine::testing::ExpectSameStats(row.stats, layout->Stats());
    }
  }
}

TEST(BlockSizeTable, CancelAndBadInput) {
  const Mask m = BigBird(256);
  Workload w;
  w.seq_len = 256;
  auto cancelled = BuildBlockSizeTable(m, w, stof::engine::DefaultTableBlockSizes(),
                                       [](int64_t done, int64_t) { return done < 3; });
  ASSERT_FALSE(cancelled.IsOk());
  EXPECT_EQ(cancelled.Message(), "block-size table: cancelled");

  auto bad = BuildBlockSizeTable(m, w, {{64, 64}, {48, 64}});
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("48x64"), std::string::npos) << bad.Message();
  EXPECT_FALSE(BuildBlockSizeTable(m, w, {}).IsOk());
  w.seq_len = 512;
  auto mismatch = BuildBlockSizeTable(m, w, {{64, 64}});
  ASSERT_FALSE(mismatch.IsOk());
  EXPECT_NE(mismatch.Message().find("seq_len"), std::string::npos) << mismatch.Message();
}

}  // namespace
