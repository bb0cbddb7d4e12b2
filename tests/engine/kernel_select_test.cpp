// Tests of STOF's analytical kernel selection (engine/select/kernel_select.h): Eq. 1 and Eq. 2
// on cases whose arithmetic is written out in the comments, the enumeration order and tie
// rule, infeasible candidates, SelectKernel end to end, and the errors for bad inputs.
#include "engine/select/kernel_select.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/layout/block_layout.h"

using namespace stof::engine;

namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const Eq2Candidate* Find(const Eq2Result& r, int64_t bm, int64_t bn, int64_t warps) {
  for (const Eq2Candidate& c : r.candidates)
    if (c.block_m == bm && c.block_n == bn && c.num_warps == warps) return &c;
  return nullptr;
}

DeviceSpec H100() { return *FindBuiltinDevice("H100-SXM-80GB"); }

Workload BertBase() {  // B = 8, H = 12, L = 1024, d = 64
  Workload w;
  w.batch = 8;
  w.heads = 12;
  w.seq_len = 1024;
  w.head_dim = 64;
  return w;
}

Mask Band(int64_t L, int64_t half_width) {  // |i - j| <= half_width
  Mask m = *Mask::Create(L, L);
  for (int64_t i = 0; i < L; ++i) m.SetRange(i, i - half_width, i + half_width + 1);
  return m;
}

Mask BlockDiagonal(int64_t L, int64_t block) {
  Mask m = *Mask::Create(L, L);
  for (int64_t b = 0; b < L; b += block) m.SetRect(b, b + block, b, b + block);
  return m;
}

}  // namespace

// ---- names -------------------------------------------------------------------------------------

TEST(KernelSelectNames, RoundTripAndAliases) {
  EXPECT_STREQ(MhaKernelName(MhaKernel::kRowWise), "row_wise");
  EXPECT_STREQ(MhaKernelName(MhaKernel::kBlockWise), "block_wise");
  for (MhaKernel k : {MhaKernel::kRowWise, MhaKernel::kBlockWise}) {
    auto p = ParseMhaKernel(MhaKernelName(k));
    ASSERT_TRUE(p.IsOk());
    EXPECT_EQ(*p, k);
  }
  EXPECT_EQ(*ParseMhaKernel("row"), MhaKernel::kRowWise);
  EXPECT_EQ(*ParseMhaKernel("block"), MhaKernel::kBlockWise);
  auto bad = ParseMhaKernel("diagonal");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_TRUE(Contains(bad.Message(), "kernel")) << bad.Message();
  EXPECT_TRUE(Contains(bad.Message(), "'diagonal'")) << bad.Message();
}

// ---- Eq. 1 -------------------------------------------------------------------------------------

TEST(KernelSelectEq1, DenserCaseIsBlockWise) {
  // L = 1024: n = ceil(1024 / 16) = 64, n^2 = 4096, log2 64 = 6.
  // ratio = 400 / 4096 = 0.09765625 (exact in binary);
  // penalty = 1.2 / 6^2 = 1.2 / 36 = 0.0333...;
  // threshold = 0.09765625 - 0.0333... = 0.0643229166... >= 0 -> block-wise.
  auto r = EvaluateEq1FromCounts(1024, 400);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->n, 64);
  EXPECT_EQ(r->valid_blocks, 400);
  EXPECT_EQ(r->valid_ratio, 0.09765625);
  EXPECT_DOUBLE_EQ(r->penalty, 1.2 / 36.0);
  EXPECT_DOUBLE_EQ(r->threshold, 0.09765625 - 1.2 / 36.0);
  EXPECT_NEAR(r->threshold, 0.0643229166666667, 1e-15);
  EXPECT_EQ(r->kernel, MhaKernel::kBlockWise);
}

TEST(KernelSelectEq1, SparseCaseIsRowWise) {
  // L = 1024, 100 valid blocks: ratio = 100 / 4096 = 0.0244140625;
  // threshold = 0.0244140625 - 0.0333... = -0.0089192708... < 0 -> row-wise.
  auto r = EvaluateEq1FromCounts(1024, 100);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->valid_ratio, 0.0244140625);
  EXPECT_NEAR(r->threshold, -0.0089192708333333, 1e-15);
  EXPECT_EQ(r->kernel, MhaKernel::kRowWise);
}

TEST(KernelSelectEq1, BoundaryAtL4096) {
  // L = 4096: n = 256, n^2 = 65536, log2 256 = 8, penalty = 1.2 / 64 = 0.01875.
  // threshold = 0 at valid = 0.01875 * 65536 = 1228.8 blocks, so 1228 -> row-wise and
  // 1229 -> block-wise.
  auto lo = EvaluateEq1FromCounts(4096, 1228);
  auto hi = EvaluateEq1FromCounts(4096, 1229);
  ASSERT_TRUE(lo.IsOk() && hi.IsOk());
  EXPECT_DOUBLE_EQ(lo->penalty, 0.01875);
  EXPECT_DOUBLE_EQ(lo->threshold, 1228.0 / 65536.0 - 0.01875);
  EXPECT_EQ(lo->kernel, MhaKernel::kRowWise);
  EXPECT_EQ(hi->kernel, MhaKernel::kBlockWise);
}

TEST(KernelSelectEq1, RaggedLengthRoundsUp) {
  // L = 1000: n = ceil(1000 / 16) = 63 (62.5 rounds up); dense -> 63^2 = 3969 valid blocks,
  // ratio 1, log2 63 = 5.97728, penalty = 1.2 / 35.7279 = 0.0335872, threshold = 0.9664128.
  auto r = EvaluateEq1FromCounts(1000, 63 * 63);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->n, 63);
  EXPECT_EQ(r->valid_ratio, 1.0);
  EXPECT_DOUBLE_EQ(r->penalty, 1.2 / (std::log2(63.0) * std::log2(63.0)));
  EXPECT_NEAR(r->threshold, 0.9664128, 1e-7);
  EXPECT_EQ(r->kernel, MhaKernel::kBlockWise);
}

TEST(KernelSelectEq1, SingleBlockIsRowWise) {
  // L = 10: n = 1, log2 1 = 0, so penalty = 1.2 / 0 = +inf and threshold = 1 - inf = -inf.
  auto r = EvaluateEq1FromCounts(10, 1);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->n, 1);
  EXPECT_EQ(r->valid_ratio, 1.0);
  EXPECT_EQ(r->penalty, std::numeric_limits<double>::infinity());
  EXPECT_EQ(r->threshold, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(r->kernel, MhaKernel::kRowWise);
  // L = 16 is still one block; L = 17 is two (log2 2 = 1, penalty 1.2, threshold -0.2 even
  // when dense).
  EXPECT_EQ(EvaluateEq1FromCounts(16, 1)->n, 1);
  auto two = EvaluateEq1FromCounts(17, 4);
  ASSERT_TRUE(two.IsOk());
  EXPECT_EQ(two->n, 2);
  EXPECT_DOUBLE_EQ(two->threshold, 1.0 - 1.2);
  EXPECT_EQ(two->kernel, MhaKernel::kRowWise);
}

TEST(KernelSelectEq1, BadCountsNameTheField) {
  auto zero = EvaluateEq1FromCounts(0, 0);
  ASSERT_FALSE(zero.IsOk());
  EXPECT_TRUE(Contains(zero.Message(), "seq_len")) << zero.Message();
  auto many = EvaluateEq1FromCounts(1024, 4097);
  ASSERT_FALSE(many.IsOk());
  EXPECT_TRUE(Contains(many.Message(), "valid_blocks")) << many.Message();
  EXPECT_TRUE(Contains(many.Message(), "4096")) << many.Message();
  EXPECT_FALSE(EvaluateEq1FromCounts(1024, -1).IsOk());
}

TEST(KernelSelectEq1, FromLayoutMatchesCounts) {
  // Band |i - j| <= 16 at L = 1024: rows 16r..16r+15 reach columns 16r-16..16r+31, i.e. block
  // columns r-1, r, r+1: 3 per block row except the first and last (2), 64*3 - 2 = 190 blocks.
  // threshold = 190/4096 - 1.2/36 = 0.04638671875 - 0.0333... = 0.0130533854... -> block-wise.
  auto layout = BlockLayout::Build(Band(1024, 16), 16, 16);
  ASSERT_TRUE(layout.IsOk()) << layout.Message();
  auto r = EvaluateEq1(*layout);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->valid_blocks, 190);
  EXPECT_DOUBLE_EQ(r->threshold, 190.0 / 4096.0 - 1.2 / 36.0);
  EXPECT_EQ(r->kernel, MhaKernel::kBlockWise);

  // Block-diagonal 16 x 16 tiles: 64 valid blocks, 64/4096 - 1.2/36 = -0.0177083... -> row-wise.
  auto diag = BlockLayout::Build(BlockDiagonal(1024, 16), 16, 16);
  ASSERT_TRUE(diag.IsOk()) << diag.Message();
  auto d = EvaluateEq1(*diag);
  ASSERT_TRUE(d.IsOk()) << d.Message();
  EXPECT_EQ(d->valid_blocks, 64);
  EXPECT_NEAR(d->threshold, -0.0177083333333333, 1e-15);
  EXPECT_EQ(d->kernel, MhaKernel::kRowWise);
}

TEST(KernelSelectEq1, LayoutMustBe16x16) {
  auto layout = BlockLayout::Build(Band(256, 4), 32, 32);
  ASSERT_TRUE(layout.IsOk()) << layout.Message();
  auto r = EvaluateEq1(*layout);
  ASSERT_FALSE(r.IsOk());
  EXPECT_TRUE(Contains(r.Message(), "16 x 16")) << r.Message();
  EXPECT_TRUE(Contains(r.Message(), "32 x 32")) << r.Message();
  EXPECT_FALSE(EvaluateEq1(BlockLayout()).IsOk());  // never built
}

// ---- Eq. 2 -------------------------------------------------------------------------------------

TEST(KernelSelectEq2, EnumeratesAllCandidatesInOrder) {
  auto r = EvaluateEq2(BertBase(), H100());
  ASSERT_TRUE(r.IsOk()) << r.Message();
  ASSERT_EQ(r->candidates.size(), 64u);
  const int64_t sizes[] = {16, 32, 64, 128}, warps[] = {1, 2, 4, 8};
  size_t i = 0;
  for (int64_t bm : sizes)
    for (int64_t bn : sizes)
      for (int64_t nw : warps) {
        const Eq2Candidate& c = r->candidates[i++];
        EXPECT_EQ(c.block_m, bm);
        EXPECT_EQ(c.block_n, bn);
        EXPECT_EQ(c.num_warps, nw);
      }
}

TEST(KernelSelectEq2, OneCandidateOnH100ByHand) {
  // H100: SM_NUM = 132, SMEM per SM = 228 KiB = 233472 B, MAX_WARP = 64. BERT-base: d = 64.
  // BM = BN = 64: req = (2*64 + 64) * (64 + 16) + 64 * (64 + 16) = 192*80 + 64*80 = 20480
  // elements = 40960 bytes (<= 232448 per block: feasible).
  // blocks_per_sm = floor(233472 / 40960) = 5 (5 * 40960 = 204800, 6 * 40960 = 245760).
  // 4 warps: OCC = 4 * min(5, 64/4 = 16) / 64 = 20/64 = 0.3125.
  // score = 0.3125 * sqrt(132 / (64*64) * (1024*12*8) / 64)
  //       = 0.3125 * sqrt(132 * 98304 / 262144) = 0.3125 * sqrt(49.5) = 0.3125 * 7.0356236
  //       = 2.1986324.
  auto r = EvaluateEq2(BertBase(), H100());
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const Eq2Candidate* c = Find(*r, 64, 64, 4);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->req_smem_elems, 20480);
  EXPECT_EQ(c->req_smem_bytes, 40960);
  EXPECT_EQ(c->blocks_per_sm, 5);
  EXPECT_EQ(c->occ, 0.3125);
  EXPECT_DOUBLE_EQ(c->score, 0.3125 * std::sqrt(49.5));
  EXPECT_NEAR(c->score, 2.1986324, 1e-7);
  EXPECT_TRUE(c->feasible);
  EXPECT_TRUE(c->why_infeasible.empty());

  // 8 warps: the warp limit 64/8 = 8 blocks is above 5, so OCC = 8 * 5 / 64 = 0.625.
  const Eq2Candidate* c8 = Find(*r, 64, 64, 8);
  ASSERT_NE(c8, nullptr);
  EXPECT_EQ(c8->occ, 0.625);
  EXPECT_DOUBLE_EQ(c8->score, 0.625 * std::sqrt(49.5));
}

TEST(KernelSelectEq2, BestForBertBaseOnH100ByHand) {
  // score = OCC * sqrt(132 * 98304 / (BM^2 * BN)) with OCC <= 1, so the smallest BM^2 * BN
  // wins if it reaches OCC = 1. BM = BN = 16:
  //   req = (32 + 16) * 80 + 16 * 32 = 3840 + 512 = 4352 elements = 8704 bytes;
  //   blocks_per_sm = floor(233472 / 8704) = 26 (26 * 8704 = 226304);
  //   1 warp: 1 * min(26, 64) / 64 = 0.40625; 2 warps: 2 * min(26, 32) / 64 = 0.8125;
  //   4 warps: 4 * min(26, 16) / 64 = 1;       8 warps: 8 * min(26, 8) / 64 = 1.
  //   score(OCC = 1) = sqrt(132 * 98304 / 4096) = sqrt(132 * 24) = sqrt(3168) = 56.28499...
  // 4 and 8 warps tie; ties keep the first in enumeration order: (16, 16, 4 warps).
  // The runner-up BM = 16, BN = 32 (19 blocks/SM, OCC 1) scores sqrt(1584) = 39.799...
  auto r = EvaluateEq2(BertBase(), H100());
  ASSERT_TRUE(r.IsOk()) << r.Message();
  ASSERT_GE(r->best, 0);
  const Eq2Candidate& b = r->candidates[static_cast<size_t>(r->best)];
  EXPECT_EQ(b.block_m, 16);
  EXPECT_EQ(b.block_n, 16);
  EXPECT_EQ(b.num_warps, 4);
  EXPECT_EQ(b.req_smem_elems, 4352);
  EXPECT_EQ(b.req_smem_bytes, 8704);
  EXPECT_EQ(b.blocks_per_sm, 26);
  EXPECT_EQ(b.occ, 1.0);
  EXPECT_DOUBLE_EQ(b.score, std::sqrt(3168.0));
  EXPECT_NEAR(b.score, 56.284989, 1e-6);
  EXPECT_EQ(Find(*r, 16, 16, 1)->occ, 0.40625);
  EXPECT_EQ(Find(*r, 16, 16, 2)->occ, 0.8125);
  EXPECT_EQ(Find(*r, 16, 16, 8)->score, b.score);  // the tie
  EXPECT_DOUBLE_EQ(Find(*r, 16, 32, 4)->score, std::sqrt(1584.0));
  for (const Eq2Candidate& c : r->candidates) EXPECT_TRUE(c.feasible);  // all fit in 227 KiB
}

TEST(KernelSelectEq2, InfeasibleOnRtx4090WithLargeHead) {
  // RTX 4090: 99 KiB = 101376 bytes per block. d = 256, BM = BN = 128:
  // req = (256 + 128) * (256 + 16) + 128 * (128 + 16) = 104448 + 18432 = 122880 elements
  // = 245760 bytes > 101376 -> infeasible.
  Workload w = BertBase();
  w.head_dim = 256;
  auto r = EvaluateEq2(w, *FindBuiltinDevice("4090"));
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const Eq2Candidate* c = Find(*r, 128, 128, 4);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->req_smem_elems, 122880);
  EXPECT_EQ(c->req_smem_bytes, 245760);
  EXPECT_FALSE(c->feasible);
  EXPECT_TRUE(Contains(c->why_infeasible, "245760")) << c->why_infeasible;
  EXPECT_TRUE(Contains(c->why_infeasible, "smem_per_block_bytes 101376")) << c->why_infeasible;
  // The best is feasible all the same (16 x 16 needs 27136 bytes).
  ASSERT_GE(r->best, 0);
  EXPECT_TRUE(r->candidates[static_cast<size_t>(r->best)].feasible);
}

TEST(KernelSelectEq2, NoBlockPerSmIsInfeasible) {
  // A made-up device whose per-SM shared memory (8000 B) is below even 16 x 16 at d = 64
  // (8704 B) while its per-block limit is large: blocks_per_sm = 0 is the reason given.
  DeviceSpec dev = H100();
  dev.smem_per_sm_bytes = 8000;
  auto r = EvaluateEq2(BertBase(), dev);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->best, -1);
  const Eq2Candidate& c = r->candidates.front();
  EXPECT_EQ(c.blocks_per_sm, 0);
  EXPECT_EQ(c.occ, 0.0);
  EXPECT_FALSE(c.feasible);
  EXPECT_TRUE(Contains(c.why_infeasible, "blocks_per_sm")) << c.why_infeasible;
  EXPECT_TRUE(Contains(c.why_infeasible, "8000")) << c.why_infeasible;

  // SelectKernel on a mask that needs the block-wise kernel must then fail, saying why.
  const Mask dense = Mask::Not(*Mask::Create(1024, 1024));
  auto s = SelectKernel(dense, BertBase(), dev);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "no block-wise setting")) << s.Message();
}

TEST(KernelSelectEq2, BadInputsNameTheField) {
  Workload w = BertBase();
  w.head_dim = 0;
  auto bad_w = EvaluateEq2(w, H100());
  ASSERT_FALSE(bad_w.IsOk());
  EXPECT_TRUE(Contains(bad_w.Message(), "workload: head_dim")) << bad_w.Message();

  DeviceSpec dev = H100();
  dev.sm_count = 0;
  auto bad_d = EvaluateEq2(BertBase(), dev);
  ASSERT_FALSE(bad_d.IsOk());
  EXPECT_TRUE(Contains(bad_d.Message(), "device: sm_count")) << bad_d.Message();
}

// ---- SelectKernel ------------------------------------------------------------------------------

TEST(SelectKernel, DenseBertBaseOnH100) {
  Mask dense = Mask::Not(*Mask::Create(1024, 1024));
  auto s = SelectKernel(dense, BertBase(), H100());
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_EQ(s->eq1.valid_blocks, 4096);
  EXPECT_EQ(s->kernel, MhaKernel::kBlockWise);
  EXPECT_EQ(s->block_m, 16);
  EXPECT_EQ(s->block_n, 16);
  EXPECT_EQ(s->num_warps, 4);
  EXPECT_EQ(s->eq2.candidates.size(), 64u);
}

TEST(SelectKernel, BlockDiagonalIsRowWise) {
  auto s = SelectKernel(BlockDiagonal(1024, 16), BertBase(), H100());
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_EQ(s->kernel, MhaKernel::kRowWise);
  EXPECT_EQ(s->eq1.valid_blocks, 64);
  EXPECT_EQ(s->block_m, 16);  // Eq. 2's best is still reported
}

TEST(SelectKernel, BadInputsNameTheField) {
  auto wrong = SelectKernel(*Mask::Create(512, 512), BertBase(), H100());
  ASSERT_FALSE(wrong.IsOk());
  EXPECT_TRUE(Contains(wrong.Message(), "mask")) << wrong.Message();
  EXPECT_TRUE(Contains(wrong.Message(), "workload.seq_len 1024")) << wrong.Message();
  EXPECT_TRUE(Contains(wrong.Message(), "512 x 512")) << wrong.Message();

  auto not_square = SelectKernel(*Mask::Create(1024, 512), BertBase(), H100());
  ASSERT_FALSE(not_square.IsOk());
  EXPECT_TRUE(Contains(not_square.Message(), "1024 x 512")) << not_square.Message();

  DeviceSpec dev = H100();
  dev.sm_count = 0;
  auto no_sms = SelectKernel(*Mask::Create(1024, 1024), BertBase(), dev);
  ASSERT_FALSE(no_sms.IsOk());
  EXPECT_TRUE(Contains(no_sms.Message(), "device: sm_count")) << no_sms.Message();

  Workload w = BertBase();
  w.batch = 0;
  auto no_batch = SelectKernel(*Mask::Create(1024, 1024), w, H100());
  ASSERT_FALSE(no_batch.IsOk());
  EXPECT_TRUE(Contains(no_batch.Message(), "workload: batch")) << no_batch.Message();
}
