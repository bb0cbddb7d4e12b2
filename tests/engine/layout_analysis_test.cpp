// Tests of AnalyzeMask and AnalyzeRowRuns (engine/analysis/layout_analysis.h): its parts equal
// the engine's separate results (layout statistics, 128 x 128 figures, SelectKernel, the
// table), progress rises to 1, cancellation stops it, a failing selection is reported but not
// fatal, the run choice comes from the request's chooser (on the last q_len rows for a KV
// cache step), bad input is refused with the field named; from runs, every field equal to the
// bits' analysis up to 32768, and past it the mask's figures without a workload.
#include "engine/analysis/layout_analysis.h"

#include <gtest/gtest.h>

#include "engine/mask/mask_spec.h"
#include "tests/engine/layout_equal.h"
#include "tests/engine/test_masks.h"

using stof::engine::AnalysisRequest;
using stof::engine::BlockLayout;
using stof::engine::Mask;
using stof::engine::MaskAnalysis;
using stof::engine::RowRuns;

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

void ExpectSameWork(const stof::engine::LayoutWork& got, const stof::engine::LayoutWork& want) {
  EXPECT_EQ(got.block_kernel_flops, want.block_kernel_flops);
  EXPECT_EQ(got.valid_flops, want.valid_flops);
  EXPECT_EQ(got.wasted_flops, want.wasted_flops);
  EXPECT_EQ(got.wasted_fraction, want.wasted_fraction);
}

void ExpectSameAnalysis(const MaskAnalysis& got, const MaskAnalysis& want) {
  stof::engine::testing::ExpectSameLayout(got.layout, want.layout);
  stof::engine::testing::ExpectSameStats(got.stats, want.stats);
  stof::engine::testing::ExpectSameStats(got.flex_stats, want.flex_stats);
  ExpectSameWork(got.work, want.work);
  ExpectSameWork(got.flex_work, want.flex_work);
  EXPECT_EQ(got.row_valid, want.row_valid);
  EXPECT_EQ(got.has_selection, want.has_selection);
  EXPECT_EQ(got.selection_error, want.selection_error);
  EXPECT_EQ(got.selection.eq1.valid_blocks, want.selection.eq1.valid_blocks);
  EXPECT_EQ(got.selection.eq1.threshold, want.selection.eq1.threshold);
  EXPECT_EQ(got.selection.kernel, want.selection.kernel);
  EXPECT_EQ(got.selection.block_m, want.selection.block_m);
  EXPECT_EQ(got.selection.block_n, want.selection.block_n);
  EXPECT_EQ(got.selection.num_warps, want.selection.num_warps);
  EXPECT_EQ(got.has_run_choice, want.has_run_choice);
  EXPECT_EQ(got.run_choice, want.run_choice);
  EXPECT_EQ(got.run_choice_why_not, want.run_choice_why_not);
  ASSERT_EQ(got.table.size(), want.table.size());
  for (size_t i = 0; i < got.table.size(); ++i) {
    stof::engine::testing::ExpectSameStats(got.table[i].stats, want.table[i].stats);
    ExpectSameWork(got.table[i].work, want.table[i].work);
  }
  EXPECT_TRUE(got.has_work);
}

// Up to 32768 the analysis from runs is the analysis from bits, field by field: ragged
// BigBird and causal, square calls and a KV cache's last 7 rows.
TEST(LayoutAnalysis, FromRunsEqualsFromBits) {
  for (const char* pattern : {"bigbird", "causal"}) {
    for (int64_t n : {1000, 3000}) {
      const Mask m = stof::engine::testing::PatternMask(pattern, n);
      const RowRuns runs = RowRuns::FromMask(m);
      for (int64_t q_len : {0, 7}) {
        SCOPED_TRACE(std::string(pattern) + " L=" + std::to_string(n) + " q_len " +
                     std::to_string(q_len));
        AnalysisRequest r = Request(n);
        r.workload.q_len = q_len;
        auto want = AnalyzeMask(m, r);
        auto got = AnalyzeRowRuns(runs, r);
        ASSERT_TRUE(want.IsOk() && got.IsOk()) << want.Message() << got.Message();
        ExpectSameAnalysis(*got, *want);
      }
    }
  }
}

// Past 32768 the analysis gives the mask's figures (layout, 128 x 128 statistics, the table's
// statistics) and says why it has no work, selection or run choice: a square call stops at
// 32768. Causal at 131072: 1024 diagonal part blocks of 128 and the full ones below them.
TEST(LayoutAnalysis, FromRunsPastASquareCall) {
  stof::engine::MaskSpec spec;
  spec.pattern = "causal";
  spec.seq_len = 131072;
  auto runs = RowRuns::FromSpec(spec);
  ASSERT_TRUE(runs.IsOk()) << runs.Message();
  AnalysisRequest r = Request(131072);
  r.block_m = r.block_n = 128;
  double last = -1;
  auto a = AnalyzeRowRuns(*runs, r, [&](double f, const std::string&) {
    EXPECT_GE(f, last);
    last = f;
    return true;
  });
  ASSERT_TRUE(a.IsOk()) << a.Message();
  EXPECT_DOUBLE_EQ(last, 1.0);
  EXPECT_FALSE(a->has_work);
  EXPECT_NE(a->work_why_not.find("analysis: workload: q_len x seq_len: 131072 x 131072"),
            std::string::npos)
      << a->work_why_not;
  EXPECT_FALSE(a->has_selection);
  EXPECT_EQ(a->selection_error, a->work_why_not);
  EXPECT_FALSE(a->has_run_choice);
  EXPECT_EQ(a->run_choice_why_not, a->work_why_not);
  EXPECT_EQ(a->stats.part_blocks, 1024);
  EXPECT_EQ(a->stats.full_blocks, 1024 * 1023 / 2);
  EXPECT_EQ(a->stats.nnz, int64_t{131072} * 131073 / 2);
  stof::engine::testing::ExpectSameStats(a->flex_stats, a->stats);  // both at 128 x 128
  EXPECT_EQ(a->work.block_kernel_flops, 0);
  ASSERT_EQ(a->table.size(), 16u);
  EXPECT_EQ(a->table.front().stats.part_blocks, 8192);  // 16 x 16: the diagonal
  EXPECT_EQ(a->table.front().work.valid_flops, 0);
  EXPECT_EQ(a->row_valid.back(), 1024);
}

TEST(LayoutAnalysis, FromRunsRefusesEmptyNonSquareAndMismatchedRuns) {
  EXPECT_EQ(AnalyzeRowRuns(RowRuns(), Request(64)).Message(), "analysis: the mask is empty");
  auto wide = RowRuns::Create(100, 200);
  ASSERT_TRUE(wide.IsOk());
  EXPECT_EQ(AnalyzeRowRuns(*wide, Request(100)).Message(),
            "analysis: the mask is 100 x 200, attention needs a square mask");
  auto square = RowRuns::Create(100, 100);
  ASSERT_TRUE(square.IsOk());
  EXPECT_EQ(AnalyzeRowRuns(*square, Request(64)).Message(),
            "analysis: workload.seq_len 64 differs from the mask's L = 100");
  AnalysisRequest bad = Request(100);
  bad.workload.heads = 0;  // a length a call runs: the workload's error is the analysis's
  EXPECT_NE(AnalyzeRowRuns(*square, bad).Message().find("analysis: workload: heads"),
            std::string::npos);
}

}  // namespace
