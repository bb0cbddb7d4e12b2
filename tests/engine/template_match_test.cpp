// Tests of template matching (engine/fusion/template_match.h): STOF's BERT example segments
// map to sparse_mha, gemm_norm (CI+MI), gemm_chain (CI+CI) and bias_add_norm (MI+MI); the
// GPT-2 and T5 layers, separate Bias ops, segments that are not chains, and single ops.
#include "engine/fusion/template_match.h"

#include <gtest/gtest.h>

#include <set>

#include "engine/graph/graph_build.h"
#include "tests/engine/test_graphs.h"

using namespace stof::engine;

namespace {

OpGraph Graph(const std::string& preset, std::optional<LayerPart> part = std::nullopt,
              bool separate_bias = false) {
  return stof::engine::testing::PresetGraph(preset, 1, 128, part, separate_bias);
}

std::string Name(const OpGraph& g, int first, int last) {
  return MatchTemplate(g, Segment{first, last}).Name();
}

TEST(TemplateMatch, PaperBertScheme) {
  const OpGraph g = Graph("bert-base");
  auto s = FusionScheme::FromCode("10000011100011", g);
  ASSERT_TRUE(s.IsOk());
  const std::vector<TemplateMatch> m = MatchTemplates(g, *s);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].kind, TemplateKind::kNone);
  EXPECT_EQ(m[0].reason, "single op");
  EXPECT_EQ(m[0].mix, "CI");
  EXPECT_STREQ(m[1].Name(), "sparse_mha");
  EXPECT_EQ(m[1].ops, "BatchGEMM+Scale+Mask+Softmax+BatchGEMM");
  EXPECT_EQ(m[1].mix, "CI+CI");
  EXPECT_STREQ(m[2].Name(), "gemm_norm");
  EXPECT_EQ(m[2].ops, "GEMM+Add+LayerNorm");
  EXPECT_EQ(m[2].mix, "CI+MI");
  EXPECT_STREQ(m[3].Name(), "gemm_chain");
  EXPECT_EQ(m[3].ops, "GEMM+GELU+GEMM");
  EXPECT_EQ(m[3].mix, "CI+CI");
  EXPECT_STREQ(m[4].Name(), "bias_add_norm");
  EXPECT_EQ(m[4].mix, "MI+MI");
  for (const TemplateMatch& t : m) EXPECT_EQ(t.reason.empty(), t.kind != TemplateKind::kNone);
}

TEST(TemplateMatch, Gpt2AndT5) {
  const OpGraph gpt2 = Graph("gpt2-small");
  EXPECT_EQ(Name(gpt2, 3, 7), "sparse_mha");
  EXPECT_EQ(Name(gpt2, 8, 9), "gemm_add");     // out-proj + residual
  EXPECT_EQ(Name(gpt2, 8, 10), "gemm_norm");   // + the FFN's pre-LN
  EXPECT_EQ(Name(gpt2, 9, 10), "bias_add_norm");
  EXPECT_EQ(Name(gpt2, 11, 12), "gemm_act");
  EXPECT_EQ(Name(gpt2, 11, 13), "gemm_chain");
  EXPECT_EQ(Name(gpt2, 4, 6), "scale_mask_softmax");
  EXPECT_EQ(Name(gpt2, 5, 6), "scale_mask_softmax");
  const TemplateMatch ln_gemm = MatchTemplate(gpt2, Segment{1, 2});
  EXPECT_EQ(ln_gemm.kind, TemplateKind::kNone);
  EXPECT_EQ(ln_gemm.reason, "no template for LayerNorm+GEMM");
  EXPECT_EQ(ln_gemm.mix, "CI+MI");

  const OpGraph enc = Graph("t5-small");
  EXPECT_EQ(Name(enc, 3, 6), "sparse_mha");  // no Scale in T5
  EXPECT_EQ(Name(enc, 7, 9), "gemm_norm");   // GEMM+Add+RMSNorm
  EXPECT_EQ(Name(enc, 8, 9), "bias_add_norm");
  EXPECT_EQ(Name(enc, 10, 12), "gemm_chain");  // GEMM+ReLU+GEMM
  EXPECT_EQ(Name(enc, 10, 11), "gemm_act");
  EXPECT_EQ(Name(enc, 12, 13), "gemm_add");

  const OpGraph dec = Graph("t5-small", LayerPart::kDecoder);
  EXPECT_EQ(Name(dec, 12, 15), "sparse_mha");
  // Q (decoder) and KV (encoder output) projections sit side by side but are not a chain.
  const TemplateMatch qkv = MatchTemplate(dec, Segment{10, 11});
  EXPECT_EQ(qkv.kind, TemplateKind::kNone);
  EXPECT_EQ(qkv.reason, "op #11 does not read op #10's output, so GEMM+GEMM is not a chain");
  EXPECT_EQ(MatchTemplate(dec, Segment{11, 12}).kind, TemplateKind::kNone);  // GEMM+BatchGEMM
}

TEST(TemplateMatch, SeparateBiasOps) {
  // 1 GEMM 2 Bias | 3-7 MHA | 8 GEMM 9 Bias 10 Add 11 LN | 12 GEMM 13 Bias 14 GELU 15 GEMM
  // 16 Bias 17 Add 18 LN
  const OpGraph g = Graph("bert-base", std::nullopt, true);
  ASSERT_EQ(g.Size(), 18);
  EXPECT_EQ(Name(g, 1, 2), "gemm_bias");
  EXPECT_EQ(Name(g, 3, 7), "sparse_mha");
  EXPECT_EQ(Name(g, 8, 11), "gemm_norm");
  EXPECT_EQ(Name(g, 8, 10), "gemm_add");
  EXPECT_EQ(Name(g, 12, 14), "gemm_act");
  EXPECT_EQ(Name(g, 12, 16), "gemm_chain");
  EXPECT_EQ(Name(g, 12, 15), "gemm_chain");
  EXPECT_EQ(Name(g, 16, 18), "bias_add_norm");
  EXPECT_EQ(Name(g, 16, 17), "");  // Bias+Add alone: no template
  EXPECT_EQ(MatchTemplate(g, Segment{16, 17}).reason, "no template for Bias+Add");
  EXPECT_EQ(MatchTemplate(g, Segment{16, 17}).mix, "MI+MI");
}

TEST(TemplateMatch, NamesAreDistinct) {
  std::set<std::string> names;
  for (TemplateKind k : AllTemplates()) {
    const std::string n = TemplateName(k);
    EXPECT_FALSE(n.empty());
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_EQ(names.size(), 8u);
  EXPECT_STREQ(TemplateName(TemplateKind::kNone), "");
}

}  // namespace
