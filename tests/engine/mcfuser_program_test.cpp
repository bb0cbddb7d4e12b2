// Tests of MCFuser's program building (engine/mcfuser/chain_program.h): grid binding,
// statement placement, hoisting, dead loops (extent 1) and trip counts on hand-worked
// examples; rule 1's grouping of the 26 expressions; the mapping to the mhnk chain kernel
// (engine/mcfuser/chain_kernel_map.h).
#include <gtest/gtest.h>

#include "engine/mcfuser/candidate_space.h"
#include "engine/mcfuser/chain_kernel_map.h"
#include "engine/mcfuser/chain_program.h"

using namespace stof::engine;

namespace {

// The hand-worked shape: batch 2, M 256, N 128, K 64, H 128.
const GemmChainShape kShape{2, 256, 128, 64, 128};

ChainProgram Build(const char* expr, ChainTiles t, const GemmChainShape& s = kShape) {
  Expected<ChainProgram> p = BuildChainProgram(Candidate{s, *ParseTilingExpr(expr), t});
  EXPECT_TRUE(p) << p.Message();
  return *p;
}

using S = ChainStmt;

// Tiles bm 64, bn 32, bk 32, bh 64 give extents b = 2, m = 256/64 = 4, n = 128/32 = 4,
// k = 64/32 = 2, h = 128/64 = 2.
//
// mhnk: grid b, m, h (blocks = 2*4*2 = 16); per block n(k(L_A, L_B, C_C), L_D, C_E), S_E.
//   L_A, L_B, C_C sit inside b m h n k: 2*4*2*4*2 = 128 each (A and B are indexed by k, so
//     nothing hoists; C is recomputed for each of the 2 h tiles).
//   L_D, C_E inside b m h n: 2*4*2*4 = 64.   S_E inside b m h: 16 (hoisted out of n: E is
//     accumulated over n and stored once).
TEST(McfuserProgram, MhnkAllLoopsLive) {
  const ChainProgram p = Build("mhnk", {64, 32, 32, 64});
  EXPECT_EQ(p.schedule.text, "bmh(n(k(L_A, L_B, C_C), L_D, C_E), S_E)");
  EXPECT_EQ(p.schedule.grid, "bmh");
  EXPECT_EQ(p.schedule.sub_expression, "nk");
  EXPECT_EQ(p.schedule.block_text, "n(k(L_A, L_B, C_C), L_D, C_E), S_E");
  EXPECT_EQ(p.schedule.Find(S::kLoadA).loops, "bmhnk");
  EXPECT_EQ(p.schedule.Find(S::kStoreE).loops, "bmh");
  EXPECT_EQ(p.blocks, 16);
  EXPECT_EQ(p.Trips(S::kLoadA), 128);
  EXPECT_EQ(p.Trips(S::kLoadB), 128);
  EXPECT_EQ(p.Trips(S::kComputeC), 128);
  EXPECT_EQ(p.Trips(S::kLoadD), 64);
  EXPECT_EQ(p.Trips(S::kComputeE), 64);
  EXPECT_EQ(p.Trips(S::kStoreE), 16);
  EXPECT_EQ(p.c_tiles, 1);
  EXPECT_EQ(p.e_tiles, 1);
  // Statements in program order.
  ASSERT_EQ(p.schedule.stmts.size(), 6u);
  EXPECT_EQ(p.schedule.stmts[0].stmt, S::kLoadA);
  EXPECT_EQ(p.schedule.stmts[5].stmt, S::kStoreE);
}

// Fig. 4(b): with bk = 64 = K the k loop has extent 1 and vanishes, so L_A (indexed by m, k)
// has no indexing loop left in the block and is hoisted to the block's top: loaded once per
// block, 2*4*2 = 16 times instead of 128. L_B stays in n: 2*4*2*4 = 64. C_C: 64.
TEST(McfuserProgram, ExtentOneLoopVanishesAndLoadAHoists) {
  const ChainProgram p = Build("mhnk", {64, 32, 64, 64});
  EXPECT_EQ(p.schedule.text, "bmh(L_A, n(L_B, C_C, L_D, C_E), S_E)");
  EXPECT_EQ(p.schedule.sub_expression, "n");
  EXPECT_EQ(p.Trips(S::kLoadA), 16);
  EXPECT_EQ(p.Trips(S::kLoadB), 64);
  EXPECT_EQ(p.Trips(S::kComputeC), 64);
  EXPECT_EQ(p.Trips(S::kLoadD), 64);
  EXPECT_EQ(p.Trips(S::kComputeE), 64);
  EXPECT_EQ(p.Trips(S::kStoreE), 16);
  // Batch 1 and bm = M, bh = H: the grid loops vanish too (one block).
  const ChainProgram one = Build("mhnk", {256, 32, 64, 128}, {1, 256, 128, 64, 128});
  EXPECT_EQ(one.schedule.text, "L_A, n(L_B, C_C, L_D, C_E), S_E");
  EXPECT_EQ(one.schedule.grid, "");
  EXPECT_EQ(one.blocks, 1);
  EXPECT_EQ(one.Trips(S::kLoadA), 1);
  EXPECT_EQ(one.Trips(S::kLoadB), 4);
}

// mhkn ("kn" per block): k outside n, so all 4 n-tiles of C accumulate over k (c_tiles = 4)
// and C_E runs in a second n loop once C is complete.
//   L_A (m, k) leaves the inner n loop: b m h k = 2*4*2*2 = 32.
//   L_B, C_C in b m h k n: 128.   L_D, C_E in b m h n (second loop): 64.   S_E: 16.
TEST(McfuserProgram, KOutsideNHoldsAllNTilesOfC) {
  const ChainProgram p = Build("mhkn", {64, 32, 32, 64});
  EXPECT_EQ(p.schedule.text, "bmh(k(L_A, n(L_B, C_C)), n(L_D, C_E), S_E)");
  EXPECT_EQ(p.schedule.sub_expression, "kn");
  EXPECT_EQ(p.schedule.c_tile_loops, "n");
  EXPECT_EQ(p.c_tiles, 4);
  EXPECT_EQ(p.e_tiles, 1);
  EXPECT_EQ(p.Trips(S::kLoadA), 32);
  EXPECT_EQ(p.Trips(S::kLoadB), 128);
  EXPECT_EQ(p.Trips(S::kComputeC), 128);
  EXPECT_EQ(p.Trips(S::kLoadD), 64);
  EXPECT_EQ(p.Trips(S::kComputeE), 64);
  EXPECT_EQ(p.Trips(S::kStoreE), 16);
}

// mn(k,h): only m (and batch) bound: blocks = 2*4 = 8. C is computed once per (m, n) -- no
// recompute across h -- but every h tile of E accumulates across n (e_tiles = 2) and is
// stored in its own h loop after n.
//   L_A, L_B, C_C in b m n k: 2*4*4*2 = 64.   L_D, C_E in b m n h: 2*4*4*2 = 64.
//   S_E in b m h: 16.
TEST(McfuserProgram, FlatHoldsEveryHTileOfE) {
  const ChainProgram p = Build("mn(k,h)", {64, 32, 32, 64});
  EXPECT_EQ(p.schedule.text, "bm(n(k(L_A, L_B, C_C), h(L_D, C_E)), h(S_E))");
  EXPECT_EQ(p.schedule.sub_expression, "n(k,h)");
  EXPECT_EQ(p.blocks, 8);
  EXPECT_EQ(p.c_tiles, 1);
  EXPECT_EQ(p.e_tiles, 2);
  EXPECT_EQ(p.Trips(S::kLoadA), 64);
  EXPECT_EQ(p.Trips(S::kComputeC), 64);
  EXPECT_EQ(p.Trips(S::kLoadD), 64);
  EXPECT_EQ(p.Trips(S::kComputeE), 64);
  EXPECT_EQ(p.Trips(S::kStoreE), 16);
  // nm(k,h) is the same kernel (m is bound wherever it is written).
  EXPECT_EQ(Build("nm(k,h)", {64, 32, 32, 64}).schedule.text, p.schedule.text);
  // n of extent 1 (bn = N): the two h loops become adjacent and merge.
  const ChainProgram n1 = Build("mn(k,h)", {64, 128, 32, 64});
  EXPECT_EQ(n1.schedule.text, "bm(k(L_A, L_B, C_C), h(L_D, C_E, S_E))");
  EXPECT_EQ(n1.schedule.sub_expression, "(k,h)");
  EXPECT_EQ(n1.e_tiles, 1);
}

// Dead loops make different expressions one program: kn with k of extent 1 is nk, the flat
// form with h of extent 1 is mhnk.
TEST(McfuserProgram, DeadLoopsMergeEquivalentPrograms) {
  const ChainTiles k1{64, 32, 64, 64};
  EXPECT_EQ(Build("mhkn", k1).schedule.text, Build("mhnk", k1).schedule.text);
  EXPECT_EQ(Build("mhkn", k1).c_tiles, 1);
  const ChainTiles n1{64, 128, 32, 64};
  EXPECT_EQ(Build("mhkn", n1).schedule.text, "bmh(k(L_A, L_B, C_C), L_D, C_E, S_E)");
  EXPECT_EQ(Build("mhkn", n1).schedule.text, Build("mhnk", n1).schedule.text);
  const ChainTiles h1{64, 32, 32, 128};
  EXPECT_EQ(Build("mn(k,h)", h1).schedule.text, "bm(n(k(L_A, L_B, C_C), L_D, C_E), S_E)");
  EXPECT_EQ(Build("mn(k,h)", h1).schedule.text, Build("mhnk", h1).schedule.text);
  // ... but not with all loops live.
  const ChainTiles live{64, 32, 32, 64};
  EXPECT_NE(Build("mhkn", live).schedule.text, Build("mhnk", live).schedule.text);
}

TEST(McfuserProgram, InvalidCandidatesAreErrors) {
  Expected<ChainProgram> p =
      BuildChainProgram(Candidate{kShape, *ParseTilingExpr("mhnk"), {64, 32, 40, 64}});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.Message(),
            "candidate: tiles: bk: must be a multiple of 16 in 16..64 (k = 64), got 40");
  TilingExpr bad{{ChainLoop::kM, ChainLoop::kM, ChainLoop::kK, ChainLoop::kH}, false};
  p = BuildChainProgram(Candidate{kShape, bad, {64, 32, 32, 64}});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.Message(), "candidate: tiling expression: order: not a permutation of m, n, k, h");
}

// Rule 1: binding m and h to the grid leaves n and k; the 24 deep orders fall into "nk"
// (12: n written before k) and "kn" (12), the flat two into "n(k,h)". Rule 2 marks "kn".
TEST(McfuserProgram, RuleOneGroupsTheTwentySixIntoThree) {
  const auto& g = TilingExprGroups();
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(ToString(g[0].representative), "mhnk");
  EXPECT_EQ(g[0].sub_expression, "nk");
  EXPECT_EQ(g[0].members.size(), 12u);
  EXPECT_EQ(g[0].c_tile_loops, "");
  EXPECT_EQ(ToString(g[1].representative), "mhkn");
  EXPECT_EQ(g[1].sub_expression, "kn");
  EXPECT_EQ(g[1].members.size(), 12u);
  EXPECT_EQ(g[1].c_tile_loops, "n");
  EXPECT_EQ(ToString(g[2].representative), "mn(k,h)");
  EXPECT_EQ(g[2].program, "bm(n(k(L_A, L_B, C_C), h(L_D, C_E)), h(S_E))");
  EXPECT_EQ(g[2].members.size(), 2u);
  // The paper's example: mhnk and mnkh have the same per-block sub-expression, nk.
  EXPECT_EQ(StructuralSchedule(*ParseTilingExpr("mnkh")).text,
            StructuralSchedule(*ParseTilingExpr("mhnk")).text);
  for (const ExpressionGroup& grp : g)
    for (const TilingExpr& e : grp.members)
      EXPECT_EQ(StructuralSchedule(e).sub_expression, grp.sub_expression) << ToString(e);
}

TEST(McfuserKernelMap, RunnableIsProgramEqualityWithMhnk) {
  EXPECT_EQ(ToString(ChainKernelExpr()), "mhnk");
  const ChainTiles live{64, 32, 32, 64};
  auto runnable = [&](const char* e, ChainTiles t) {
    return RunnableByChainKernel(Candidate{kShape, *ParseTilingExpr(e), t});
  };
  // Every deep order with n before k, whatever the positions of m and h.
  for (const TilingExpr& e : AllTilingExprs()) {
    const bool nk = StructuralSchedule(e).sub_expression == "nk";
    EXPECT_EQ(RunnableByChainKernel(Candidate{kShape, e, live}), nk) << ToString(e);
  }
  EXPECT_FALSE(runnable("mhkn", live));
  EXPECT_TRUE(runnable("mhkn", {64, 32, 64, 64}));    // k extent 1
  EXPECT_TRUE(runnable("kmhn", {64, 128, 32, 64}));   // n extent 1
  EXPECT_FALSE(runnable("mn(k,h)", live));
  EXPECT_TRUE(runnable("mn(k,h)", {64, 32, 32, 128}));  // h extent 1
  EXPECT_FALSE(runnable("mhnk", {64, 32, 40, 64}));      // invalid tiles
}

// After pruning (rules 1-2 keep mhnk and mn(k,h); the merge drops flat candidates with
// bh >= H), the runnable candidates of a space are exactly its mhnk ones.
TEST(McfuserKernelMap, InAPrunedSpaceRunnableMeansMhnk) {
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  for (const GemmChainPreset& p : GemmChainPresets()) {
    const CandidateSpace s = *BuildCandidateSpace(p.shape, h100);
    int64_t runnable = 0;
    for (const Candidate& c : s.candidates) {
      EXPECT_EQ(RunnableByChainKernel(c), c.expr == ChainKernelExpr())
          << p.name << " " << ToString(c);
      runnable += RunnableByChainKernel(c);
    }
    EXPECT_GT(runnable, 0) << p.name;
  }
}

}  // namespace
