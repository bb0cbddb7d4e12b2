// Tests of MCFuser's notation (engine/mcfuser/tiling_expr.h, chain_shape.h): the 26 tiling
// expressions (24 deep orders + 2 flat), the text round trip, parse errors that name the
// text, the Table II presets, and shape / tile validation naming the bad field.
#include <gtest/gtest.h>

#include <set>

#include "engine/mcfuser/candidate.h"
#include "engine/mcfuser/chain_shape.h"
#include "engine/mcfuser/tiling_expr.h"

using namespace stof::engine;

namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(McfuserExpr, AllExpressionsAre24DeepOrdersAndTwoFlat) {
  const auto& all = AllTilingExprs();
  ASSERT_EQ(all.size(), 26u);
  ASSERT_EQ(kNumTilingExprs, 26);
  std::set<std::string> deep, flat;
  for (const TilingExpr& e : all) {
    ASSERT_TRUE(ValidateTilingExpr(e)) << ToString(e);
    (e.flat ? flat : deep).insert(ToString(e));
  }
  EXPECT_EQ(deep.size(), 24u);  // 4! distinct permutations
  for (const std::string& s : deep) {
    EXPECT_EQ(s.size(), 4u);
    EXPECT_EQ(std::set<char>(s.begin(), s.end()), (std::set<char>{'m', 'n', 'k', 'h'})) << s;
  }
  EXPECT_EQ(flat, (std::set<std::string>{"mn(k,h)", "nm(k,h)"}));
  // Lexicographic order with m < n < k < h: first mnkh, last hknm; then the flat two.
  EXPECT_EQ(ToString(all[0]), "mnkh");
  EXPECT_EQ(ToString(all[1]), "mnhk");
  EXPECT_EQ(ToString(all[4]), "mhnk");
  EXPECT_EQ(ToString(all[23]), "hknm");
  EXPECT_EQ(ToString(all[24]), "mn(k,h)");
  EXPECT_EQ(ToString(all[25]), "nm(k,h)");
  for (int i = 0; i < 26; ++i) EXPECT_EQ(TilingExprIndex(all[i]), i);
}

TEST(McfuserExpr, TextRoundTripsForEveryExpression) {
  for (const TilingExpr& e : AllTilingExprs()) {
    Expected<TilingExpr> back = ParseTilingExpr(ToString(e));
    ASSERT_TRUE(back) << back.Message();
    EXPECT_EQ(*back, e) << ToString(e);
  }
}

TEST(McfuserExpr, ParseAcceptsSpacesUpperCaseAndRedundantParentheses) {
  const TilingExpr mhnk = *ParseTilingExpr("mhnk");
  EXPECT_FALSE(mhnk.flat);
  EXPECT_EQ(mhnk.order, (std::array<ChainLoop, 4>{ChainLoop::kM, ChainLoop::kH, ChainLoop::kN,
                                                  ChainLoop::kK}));
  EXPECT_EQ(*ParseTilingExpr(" M H N K "), mhnk);
  EXPECT_EQ(*ParseTilingExpr("m(h(n(k)))"), mhnk);
  EXPECT_EQ(*ParseTilingExpr("mh(nk)"), mhnk);
  const TilingExpr flat = *ParseTilingExpr("mn( k , h )");
  EXPECT_TRUE(flat.flat);
  EXPECT_EQ(ToString(flat), "mn(k,h)");
  EXPECT_EQ(*ParseTilingExpr("n(m(k,h))"), *ParseTilingExpr("nm(k,h)"));
}

TEST(McfuserExpr, ParseErrorsNameTheTextAndTheProblem) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"", "empty"},
      {"   ", "empty"},
      {"mnxk", "expected the end at position 2, got 'x'"},
      {"mnkh)", "expected the end at position 4, got ')'"},
      {"mn(k,h", "expected ',' or ')' at position 6, got the end"},
      {"mn(,h)", "expected a loop (m, n, k or h) at position 3"},
      {"mnk", "loop 'h' is missing"},
      {"mnkhm", "loop 'm' appears 2 times"},
      {"mn(h,k)", "h's nest runs before k's, but E = C x D needs C complete: write mn(k,h)"},
      {"nm(h,k)", "write nm(k,h)"},
      {"m(nk,h)", "expected mn(k,h) or nm(k,h)"},
      {"mk(n,h)", "expected mn(k,h) or nm(k,h)"},
      {"m(n,k,h)", "expected mn(k,h) or nm(k,h)"},
      {"mnk,h", "the top level runs 2 nests in sequence"},
  };
  for (const Case& c : cases) {
    Expected<TilingExpr> e = ParseTilingExpr(c.text);
    ASSERT_FALSE(e) << "'" << c.text << "' parsed as " << ToString(*e);
    EXPECT_TRUE(Contains(e.Message(), std::string("tiling expression '") + c.text + "'"))
        << e.Message();
    EXPECT_TRUE(Contains(e.Message(), c.says)) << e.Message();
  }
}

TEST(McfuserExpr, ValidateRejectsHandBuiltNonsense) {
  TilingExpr dup{{ChainLoop::kM, ChainLoop::kM, ChainLoop::kK, ChainLoop::kH}, false};
  EXPECT_TRUE(Contains(ValidateTilingExpr(dup).Message(), "order: not a permutation"));
  TilingExpr bad_flat{{ChainLoop::kM, ChainLoop::kK, ChainLoop::kN, ChainLoop::kH}, true};
  EXPECT_TRUE(Contains(ValidateTilingExpr(bad_flat).Message(), "got mk(n,h)"));
  EXPECT_EQ(TilingExprIndex(bad_flat), -1);
}

TEST(McfuserShape, PresetsAreTableTwo) {
  const auto& p = GemmChainPresets();
  ASSERT_EQ(p.size(), 12u);
  // (name, batch, M, N, K, H) from Table II.
  const GemmChainShape want[12] = {
      {1, 512, 256, 64, 64},     {1, 512, 256, 64, 128},    {1, 512, 256, 64, 256},
      {1, 512, 512, 256, 256},   {1, 512, 512, 512, 256},   {1, 512, 512, 1024, 256},
      {1, 512, 512, 128, 128},   {1, 1024, 512, 128, 128},  {1, 2048, 512, 128, 128},
      {1, 1024, 1024, 128, 128}, {4, 1024, 1024, 128, 128}, {8, 1024, 1024, 128, 128}};
  for (int i = 0; i < 12; ++i) {
    std::string want_name = "G";  // not "G" + string&&: GCC 12 -Wrestrict false positive
    want_name += std::to_string(i + 1);
    EXPECT_EQ(p[i].name, want_name);
    EXPECT_EQ(p[i].shape, want[i]) << p[i].name;
    EXPECT_TRUE(p[i].shape.Validate());
    EXPECT_EQ(*FindGemmChainPreset(p[i].name), want[i]);
  }
  EXPECT_EQ(*FindGemmChainPreset("g11"), want[10]);
  Expected<GemmChainShape> none = FindGemmChainPreset("G13");
  ASSERT_FALSE(none);
  EXPECT_TRUE(Contains(none.Message(), "unknown preset 'G13'")) << none.Message();
  EXPECT_TRUE(Contains(none.Message(), "G1, G2")) << none.Message();
  EXPECT_EQ(ToString(want[0]), "(batch 1, M 512, N 256, K 64, H 64)");
}

// A model preset's FFN as a chain (M tokens, K hidden, N ffn, H hidden), by name too; the
// grid has each distinct (hidden, ffn) once at five token counts; bad names say the form.
TEST(McfuserShape, FfnChainsOfTheModelPresets) {
  EXPECT_EQ(*FindGemmChainPreset("ffn:bert-base:128"), (GemmChainShape{1, 128, 3072, 768, 768}));
  EXPECT_EQ(*FindGemmChainPreset("FFN:gpt2-medium:32768"),
            (GemmChainShape{1, 32768, 4096, 1024, 1024}));
  const std::vector<GemmChainPreset> grid = FfnChainPresets();
  ASSERT_EQ(grid.size(), 15u);  // (512, 2048), (768, 3072), (1024, 4096) x 5
  EXPECT_EQ(grid[0].name, "ffn:bert-small:1");
  EXPECT_EQ(grid[0].shape, (GemmChainShape{1, 1, 2048, 512, 512}));
  EXPECT_EQ(grid[9].name, "ffn:bert-base:32768");
  EXPECT_EQ(grid[14].name, "ffn:bert-large:32768");
  for (const GemmChainPreset& p : grid) {
    EXPECT_TRUE(p.shape.Validate()) << p.name;
    EXPECT_EQ(*FindGemmChainPreset(p.name), p.shape) << p.name;
  }
  EXPECT_TRUE(Contains(FindGemmChainPreset("ffn:nosuch:128").Message(),
                       "gemm_chain: ffn: ")) << FindGemmChainPreset("ffn:nosuch:128").Message();
  for (const char* bad : {"ffn:bert-base", "ffn:bert-base:", "ffn:bert-base:12x",
                          "ffn:bert-base:-1"}) {
    EXPECT_EQ(FindGemmChainPreset(bad).Message(),
              std::string("gemm_chain: '") + bad +
                  "': expected ffn:<model preset>:<tokens>, e.g. ffn:bert-base:128");
  }
  EXPECT_EQ(FindGemmChainPreset("ffn:bert-base:0").Message(),
            "gemm_chain: ffn: tokens: must be in 1..65536, got 0");
  EXPECT_EQ(FindGemmChainPreset("ffn:bert-base:65537").Message(),
            "gemm_chain: ffn: tokens: must be in 1..65536, got 65537");
}

TEST(McfuserShape, BadShapesNameTheField) {
  const GemmChainShape ok{2, 64, 64, 64, 64};
  ASSERT_TRUE(ok.Validate());
  struct Case {
    GemmChainShape s;
    const char* says;
  };
  const Case cases[] = {
      {{0, 64, 64, 64, 64}, "gemm_chain: batch: must be in 1..16384, got 0"},
      {{-3, 64, 64, 64, 64}, "gemm_chain: batch: must be in 1..16384, got -3"},
      {{1, 0, 64, 64, 64}, "gemm_chain: m: must be in 1..65536, got 0"},
      {{1, 64, -1, 64, 64}, "gemm_chain: n: must be in 1..65536, got -1"},
      {{1, 64, 64, 0, 64}, "gemm_chain: k: must be in 1..65536, got 0"},
      {{1, 64, 64, 64, -64}, "gemm_chain: h: must be in 1..65536, got -64"},
      {{1, 64, 64, 64, 65537}, "gemm_chain: h: must be in 1..65536, got 65537"},
  };
  for (const Case& c : cases) {
    const Status s = c.s.Validate();
    ASSERT_FALSE(s) << c.says;
    EXPECT_EQ(s.Message(), c.says);
  }
  const GemmChainShape zero_k{1, 64, 64, 0, 64};
  EXPECT_EQ(zero_k.Validate("g").Message(), "g: k: must be in 1..65536, got 0");
}

TEST(McfuserShape, TilesAreMultiplesOf16UpToThePaddedDimension) {
  const GemmChainShape s{1, 100, 64, 64, 64};  // M pads to 112
  EXPECT_TRUE(ValidateTiles(s, {112, 64, 16, 16}));
  EXPECT_EQ(ValidateTiles(s, {128, 64, 16, 16}).Message(),
            "tiles: bm: must be a multiple of 16 in 16..112 (m = 100), got 128");
  EXPECT_EQ(ValidateTiles(s, {16, 24, 16, 16}).Message(),
            "tiles: bn: must be a multiple of 16 in 16..64 (n = 64), got 24");
  EXPECT_EQ(ValidateTiles(s, {16, 16, 0, 16}).Message(),
            "tiles: bk: must be a multiple of 16 in 16..64 (k = 64), got 0");
  EXPECT_EQ(ValidateTiles(s, {16, 16, 16, 80}).Message(),
            "tiles: bh: must be a multiple of 16 in 16..64 (h = 64), got 80");
  Candidate c{GemmChainShape{1, 0, 64, 64, 64}, TilingExpr{}, ChainTiles{}};
  EXPECT_EQ(ValidateCandidate(c).Message(), "candidate: shape: m: must be in 1..65536, got 0");
  EXPECT_EQ(ToString(Candidate{s, *ParseTilingExpr("mhnk"), {64, 32, 16, 48}}),
            "mhnk bm=64 bn=32 bk=16 bh=48");
}

}  // namespace
