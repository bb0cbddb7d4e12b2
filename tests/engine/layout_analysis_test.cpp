// Tests of AnalyzeMask (engine/analysis/layout_analysis.h): its parts equal the engine's
// separate results (layout statistics, 128 x 128 figures, SelectKernel, the table), progress
// rises to 1, cancellation stops it, a failing selection is reported but not fatal, and bad
// input is refused with the field named.
#include "engine/analysis/layout_analysis.h"

#include <gtest/gtest.h>

#include "tests/engine/test_masks.h"

using stof::engine::AnalysisRequest;
using stof::engine::BlockLayout;
using stof::engine::Mask;

namespace {

Mask BigBird(int64_t n) { return stof::engine::testing::PatternMask("bigbird", n); }

AnalysisRequest Request(int64_t n) {
  AnalysisRequest r;
  r.block_m = 64;
  r.block_n = 32;
  r.workload.seq_len = n;
  r.device = *stof::engine::FindBuiltinDevice("h100");
  return r;
}

TEST(LayoutAnalysis, PartsEqualTheSeparateResults) {
  const Mask m = BigBird(1024);
  double last = -1;
  auto a = AnalyzeMask(m, Request(1024), [&](double f, const std::string&) {
    EXPECT_GE(f, last);
    last = f;
    return true;
  });
  ASSERT_TRUE(a.IsOk()) << a.Message();
  EXPECT_DOUBLE_EQ(last, 1.0);
  auto l = BlockLayout::Build(m, 64, 32);
  ASSERT_TRUE(l.IsOk());
  EXPECT_EQ(a->stats.full_blocks, l->Stats().full_blocks);
  EXPECT_EQ(a->stats.part_blocks, l->Stats().part_blocks);
  EXPECT_EQ(a->layout.ToMask(), m);
  EXPECT_EQ(a->row_valid.size(), 16u);
  auto flex = BlockLayout::Build(m, 128, 128);
  ASSERT_TRUE(flex.IsOk());
  EXPECT_EQ(a->flex_stats.part_blocks, flex->Stats().part_blocks);
  EXPECT_EQ(a->flex_stats.block_m, 128);
  ASSERT_TRUE(a->has_selection) << a->selection_error;
  auto sel = SelectKernel(m, Request(1024).workload, Request(1024).device);
  ASSERT_TRUE(sel.IsOk());
  EXPECT_EQ(a->selection.eq1.valid_blocks, sel->eq1.valid_blocks);
  EXPECT_EQ(a->selection.eq1.valid_blocks, 844);  // docs/kernel-selection.md
  EXPECT_EQ(a->selection.block_m, sel->block_m);
  EXPECT_EQ(a->table.size(), 16u);
  EXPECT_GT(a->flex_work.wasted_fraction, a->table.front().work.wasted_fraction);
}

TEST(LayoutAnalysis, WithoutTableAndCancel) {
  const Mask m = BigBird(256);
  AnalysisRequest r = Request(256);
  r.with_table = false;
  auto a = AnalyzeMask(m, r);
  ASSERT_TRUE(a.IsOk());
  EXPECT_TRUE(a->table.empty());
  auto c = AnalyzeMask(m, Request(256), [](double f, const std::string&) { return f < 0.5; });
  ASSERT_FALSE(c.IsOk());
  EXPECT_EQ(c.Message(), "analysis: cancelled");
}

TEST(LayoutAnalysis, FailingSelectionIsReportedNotFatal) {
  const Mask m = BigBird(256);
  AnalysisRequest r = Request(256);
  r.device.smem_per_sm_bytes = 1024;  // no Eq. 2 candidate fits
  r.device.smem_per_block_bytes = 1024;
  auto a = AnalyzeMask(m, r);
  ASSERT_TRUE(a.IsOk()) << a.Message();
  EXPECT_FALSE(a->has_selection);
  EXPECT_FALSE(a->selection_error.empty());
  EXPECT_EQ(a->stats.block_m, 64);
}

TEST(LayoutAnalysis, BadInput) {
  const Mask m = BigBird(256);
  AnalysisRequest r = Request(512);
  auto mismatch = AnalyzeMask(m, r);
  ASSERT_FALSE(mismatch.IsOk());
  EXPECT_NE(mismatch.Message().find("workload.seq_len 512 differs from the mask's L = 256"),
            std::string::npos) << mismatch.Message();
  r = Request(256);
  r.block_n = 48;
  EXPECT_FALSE(AnalyzeMask(m, r).IsOk());
  EXPECT_FALSE(AnalyzeMask(Mask{}, Request(256)).IsOk());
  auto rect = Mask::Create(64, 32);
  ASSERT_TRUE(rect.IsOk());
  auto non_square = AnalyzeMask(*rect, Request(64));
  ASSERT_FALSE(non_square.IsOk());
  EXPECT_NE(non_square.Message().find("square"), std::string::npos);
}

}  // namespace
