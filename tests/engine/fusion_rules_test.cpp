// Tests of the expand / seize / compete rules (engine/fusion/fusion_rules.h) on small
// hand-built op chains whose neighbour schemes are worked out by hand in the comments, and
// their invariants on every model's layer (valid, changed, first digit kept).
#include "engine/fusion/fusion_rules.h"

#include <gtest/gtest.h>

#include "engine/graph/graph_build.h"

using namespace stof::engine;

namespace {

// A chain of ops, each reading the previous op's output (GEMMs also read a weight).
OpGraph Chain(const std::vector<OpKind>& kinds) {
  OpGraph g;
  g.model = "chain";
  for (size_t i = 0; i < kinds.size(); ++i) {
    Op op;
    op.number = static_cast<int>(i) + 1;
    op.kind = kinds[i];
    op.name = "op" + std::to_string(op.number);
    op.inputs.push_back(i == 0 ? TensorRef{"x", {4, 4}, TensorSource::kLayerInput, 0}
                               : g.ops.back().output);
    if (kinds[i] == OpKind::kGemm) op.inputs.push_back(TensorRef{"w", {4, 4}, TensorSource::kWeight, 0});
    op.output = TensorRef{op.name, {4, 4}, TensorSource::kOp, op.number};
    g.ops.push_back(op);
  }
  return g;
}

FusionScheme Scheme(const std::string& code, const OpGraph& g) {
  auto s = FusionScheme::FromCode(code, g);
  EXPECT_TRUE(s.IsOk()) << code << ": " << s.Message();
  return *s;
}

std::vector<std::string> Codes(const std::vector<RuleMove>& moves) {
  std::vector<std::string> out;
  for (const RuleMove& m : moves) out.push_back(m.scheme.Code());
  return out;
}

using V = std::vector<std::string>;
constexpr OpKind kG = OpKind::kGemm, kB = OpKind::kBias, kE = OpKind::kGelu, kA = OpKind::kAdd;

TEST(FusionRules, FfnChainFromOpByOp) {
  // 1 GEMM 2 Bias 3 GELU 4 GEMM 5 Bias, every op alone: "01010".
  const OpGraph g = Chain({kG, kB, kE, kG, kB});
  const FusionScheme s = Scheme("01010", g);
  // expand: each adjacent pair merged.
  const auto ex = Expand(s, g);
  EXPECT_EQ(Codes(ex), (V{"00101", "01101", "01001", "01011"}));
  EXPECT_EQ(ex[0].what, "merge [#1] and [#2]");
  EXPECT_EQ(ex[0].rule, FusionRule::kExpand);
  // seize: no MI-only segment has two ops to give.
  EXPECT_TRUE(Seize(s, g).empty());
  // compete: #2 lies between [#1] (one CI) and [#3] (none): [#1] wins.
  //          #3 between [#2] (none) and [#4] (one CI): [#4] wins.
  //          #4 (a GEMM) between [#3] and [#5], neither with one CI: both, left first.
  const auto co = Compete(s, g);
  EXPECT_EQ(Codes(co), (V{"00101", "01001", "01001", "01011"}));
  EXPECT_EQ(co[0].what, "[#1] wins #2 over [#3]");
  EXPECT_EQ(co[1].what, "[#4] wins #3 over [#2]");
  EXPECT_EQ(co[2].what, "[#3] wins #4 over [#5]");
  EXPECT_EQ(NeighbourSchemes(s, g).size(), ex.size() + co.size());
}

TEST(FusionRules, SeizeTakesFromMiOnlySegments) {
  // [#1] [#2,#3] [#4,#5] = "01100": GEMM | Bias GELU | GEMM Bias.
  const OpGraph g = Chain({kG, kB, kE, kG, kB});
  const FusionScheme s = Scheme("01100", g);
  const auto se = Seize(s, g);
  // [#1] takes #2 -> [#1,#2] [#3] [#4,#5]; [#4,#5] takes #3 -> [#1] [#2] [#3-#5].
  EXPECT_EQ(Codes(se), (V{"00100", "01000"}));
  EXPECT_EQ(se[0].what, "[#1] takes #2 from [#2,#3]");
  EXPECT_EQ(se[1].what, "[#4,#5] takes #3 from [#2,#3]");
  EXPECT_EQ(Codes(Expand(s, g)), (V{"00011", "01111"}));
  EXPECT_TRUE(Compete(s, g).empty());  // no one-op segment between two others
  // The first digit is kept: the complement gives the complements.
  EXPECT_EQ(Codes(Seize(Scheme("10011", g), g)), (V{"11011", "10111"}));
}

TEST(FusionRules, AtMostTwoCiOps) {
  const OpGraph g = Chain({kG, kG, kG});
  EXPECT_EQ(Codes(Expand(Scheme("010", g), g)), (V{"001", "011"}));
  EXPECT_TRUE(Expand(Scheme("001", g), g).empty());  // [#1,#2] + [#3] would hold 3 GEMMs
  // #2 between two one-GEMM segments: both may take it, both outcomes, left first.
  EXPECT_EQ(Codes(Compete(Scheme("010", g), g)), (V{"001", "011"}));

  // GEMM GEMM Add GEMM as [#1,#2] [#3] [#4]: the two-GEMM side could take the Add, but the
  // side with exactly one CI op wins it.
  const OpGraph h = Chain({kG, kG, kA, kG});
  const auto co = Compete(Scheme("0010", h), h);
  EXPECT_EQ(Codes(co), (V{"0011"}));
  EXPECT_EQ(co[0].what, "[#4] wins #3 over [#1,#2]");
  // A contested GEMM the two-GEMM side cannot take is no contest.
  const OpGraph k = Chain({kG, kG, kG, kG});
  EXPECT_TRUE(Compete(Scheme("0010", k), k).empty());
  EXPECT_EQ(Codes(Expand(Scheme("0010", k), k)), (V{"0011"}));
}

TEST(FusionRules, PaperBertSchemeNeighbours) {
  GraphRequest r;
  r.model = *FindModelPreset("bert-base");
  const OpGraph g = *BuildLayerGraph(r);
  const FusionScheme s = Scheme("10000011100011", g);
  // Only [#10-#12] + [#13,#14] stays within two CI ops.
  EXPECT_EQ(Codes(Expand(s, g)), (V{"10000011100000"}));
  // The GEMM chain takes the residual Add from the MI-only [#13,#14].
  const auto se = Seize(s, g);
  EXPECT_EQ(Codes(se), (V{"10000011100001"}));
  EXPECT_EQ(se[0].what, "[#10-#12] takes #13 from [#13,#14]");
  EXPECT_TRUE(Compete(s, g).empty());
}

TEST(FusionRules, InvariantsOnEveryLayer) {
  for (const ModelConfig& m : ModelPresets()) {
    for (LayerPart part : {LayerPart::kEncoder, LayerPart::kDecoder}) {
      GraphRequest r;
      r.model = m;
      r.part = part;
      auto g = BuildLayerGraph(r);
      if (!g.IsOk()) continue;  // BERT has no decoder, GPT-2 no encoder
      // Walk three rule steps from op by op, checking every neighbour.
      std::vector<FusionScheme> frontier = {FusionScheme::OpByOp(*g)};
      for (int depth = 0; depth < 3; ++depth) {
        std::vector<FusionScheme> next;
        for (const FusionScheme& s : frontier) {
          for (const RuleMove& mv : NeighbourSchemes(s, *g)) {
            EXPECT_NE(mv.scheme.Code(), s.Code()) << mv.what;
            EXPECT_EQ(mv.scheme.Code()[0], s.Code()[0]);
            EXPECT_TRUE(FusionScheme::FromCode(mv.scheme.Code(), *g).IsOk()) << mv.scheme.Code();
            EXPECT_LT(mv.scheme.Segments().size(), s.Segments().size() + 1);
            if (next.size() < 20) next.push_back(mv.scheme);
          }
        }
        frontier = next;
      }
      EXPECT_FALSE(frontier.empty()) << m.name;
    }
  }
}

}  // namespace
