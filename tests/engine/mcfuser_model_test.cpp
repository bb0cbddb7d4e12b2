// Tests of MCFuser's analytical model (engine/mcfuser/chain_model.h): equations 2-5 and the
// shared-memory estimate (equation 1) on hand-computed candidates on the built-in H100
// (W = 3.35e12 B/s, P = 989.4e12 FLOP/s, 132 SMs).
#include <gtest/gtest.h>

#include "engine/mcfuser/chain_model.h"

using namespace stof::engine;

namespace {

DeviceSpec H100() { return *FindBuiltinDevice("H100-SXM-80GB"); }

using S = ChainStmt;
constexpr int At(S s) { return static_cast<int>(s); }

// Shape (batch 2, M 256, N 128, K 64, H 128), mhnk, bm 64, bn 32, bk 32, bh 64. Trip counts
// from tests/engine/mcfuser_program_test.cpp: L_A, L_B, C_C 128; L_D, C_E 64; S_E 16;
// blocks 16.
//   bytes: L_A 64*32*2 = 4096 B x 128 = 524288
//          L_B 32*32*2 = 2048 B x 128 = 262144
//          L_D 32*64*2 = 4096 B x 64  = 262144
//          S_E 64*64*2 = 8192 B x 16  = 131072          total 1179648 B
//   flops: C_C 2*64*32*32 = 131072 x 128 = 16777216
//          C_E 2*64*64*32 = 262144 x 64  = 16777216     total 33554432
//          (= 2 B M N K (H / bh) + 2 B M N H: GEMM1 done twice, once per h tile)
//   t_mem  = 1179648 / 3.35e12   = 3.521337313e-7 s
//   t_comp = 33554432 / 989.4e12 = 3.391391955e-8 s
//   alpha  = (16 + 132) / 16     = 9.25
//   t      = (3.521337313e-7 + 3.391391955e-8) * 9.25 = 3.570940771e-6 s
//   smem   = 2 (64*32 + 32*32 + 64*32 + 32*64 + 64*64) = 2 * 11264 = 22528 B
TEST(McfuserModel, HandComputedCandidateOnH100) {
  const Candidate c{{2, 256, 128, 64, 128}, *ParseTilingExpr("mhnk"), {64, 32, 32, 64}};
  Expected<ChainEstimate> e = EstimateChain(c, H100());
  ASSERT_TRUE(e) << e.Message();
  EXPECT_EQ(e->program.blocks, 16);
  EXPECT_DOUBLE_EQ(e->stmt_bytes[At(S::kLoadA)], 524288);
  EXPECT_DOUBLE_EQ(e->stmt_bytes[At(S::kLoadB)], 262144);
  EXPECT_DOUBLE_EQ(e->stmt_bytes[At(S::kLoadD)], 262144);
  EXPECT_DOUBLE_EQ(e->stmt_bytes[At(S::kStoreE)], 131072);
  EXPECT_DOUBLE_EQ(e->stmt_bytes[At(S::kComputeC)], 0);
  EXPECT_DOUBLE_EQ(e->stmt_flops[At(S::kComputeC)], 16777216);
  EXPECT_DOUBLE_EQ(e->stmt_flops[At(S::kComputeE)], 16777216);
  EXPECT_DOUBLE_EQ(e->bytes, 1179648);
  EXPECT_DOUBLE_EQ(e->flops, 33554432);
  EXPECT_NEAR(e->t_mem, 3.521337313e-7, 1e-15);
  EXPECT_NEAR(e->t_comp, 3.391391955e-8, 1e-16);
  EXPECT_DOUBLE_EQ(e->alpha, 9.25);
  EXPECT_NEAR(e->seconds, 3.570940771e-6, 1e-14);
  EXPECT_EQ(e->smem_bytes, 22528);
}

// The flat form of the same candidate: C once per (m, n) (no recompute over h), blocks 8,
// two E tiles held.
//   bytes: L_A 4096 x 64 = 262144; L_B 2048 x 64 = 131072; L_D 4096 x 64 = 262144;
//          S_E 8192 x 16 = 131072                                   total 786432 B
//   flops: C_C 131072 x 64 = 8388608; C_E 262144 x 64 = 16777216    total 25165824
//   alpha = (8 + 132) / 8 = 17.5
//   t = (786432 / 3.35e12 + 25165824 / 989.4e12) * 17.5
//     = (2.347558209e-7 + 2.543543966e-8) * 17.5 = 2.601912606e-7 * 17.5 = 4.553347060e-6 s
//   Slower than mhnk's 3.57e-6 here: half the blocks outweigh the saved GEMM1 work.
//   smem = 2 (2048 + 1024 + 2048 + 2048 + 2*4096) = 30720 B
TEST(McfuserModel, FlatFormTradesRecomputeForBlocks) {
  const Candidate c{{2, 256, 128, 64, 128}, *ParseTilingExpr("mn(k,h)"), {64, 32, 32, 64}};
  const ChainEstimate e = *EstimateChain(c, H100());
  EXPECT_EQ(e.program.blocks, 8);
  EXPECT_DOUBLE_EQ(e.bytes, 786432);
  EXPECT_DOUBLE_EQ(e.flops, 25165824);
  EXPECT_DOUBLE_EQ(e.alpha, 17.5);
  EXPECT_NEAR(e.seconds, 4.553347060e-6, 1e-14);
  EXPECT_EQ(e.smem_bytes, 30720);
}

TEST(McfuserModel, EquivalentProgramsHaveEqualEstimates) {
  const GemmChainShape s{2, 256, 128, 64, 128};
  const ChainTiles h1{64, 32, 32, 128};  // h has extent 1: mn(k,h) is mhnk
  const ChainEstimate deep = *EstimateChain({s, *ParseTilingExpr("mhnk"), h1}, H100());
  const ChainEstimate flat = *EstimateChain({s, *ParseTilingExpr("mn(k,h)"), h1}, H100());
  const ChainEstimate other = *EstimateChain({s, *ParseTilingExpr("hnmk"), h1}, H100());
  EXPECT_DOUBLE_EQ(deep.seconds, flat.seconds);
  EXPECT_DOUBLE_EQ(deep.seconds, other.seconds);
  EXPECT_EQ(deep.smem_bytes, flat.smem_bytes);
}

// kn holds every n tile of C: equation 1 counts them (c_tiles = N / bn = 4 here).
TEST(McfuserModel, SmemCountsHeldTiles) {
  const ChainEstimate e =
      *EstimateChain({{2, 256, 128, 64, 128}, *ParseTilingExpr("mhkn"), {64, 32, 32, 64}}, H100());
  EXPECT_EQ(e.program.c_tiles, 4);
  EXPECT_EQ(e.smem_bytes, 2 * (64 * 32 + 32 * 32 + 4 * 64 * 32 + 32 * 64 + 64 * 64));
  EXPECT_EQ(EstimateSmemBytes({16, 16, 16, 16}, 1, 1), 2560);
}

TEST(McfuserModel, ErrorsNameTheField) {
  const Candidate bad{{1, 64, 64, 64, 64}, *ParseTilingExpr("mhnk"), {64, 64, 64, 96}};
  EXPECT_EQ(EstimateChain(bad, H100()).Message(),
            "candidate: tiles: bh: must be a multiple of 16 in 16..64 (h = 64), got 96");
  DeviceSpec d = H100();
  d.dram_bytes_per_s = 0;
  const Candidate ok{{1, 64, 64, 64, 64}, *ParseTilingExpr("mhnk"), {64, 64, 64, 64}};
  EXPECT_EQ(EstimateChain(ok, d).Message(), "device: dram_bytes_per_s: must be positive");
}

}  // namespace
