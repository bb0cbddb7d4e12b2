// Tests of MCFuser's candidate space and pruning (engine/mcfuser/candidate_space.h): each rule
// on a small hand case with the other rules off, the tile-level merge, the unpruned size of
// the paper's example, and the space sizes for Table II's G1-G12 (printed for
// docs/mcfuser.md and pinned here so the doc cannot drift).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "engine/mcfuser/candidate_space.h"
#include "engine/mcfuser/chain_model.h"

using namespace stof::engine;

namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

DeviceSpec H100() { return *FindBuiltinDevice("H100-SXM-80GB"); }

PruneOptions Only(int rule) {
  PruneOptions o;
  o.rule1_dedupe = rule == 1;
  o.rule2_intermediate = rule == 2;
  o.rule3_padding = rule == 3;
  o.rule4_smem = rule == 4;
  o.merge_equivalent = false;
  return o;
}

std::set<std::string> ExprNames(const CandidateSpace& s) {
  std::set<std::string> out;
  for (const TilingExpr& e : s.exprs) out.insert(ToString(e));
  return out;
}

TEST(McfuserSpace, TileOptionsAreMultiplesOf16UpToThePaddedDim) {
  EXPECT_EQ(TileOptions(64), (std::vector<int64_t>{16, 32, 48, 64}));
  EXPECT_EQ(TileOptions(50), (std::vector<int64_t>{16, 32, 48, 64}));
  EXPECT_EQ(TileOptions(8), (std::vector<int64_t>{16}));
}

// The paper's example (M = N = 1024, K = H = 512): (24 + 2) x 64^2 x 32^2 = 109051904
// candidates before pruning, as in section III-C.
TEST(McfuserSpace, UnprunedSizeMatchesThePaper) {
  PruneOptions none = Only(0);
  Expected<PruneCounts> c = CountCandidateSpace({1, 1024, 1024, 512, 512}, H100(), none);
  ASSERT_TRUE(c) << c.Message();
  EXPECT_EQ(c->candidates, 109051904);
  EXPECT_EQ(c->after_equivalence, 109051904);
  EXPECT_EQ(c->tile_choices, 64 * 64 * 32 * 32);
}

// Shape (1, 48, 32, 32, 16): tiles m {16, 32, 48}, n {16, 32}, k {16, 32}, h {16}: 12 choices.
TEST(McfuserSpace, RuleOneKeepsOneExpressionPerProgram) {
  Expected<CandidateSpace> s = BuildCandidateSpace({1, 48, 32, 32, 16}, H100(), Only(1));
  ASSERT_TRUE(s) << s.Message();
  EXPECT_EQ(s->counts.expressions, 26);
  EXPECT_EQ(s->counts.expressions_rule1, 3);
  EXPECT_EQ(s->counts.candidates, 26 * 12);
  EXPECT_EQ(s->counts.after_rule1, 3 * 12);
  EXPECT_EQ(s->counts.after_equivalence, 36);
  EXPECT_EQ(ExprNames(*s), (std::set<std::string>{"mhnk", "mhkn", "mn(k,h)"}));
  EXPECT_EQ(s->candidates.size(), 36u);
}

TEST(McfuserSpace, RuleTwoDropsTheTwelveOrdersWithKOutsideN) {
  Expected<CandidateSpace> s = BuildCandidateSpace({1, 48, 32, 32, 16}, H100(), Only(2));
  ASSERT_TRUE(s) << s.Message();
  EXPECT_EQ(s->counts.expressions_rule1, 26);
  EXPECT_EQ(s->counts.expressions_rule2, 14);  // 12 "nk" orders + 2 flat
  EXPECT_EQ(s->counts.after_rule2, 14 * 12);
  for (const TilingExpr& e : s->exprs)
    EXPECT_EQ(StructuralSchedule(e).c_tile_loops, "") << ToString(e);
  EXPECT_EQ(ExprNames(*s).count("mhkn"), 0u);
  EXPECT_EQ(ExprNames(*s).count("mnkh"), 1u);
}

// Rule 3 by hand:
//   power of two: only divisors (512: 16..512 dividing it; 64 with 48 -> pads to 96: no);
//   48: 16 and 48 divide; 32 pads to 64, 33% > 5%: no;
//   100 (pads to 112 at least): 16 and 112 reach 112; 32 -> 128 (28%): no;
//   1000 (least 1008): 32 -> 1024 (2.4% < 5%): yes; 80 -> 1040 (4%): yes; 96 -> 1056 (5.6%): no;
//   8 (below 16): 16 is the least padding possible: yes.
TEST(McfuserSpace, RuleThreePaddingByHand) {
  for (int64_t t : {16, 32, 64, 128, 256, 512}) EXPECT_TRUE(PaddingAllowed(512, t, 0.05)) << t;
  for (int64_t t : {48, 80, 96, 160, 496}) EXPECT_FALSE(PaddingAllowed(512, t, 0.05)) << t;
  EXPECT_FALSE(PaddingAllowed(64, 48, 0.05));
  EXPECT_TRUE(PaddingAllowed(48, 16, 0.05));
  EXPECT_TRUE(PaddingAllowed(48, 48, 0.05));
  EXPECT_FALSE(PaddingAllowed(48, 32, 0.05));
  EXPECT_TRUE(PaddingAllowed(100, 16, 0.05));
  EXPECT_TRUE(PaddingAllowed(100, 112, 0.05));
  EXPECT_FALSE(PaddingAllowed(100, 32, 0.05));
  EXPECT_TRUE(PaddingAllowed(1000, 32, 0.05));
  EXPECT_TRUE(PaddingAllowed(1000, 80, 0.05));
  EXPECT_FALSE(PaddingAllowed(1000, 96, 0.05));
  EXPECT_TRUE(PaddingAllowed(1000, 96, 0.06));
  EXPECT_TRUE(PaddingAllowed(8, 16, 0.05));

  Expected<CandidateSpace> s = BuildCandidateSpace({1, 48, 32, 32, 16}, H100(), Only(3));
  ASSERT_TRUE(s) << s.Message();
  EXPECT_EQ(s->tile_options[0], (std::vector<int64_t>{16, 48}));  // m = 48: 32 dropped
  EXPECT_EQ(s->tile_options[1], (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(s->counts.tile_choices, 12);
  EXPECT_EQ(s->counts.tile_choices_rule3, 8);
  EXPECT_EQ(s->counts.after_rule3, 26 * 8);
  for (const Candidate& c : s->candidates) EXPECT_NE(c.tiles.bm, 32);
}

// Rule 4 and the tile-level merge on shape (1, 16, 64, 32, 16): tiles m {16}, n {16..64},
// k {16, 32}, h {16}; a device with 3000 bytes per block: the limit is 1.2 x 3000 = 3600.
// Equation 1 with bm = bh = 16: smem = 2 (16 bk + bk bn + c 16 bn + 16 bn + 256).
//   mhnk  bn 16 bk 16: 2 (256 + 256 + 256 + 256 + 256) = 2560  kept
//   mhnk  bn 16 bk 32: 2 (512 + 512 + 256 + 256 + 256) = 3584  kept
//   mhnk  bn 32 bk 16: 2 (256 + 512 + 512 + 512 + 256) = 4096  dropped (and every larger one)
//   mhkn  bn 16 bk 16: k has 2 tiles and holds n's 4 C tiles: 2 (256 + 256 + 4*256 + 256 +
//                      256) = 4096  dropped -- the held tiles are what rule 4 sees
//   mhkn  bn 16 bk 32: k has extent 1, c = 1: 3584  kept
//   mn(k,h): h has extent 1, e = 1: as mhnk, 2 kept.
// After rule 4: 2 + 1 + 2 = 5. The merge then drops mhkn bk 32 (k vanished: it is mhnk) and
// both flat ones (h vanished: they are mhnk): 2 remain, both mhnk.
TEST(McfuserSpace, RuleFourAndTheMergeByHand) {
  DeviceSpec small = H100();
  small.smem_per_block_bytes = 3000;
  PruneOptions o = Only(4);
  o.rule1_dedupe = true;
  Expected<CandidateSpace> s = BuildCandidateSpace({1, 16, 64, 32, 16}, small, o);
  ASSERT_TRUE(s) << s.Message();
  EXPECT_EQ(s->counts.after_rule3, 3 * 8);
  EXPECT_EQ(s->counts.after_rule4, 5);
  ASSERT_EQ(s->candidates.size(), 5u);
  std::set<std::string> kept;
  for (const Candidate& c : s->candidates) {
    kept.insert(ToString(c));
    EXPECT_LE(EstimateChainUnchecked(c, small).smem_bytes, 3600) << ToString(c);
  }
  EXPECT_EQ(kept, (std::set<std::string>{"mhnk bm=16 bn=16 bk=16 bh=16",
                                         "mhnk bm=16 bn=16 bk=32 bh=16",
                                         "mhkn bm=16 bn=16 bk=32 bh=16",
                                         "mn(k,h) bm=16 bn=16 bk=16 bh=16",
                                         "mn(k,h) bm=16 bn=16 bk=32 bh=16"}));
  o.merge_equivalent = true;
  s = BuildCandidateSpace({1, 16, 64, 32, 16}, small, o);
  ASSERT_TRUE(s) << s.Message();
  EXPECT_EQ(s->counts.after_rule4, 5);
  EXPECT_EQ(s->counts.after_equivalence, 2);
  ASSERT_EQ(s->candidates.size(), 2u);
  EXPECT_EQ(ToString(s->candidates[0]), "mhnk bm=16 bn=16 bk=16 bh=16");
  EXPECT_EQ(ToString(s->candidates[1]), "mhnk bm=16 bn=16 bk=32 bh=16");
}

TEST(McfuserSpace, FindAndLimitsAndErrors) {
  const GemmChainShape g1 = *FindGemmChainPreset("G1");
  Expected<CandidateSpace> s = BuildCandidateSpace(g1, H100());
  ASSERT_TRUE(s) << s.Message();
  for (size_t i = 0; i < s->candidates.size(); i += 37)
    EXPECT_EQ(s->Find(s->candidates[i]), static_cast<int64_t>(i));
  Candidate pruned = s->candidates[0];
  pruned.tiles.bm = 48;  // M = 512: padding, rule 3
  EXPECT_EQ(s->Find(pruned), -1);
  pruned.tiles.bm = 40;  // not a tile at all
  EXPECT_EQ(s->Find(pruned), -1);
  Candidate other_shape = s->candidates[0];
  other_shape.shape.m = 1024;
  EXPECT_EQ(s->Find(other_shape), -1);

  PruneOptions none = Only(0);
  none.max_candidates = 1000;
  Expected<CandidateSpace> big = BuildCandidateSpace(g1, H100(), none);
  ASSERT_FALSE(big);
  EXPECT_TRUE(Contains(big.Message(), "more than 1000 candidates")) << big.Message();
  EXPECT_TRUE(CountCandidateSpace(g1, H100(), none));  // counting needs no limit

  PruneOptions bad;
  bad.max_pad_ratio = -0.1;
  EXPECT_TRUE(Contains(CountCandidateSpace(g1, H100(), bad).Message(),
                       "prune_options: max_pad_ratio: must be in [0, 1)"));
  bad = PruneOptions{};
  bad.smem_slack = 0;
  EXPECT_TRUE(Contains(CountCandidateSpace(g1, H100(), bad).Message(),
                       "prune_options: smem_slack: must be positive"));
  EXPECT_EQ(CountCandidateSpace({1, 512, 0, 64, 64}, H100()).Message(),
            "gemm_chain: n: must be in 1..65536, got 0");
  EXPECT_EQ(CountCandidateSpace({-1, 512, 256, 64, 64}, H100()).Message(),
            "gemm_chain: batch: must be in 1..16384, got -1");
  EXPECT_EQ(CountCandidateSpace(g1, DeviceSpec{}).Message(), "device: name: must not be empty");
}

// Space sizes for G1-G12 on the built-in H100 and A100 (and the paper's example), as shown
// in docs/mcfuser.md; deterministic counts. Columns: all candidates, after rule 1 (26 -> 3
// expressions), rule 2 (-> 2), rule 3, rule 4, the tile-level merge.
struct Row {
  const char* name;
  int64_t all, r1, r2, r3, r4_h100, final_h100, r4_a100, final_a100;
};
TEST(McfuserSpace, TableTwoSpaceSizes) {
  const Row rows[] = {
      {"G1", 212992, 24576, 16384, 540, 518, 432, 493, 413},
      {"G2", 425984, 49152, 32768, 720, 674, 593, 625, 552},
      {"G3", 851968, 98304, 65536, 900, 775, 707, 712, 654},
      {"G4", 6815744, 786432, 524288, 1800, 1302, 1197, 1139, 1053},
      {"G5", 13631488, 1572864, 1048576, 2160, 1444, 1326, 1247, 1153},
      {"G6", 27262976, 3145728, 2097152, 2520, 1526, 1400, 1301, 1203},
      {"G7", 1703936, 196608, 131072, 1152, 976, 863, 874, 776},
      {"G8", 3407872, 393216, 262144, 1344, 996, 883, 883, 785},
      {"G9", 6815744, 786432, 524288, 1536, 1000, 887, 884, 786},
      {"G10", 6815744, 786432, 524288, 1568, 1036, 923, 898, 800},
      {"G11", 6815744, 786432, 524288, 1568, 1036, 923, 898, 800},
      {"G12", 6815744, 786432, 524288, 1568, 1036, 923, 898, 800},
      {"paper", 109051904, 12582912, 8388608, 3528, 1556, 1474, 1302, 1238},
  };
  const DeviceSpec h100 = H100(), a100 = *FindBuiltinDevice("A100-PCIe-40GB");
  std::vector<std::pair<std::string, GemmChainShape>> shapes;
  for (const GemmChainPreset& p : GemmChainPresets()) shapes.push_back({p.name, p.shape});
  shapes.push_back({"paper", {1, 1024, 1024, 512, 512}});
  ASSERT_EQ(std::size(rows), shapes.size());
  std::printf("| chain | (batch, M, N, K, H) | all | rule 1 | rule 2 | rule 3 | rule 4 H100 | "
              "final H100 | rule 4 A100 | final A100 |\n"
              "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (size_t i = 0; i < shapes.size(); ++i) {
    const GemmChainShape& s = shapes[i].second;
    const PruneCounts h = *CountCandidateSpace(s, h100);
    const PruneCounts a = *CountCandidateSpace(s, a100);
    std::printf("| %s | (%lld, %lld, %lld, %lld, %lld) | %lld | %lld | %lld | %lld | %lld | %lld "
                "| %lld | %lld |\n",
                shapes[i].first.c_str(), (long long)s.batch, (long long)s.m, (long long)s.n,
                (long long)s.k, (long long)s.h, (long long)h.candidates,
                (long long)h.after_rule1, (long long)h.after_rule2, (long long)h.after_rule3,
                (long long)h.after_rule4, (long long)h.after_equivalence,
                (long long)a.after_rule4, (long long)a.after_equivalence);
    const Row& r = rows[i];
    EXPECT_EQ(shapes[i].first, r.name);
    EXPECT_EQ(h.candidates, r.all) << r.name;
    EXPECT_EQ(h.after_rule1, r.r1) << r.name;
    EXPECT_EQ(h.after_rule2, r.r2) << r.name;
    EXPECT_EQ(h.after_rule3, r.r3) << r.name;
    EXPECT_EQ(h.after_rule4, r.r4_h100) << r.name;
    EXPECT_EQ(h.after_equivalence, r.final_h100) << r.name;
    EXPECT_EQ(a.after_rule4, r.r4_a100) << r.name;
    EXPECT_EQ(a.after_equivalence, r.final_a100) << r.name;
    // The materialised space agrees with the counts.
    EXPECT_EQ(static_cast<int64_t>(BuildCandidateSpace(s, h100)->candidates.size()),
              h.after_equivalence);
  }
}

}  // namespace
