// Tests of AnalyzeMask (engine/analysis/layout_analysis.h): its parts equal the engine's
// separate results (layout statistics, 128 x 128 figures, SelectKernel, the table), progress
// rises to 1, cancellation stops it, a failing selection is reported but not fatal, the run
// choice comes from the request's chooser (on the last q_len rows for a KV cache step), and bad
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

// The run choice comes from the request's chooser, called once with the request's mask,
// workload and device; its error is reported, not fatal; without one the engine's model of
// the kernels' rules answers (ModelMhaRun) and says so.
TEST(LayoutAnalysis, RunChoiceComesFromTheChooser) {
  const Mask m = BigBird(256);
  AnalysisRequest r = Request(256);
  r.with_table = false;
  auto none = AnalyzeMask(m, r);
  ASSERT_TRUE(none.IsOk()) << none.Message();
  ASSERT_TRUE(none->has_run_choice) << none->run_choice_why_not;
  EXPECT_EQ(none->run_choice.decided_by, "engine model");
  auto model = stof::engine::ModelMhaRun(m, r.workload, r.device);
  ASSERT_TRUE(model.IsOk()) << model.Message();
  EXPECT_EQ(none->run_choice, *model);

  int calls = 0;
  r.choose_run = [&](const Mask& mask, const stof::engine::Workload& w,
                     const stof::engine::DeviceSpec& d)
      -> stof::engine::Expected<stof::engine::MhaRunChoice> {
    ++calls;
    EXPECT_EQ(mask.Rows(), 256);
    EXPECT_EQ(w.seq_len, 256);
    EXPECT_EQ(d.name, r.device.name);
    stof::engine::MhaRunChoice c;
    c.kernel = "block_wise";
    c.block_m = 64, c.block_n = 128, c.num_warps = 5;
    c.family = "hopper";
    return c;
  };
  auto with = AnalyzeMask(m, r);
  ASSERT_TRUE(with.IsOk()) << with.Message();
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(with->has_run_choice);
  EXPECT_EQ(with->run_choice.block_n, 128);
  EXPECT_EQ(with->run_choice.decided_by, "kernels");
  EXPECT_EQ(with->run_choice.family, "hopper");

  r.choose_run = [](const Mask&, const stof::engine::Workload&, const stof::engine::DeviceSpec&)
      -> stof::engine::Expected<stof::engine::MhaRunChoice> {
    return stof::engine::MakeError("workload.head_dim: the sparse MHA kernels support 64 or 128");
  };
  auto failing = AnalyzeMask(m, r);
  ASSERT_TRUE(failing.IsOk()) << failing.Message();
  EXPECT_FALSE(failing->has_run_choice);
  EXPECT_EQ(failing->run_choice_why_not,
            "workload.head_dim: the sparse MHA kernels support 64 or 128");
  EXPECT_TRUE(failing->has_selection);  // Eq. 1 / Eq. 2 are unaffected
}

// A grouped-query KV cache step: what runs is asked on the mask's last q_len rows (as `stof
// select --q-len` cuts them), over every key.
TEST(LayoutAnalysis, RunChoiceOfAKvCacheStepTakesTheLastRows) {
  const Mask m = BigBird(256);
  AnalysisRequest r = Request(256);
  r.with_table = false;
  r.workload.heads = 8;
  r.workload.kv_heads = 2;
  r.workload.q_len = 4;
  int64_t rows_seen = 0;
  r.choose_run = [&](const Mask& mask, const stof::engine::Workload& w,
                     const stof::engine::DeviceSpec& d) {
    rows_seen = mask.Rows();
    auto last = m.LastRows(4);
    EXPECT_TRUE(last.IsOk() && mask == *last) << "the last 4 rows of the mask";
    EXPECT_EQ(mask.Cols(), 256);
    return stof::engine::ModelMhaRun(mask, w, d);
  };
  auto a = AnalyzeMask(m, r);
  ASSERT_TRUE(a.IsOk()) << a.Message();
  EXPECT_EQ(rows_seen, 4);
  ASSERT_TRUE(a->has_run_choice) << a->run_choice_why_not;
  EXPECT_EQ(a->run_choice.family, "hopper");
  EXPECT_NE(a->run_choice.note.find("packed GQA"), std::string::npos) << a->run_choice.note;
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
