// Tests of plan_choices.h: segment params <-> SegmentChoice for every template kind (round
// trips and strict refusals with the exact JSON path), FusionToPlan -> plan file -> PlanToRun
// round trips on BERT, GPT-2 and T5 (encoder and decoder) graphs with tuned-looking choices
// and a segment forced op by op, PlanToRun's rules (plan.mha as the fused default, old
// params, template mismatches), ModelToPlan / PlanGraph, and CheckPlanFor's refusals (batch,
// L, heads, model fields, mask hash, code length) and its device warning.
#include "engine/plan/plan_choices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/fusion/default_scheme.h"
#include "engine/graph/graph_build.h"
#include "engine/mask/mask_spec.h"
#include "tests/engine/test_graphs.h"

namespace {

using nlohmann::json;
using namespace stof::engine;  // NOLINT: a test of the whole plan_choices API
using stof::engine::testing::PresetGraph;

const std::string kField = "plan.json: fusion.segments[2].params";

SegmentChoice Mha(MhaVariant v, MhaKernel k = MhaKernel::kBlockWise, int64_t bm = 64,
                  int64_t bn = 64, int64_t warps = 4, int64_t sub_len = 64) {
  SegmentChoice c;
  c.mha_variant = v;
  c.mha_config = MhaConfig{k, bm, bn, warps};
  c.sub_len = sub_len;
  return c;
}

SegmentChoice WithParams(ParamMap p) {
  SegmentChoice c;
  c.params = std::move(p);
  return c;
}

// ---- params <-> SegmentChoice ------------------------------------------------------------------

TEST(SegmentParams, SparseMhaWritesOnlyWhatItsVariantUses) {
  EXPECT_EQ(SegmentChoiceToParams(Mha(MhaVariant::kFused, MhaKernel::kRowWise, 16, 32, 2),
                                  TemplateKind::kSparseMha),
            json::parse(R"({"variant": "fused", "kernel": "row_wise", "block_m": 16,
                            "block_n": 32, "num_warps": 2})"));
  EXPECT_EQ(SegmentChoiceToParams(Mha(MhaVariant::kUnfused), TemplateKind::kSparseMha),
            json::parse(R"({"variant": "unfused"})"));
  EXPECT_EQ(SegmentChoiceToParams(Mha(MhaVariant::kDecomposed, MhaKernel::kRowWise, 16, 16, 1, 32),
                                  TemplateKind::kSparseMha),
            json::parse(R"({"variant": "sd", "sub_len": 32})"));
  EXPECT_EQ(SegmentChoiceToParams(Mha(MhaVariant::kRecomposed, MhaKernel::kBlockWise, 64, 64, 4, 128),
                                  TemplateKind::kSparseMha),
            json::parse(R"({"variant": "sdf", "sub_len": 128})"));
}

TEST(SegmentParams, SparseMhaRoundTrips) {
  const std::vector<SegmentChoice> cases = {
      Mha(MhaVariant::kFused, MhaKernel::kRowWise, 16, 32, 2),
      Mha(MhaVariant::kFused, MhaKernel::kBlockWise, 128, 64, 8),
      Mha(MhaVariant::kFused, MhaKernel::kBlockWise, 64, 16, 1),
      Mha(MhaVariant::kUnfused),
      Mha(MhaVariant::kDecomposed, MhaKernel::kBlockWise, 64, 64, 4, 32),
      Mha(MhaVariant::kRecomposed, MhaKernel::kBlockWise, 64, 64, 4, 256),
  };
  for (const SegmentChoice& c : cases) {
    const json j = SegmentChoiceToParams(c, TemplateKind::kSparseMha);
    SCOPED_TRACE(j.dump());
    // Through text too, as a plan file holds it (non-negative integers read back unsigned).
    for (const json& p : {j, json::parse(j.dump())}) {
      auto back = SegmentChoiceFromParams(p, TemplateKind::kSparseMha, kField);
      ASSERT_TRUE(back.IsOk()) << back.Message();
      EXPECT_EQ(SegmentChoiceToParams(*back, TemplateKind::kSparseMha), j);
      EXPECT_EQ(back->mha_variant, c.mha_variant);
      if (c.mha_variant == MhaVariant::kFused) {
        EXPECT_EQ(back->mha_config.kernel, c.mha_config.kernel);
        EXPECT_EQ(back->mha_config.block_m, c.mha_config.block_m);
        EXPECT_EQ(back->mha_config.block_n, c.mha_config.block_n);
        EXPECT_EQ(back->mha_config.num_warps, c.mha_config.num_warps);
      }
      if (c.mha_variant == MhaVariant::kDecomposed || c.mha_variant == MhaVariant::kRecomposed) {
        EXPECT_EQ(back->sub_len, c.sub_len);
      }
      EXPECT_TRUE(back->params.empty());
      EXPECT_FALSE(back->force_op_by_op);
    }
  }
  // Keys left out keep the defaults: {} is the default fused choice.
  auto empty = SegmentChoiceFromParams(json::object(), TemplateKind::kSparseMha, kField);
  ASSERT_TRUE(empty.IsOk()) << empty.Message();
  EXPECT_EQ(empty->mha_variant, MhaVariant::kFused);
  EXPECT_EQ(empty->mha_config.block_m, MhaConfig{}.block_m);
  // Plans written before carried sub_len next to the default variant; still read.
  auto old = SegmentChoiceFromParams(json::parse(R"({"sub_len": 16})"), TemplateKind::kSparseMha,
                                     kField);
  ASSERT_TRUE(old.IsOk()) << old.Message();
  EXPECT_EQ(old->sub_len, 16);
}

TEST(SegmentParams, OtherKindsCarryTheirParamMap) {
  struct Case {
    TemplateKind kind;
    ParamMap params;
  };
  const std::vector<Case> cases = {
      {TemplateKind::kNone, {}},
      {TemplateKind::kNone, {{"algo", 2}}},  // an op-by-op segment keeps what it was given
      {TemplateKind::kScaleMaskSoftmax, {}},
      {TemplateKind::kGemmChain, {{"bm", 64}, {"bn", 64}, {"bk", 32}, {"bh", 64}, {"warps", 4}}},
      {TemplateKind::kGemmNorm, {{"bm", 32}, {"bk", 64}, {"warps", 4}, {"stages", 2}}},
      {TemplateKind::kGemmAct, {{"algo", 3}}},
      {TemplateKind::kGemmAdd, {{"algo", 0}}},  // cuBLASLt's first algorithm is index 0
      {TemplateKind::kGemmBias, {{"algo", 7}}},
      {TemplateKind::kBiasAddNorm, {{"rows_per_block", 4}, {"threads_per_row", 32}}},
  };
  // Every template kind is covered (kSparseMha above).
  for (TemplateKind k : AllTemplates()) {
    const bool covered = k == TemplateKind::kSparseMha ||
                         std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.kind == k; });
    EXPECT_TRUE(covered) << TemplateName(k);
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(TemplateName(c.kind));
    SegmentChoice choice = WithParams(c.params);
    choice.mha_variant = MhaVariant::kDecomposed;  // not the kind's business: not written
    const json j = SegmentChoiceToParams(choice, c.kind);
    json want = json::object();
    for (const auto& [k, v] : c.params) want[k] = v;
    EXPECT_EQ(j, want);
    for (const json& p : {j, json::parse(j.dump())}) {
      auto back = SegmentChoiceFromParams(p, c.kind, kField);
      ASSERT_TRUE(back.IsOk()) << back.Message();
      EXPECT_EQ(back->params, c.params);
      EXPECT_EQ(back->mha_variant, MhaVariant::kFused);
    }
  }
}

TEST(SegmentParams, RefusesBadParamsNamingTheField) {
  struct Bad {
    const char* params;
    TemplateKind kind;
    std::string message;  // the whole message
  };
  const std::string f = kField;
  const std::vector<Bad> cases = {
      {R"({"block_m": "x"})", TemplateKind::kSparseMha,
       f + R"(.block_m: expected an integer >= 1, got "x")"},
      {R"({"block_m": 0})", TemplateKind::kSparseMha, f + ".block_m: expected an integer >= 1, got 0"},
      {R"({"block_n": 1.5})", TemplateKind::kSparseMha, f + ".block_n: expected an integer >= 1, got 1.5"},
      {R"({"num_warps": -4})", TemplateKind::kSparseMha, f + ".num_warps: expected an integer >= 1, got -4"},
      {R"({"num_warps": 4294967296})", TemplateKind::kSparseMha,
       f + ".num_warps: expected an integer <= 2147483647, got 4294967296"},
      {R"({"sub_len": 0})", TemplateKind::kSparseMha, f + ".sub_len: expected an integer >= 1, got 0"},
      {R"({"variant": "fast"})", TemplateKind::kSparseMha,
       f + R"(.variant: expected one of fused, unfused, sd, sdf, got "fast")"},
      {R"({"variant": "decomposed"})", TemplateKind::kSparseMha,  // the CLI's alias, not a file's
       f + R"(.variant: expected one of fused, unfused, sd, sdf, got "decomposed")"},
      {R"({"variant": 1})", TemplateKind::kSparseMha, f + ".variant: expected a string, got 1"},
      {R"({"kernel": "row"})", TemplateKind::kSparseMha,
       f + R"(.kernel: expected one of row_wise, block_wise, got "row")"},
      {R"({"variant": "sd", "block_m": 64})", TemplateKind::kSparseMha,
       f + R"(.block_m: only with variant fused, got variant "sd")"},
      {R"({"variant": "unfused", "kernel": "row_wise"})", TemplateKind::kSparseMha,
       f + R"(.kernel: only with variant fused, got variant "unfused")"},
      {R"({"tile": [64, 64]})", TemplateKind::kSparseMha,
       f + ".tile: unknown key (allowed here: variant, kernel, block_m, block_n, num_warps, sub_len)"},
      {R"([])", TemplateKind::kSparseMha, f + ": expected an object, got []"},
      {R"({"algo": "3"})", TemplateKind::kGemmAct, f + R"(.algo: expected an integer >= 0, got "3")"},
      {R"({"algo": -1})", TemplateKind::kGemmAdd, f + ".algo: expected an integer >= 0, got -1"},
      {R"({"stages": true})", TemplateKind::kGemmNorm, f + ".stages: expected an integer >= 0, got true"},
      {R"({"tile": [128, 64]})", TemplateKind::kGemmChain,
       f + ".tile: expected an integer >= 0, got [128,64]"},
      {R"({"bm": 1099511627776})", TemplateKind::kGemmNorm,
       f + ".bm: expected an integer <= 2147483647, got 1099511627776"},
      {R"({"rows_per_block": null})", TemplateKind::kBiasAddNorm,
       f + ".rows_per_block: expected an integer >= 0, got null"},
      {R"("algo=3")", TemplateKind::kGemmBias, f + R"(: expected an object, got "algo=3")"},
      {R"({"x": 1.0})", TemplateKind::kNone, f + ".x: expected an integer >= 0, got 1.0"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.params);
    auto r = SegmentChoiceFromParams(json::parse(c.params), c.kind, kField);
    ASSERT_FALSE(r.IsOk());
    EXPECT_EQ(r.Message(), c.message);
  }
}

// ---- whole plans -------------------------------------------------------------------------------

Mask CausalMask(int64_t seq) {
  MaskSpec s;
  s.pattern = "causal";
  s.seq_len = seq;
  return *Generate(s);
}

// A plan for graph `g` (built from `preset`) with a causal mask, made on the built-in H100.
Plan PlanFor(const OpGraph& g, const std::string& preset, const FusionScheme& scheme,
             const std::vector<SegmentChoice>& choices) {
  Plan p;
  p.created_by = "plan_choices_test";
  p.device = *FindBuiltinDevice("h100");
  p.workload = g.AttentionWorkload();
  p.model = ModelToPlan(*FindModelPreset(preset), g.part, false);
  const Mask m = CausalMask(g.seq_len);
  p.mask.has_spec = true;
  p.mask.spec.pattern = "causal";
  p.mask.spec.seq_len = g.seq_len;
  p.mask.seq_len = g.seq_len;
  p.mask.hash = m.HashHex();
  p.mask.density = m.Density();
  p.mha = PlanMha{MhaKernel::kRowWise, 32, 16, 2, "tuned"};
  p.fusion = FusionToPlan(g, scheme, choices);
  p.tuning.method = "stof";
  return p;
}

// Tuned-looking choices: each kind's own parameters, varying by segment; the first fused
// segment that is not attention forced op by op.
std::vector<SegmentChoice> TunedChoices(const OpGraph& g, const FusionScheme& s) {
  std::vector<SegmentChoice> out;
  bool forced = false;
  for (size_t i = 0; i < s.Segments().size(); ++i) {
    const int64_t v = static_cast<int64_t>(i);
    SegmentChoice c;
    const TemplateKind kind = MatchTemplate(g, s.Segments()[i]).kind;
    if (!forced && kind != TemplateKind::kNone && kind != TemplateKind::kSparseMha) {
      c.force_op_by_op = true;
      forced = true;
      out.push_back(c);
      continue;
    }
    switch (kind) {
      case TemplateKind::kSparseMha:
        c = i % 2 ? Mha(MhaVariant::kFused, MhaKernel::kBlockWise, 128, 64, 8)
                  : Mha(MhaVariant::kDecomposed, MhaKernel::kBlockWise, 64, 64, 4, 32);
        break;
      case TemplateKind::kNone: break;
      case TemplateKind::kScaleMaskSoftmax: break;
      case TemplateKind::kGemmChain: c.params = {{"bm", 64}, {"bn", 32 + v}, {"bk", 32}, {"bh", 64}, {"warps", 4}}; break;
      case TemplateKind::kGemmNorm: c.params = {{"bm", 16}, {"bk", 64}, {"warps", 4}, {"stages", 1 + v}}; break;
      case TemplateKind::kBiasAddNorm: c.params = {{"rows_per_block", 1 + v}, {"threads_per_row", 32}}; break;
      default: c.params = {{"algo", v}}; break;  // gemm_act, gemm_add, gemm_bias
    }
    out.push_back(c);
  }
  EXPECT_TRUE(forced) << "no fused segment besides attention to force op by op in " << s.Code();
  return out;
}

void ExpectReplaysExactly(const OpGraph& g, const std::string& preset, const FusionScheme& s) {
  SCOPED_TRACE(preset + " " + LayerPartName(g.part) + " " + s.Code());
  const std::vector<SegmentChoice> choices = TunedChoices(g, s);
  const Plan plan = PlanFor(g, preset, s, choices);
  ASSERT_EQ(plan.fusion.segments.size(), s.Segments().size());
  // Through the file format.
  auto loaded = PlanFromJson(json::parse(PlanToText(plan)), "plan.json");
  ASSERT_TRUE(loaded.IsOk()) << loaded.Message();
  EXPECT_EQ(PlanToJson(*loaded), PlanToJson(plan));
  auto run = PlanToRun(*loaded, g, "plan.json");
  ASSERT_TRUE(run.IsOk()) << run.Message();
  EXPECT_EQ(run->scheme.Code(), s.Code());
  ASSERT_EQ(run->choices.size(), choices.size());
  for (size_t i = 0; i < choices.size(); ++i) {
    SCOPED_TRACE("segment " + std::to_string(i));
    const TemplateMatch m = MatchTemplate(g, s.Segments()[i]);
    const PlanSegment& ps = plan.fusion.segments[i];
    EXPECT_EQ(ps.template_name, choices[i].force_op_by_op ? "" : m.Name());
    EXPECT_EQ(run->choices[i].force_op_by_op, choices[i].force_op_by_op);
    const TemplateKind kind = choices[i].force_op_by_op ? TemplateKind::kNone : m.kind;
    EXPECT_EQ(SegmentChoiceToParams(run->choices[i], kind), SegmentChoiceToParams(choices[i], kind));
    EXPECT_EQ(run->choices[i].params, choices[i].params);
    if (kind == TemplateKind::kSparseMha) {
      EXPECT_EQ(run->choices[i].mha_variant, choices[i].mha_variant);
      if (choices[i].mha_variant == MhaVariant::kFused) {
        EXPECT_EQ(run->choices[i].mha_config.block_m, choices[i].mha_config.block_m);
      } else {
        EXPECT_EQ(run->choices[i].sub_len, choices[i].sub_len);
      }
    }
  }
  // And back again: the same fusion section.
  EXPECT_EQ(PlanToJson(PlanFor(g, preset, run->scheme, run->choices)), PlanToJson(plan));
}

TEST(PlanFusionRoundTrip, BertGpt2AndT5) {
  struct Model {
    std::string preset;
    std::optional<LayerPart> part;
  };
  for (const Model& m : {Model{"bert-base", std::nullopt}, Model{"gpt2-small", std::nullopt},
                         Model{"t5-small", LayerPart::kEncoder}, Model{"t5-small", LayerPart::kDecoder}}) {
    const OpGraph g = PresetGraph(m.preset, 2, 128, m.part);
    ASSERT_GT(g.Size(), 0);
    ExpectReplaysExactly(g, m.preset, DefaultScheme(g));
    ExpectReplaysExactly(g, m.preset, DefaultScheme(g, {true, true}));
  }
}

TEST(PlanFusionRoundTrip, DefaultChoicesAndOpByOp) {
  const OpGraph g = PresetGraph("bert-base", 2, 128);
  const FusionScheme s = FusionScheme::OpByOp(g);
  const PlanFusion f = FusionToPlan(g, s, {});
  EXPECT_EQ(f.code, s.Code());
  ASSERT_EQ(f.segments.size(), static_cast<size_t>(g.Size()));
  for (size_t i = 0; i < f.segments.size(); ++i) {
    EXPECT_EQ(f.segments[i].ops, std::vector<int64_t>{static_cast<int64_t>(i + 1)});
    EXPECT_EQ(f.segments[i].template_name, "");
    EXPECT_EQ(f.segments[i].params, json::object());
  }
  // Default choices on the default scheme: sparse_mha gets the default fused config.
  const FusionScheme d = DefaultScheme(g);
  const PlanFusion fd = FusionToPlan(g, d, {});
  EXPECT_EQ(fd.segments[1].template_name, "sparse_mha");
  EXPECT_EQ(fd.segments[1].params, json::parse(R"({"variant": "fused", "kernel": "block_wise",
                                                   "block_m": 64, "block_n": 64, "num_warps": 4})"));
  // Written variant first, then the kernel's keys in the mha section's order.
  Plan p = PlanFor(g, "bert-base", d, {});
  const std::string text = PlanToText(p);
  EXPECT_NE(text.find("\"params\": {\n          \"variant\": \"fused\",\n          \"kernel\": "
                      "\"block_wise\",\n          \"block_m\": 64,\n          \"block_n\": 64,\n"
                      "          \"num_warps\": 4\n        }"),
            std::string::npos)
      << text;
}

TEST(PlanToRun, MhaDefaultsComeFromThePlansMhaSection) {
  const OpGraph g = PresetGraph("bert-base", 2, 128);
  Plan p = PlanFor(g, "bert-base", DefaultScheme(g), {});
  // No code: the default scheme, attention with plan.mha's configuration.
  p.fusion = PlanFusion{};
  auto run = PlanToRun(p, g, "plan.json");
  ASSERT_TRUE(run.IsOk()) << run.Message();
  EXPECT_EQ(run->scheme, DefaultScheme(g));
  ASSERT_EQ(MatchTemplate(g, run->scheme.Segments()[1]).kind, TemplateKind::kSparseMha);
  const MhaConfig want{MhaKernel::kRowWise, 32, 16, 2};
  const auto same = [](const MhaConfig& a, const MhaConfig& b) {
    return a.kernel == b.kernel && a.block_m == b.block_m && a.block_n == b.block_n &&
           a.num_warps == b.num_warps;
  };
  EXPECT_TRUE(same(run->choices[1].mha_config, want));
  EXPECT_TRUE(run->choices[0].params.empty());
  // A code without segments: the same.
  p.fusion.code = DefaultScheme(g).Code();
  run = PlanToRun(p, g, "plan.json");
  ASSERT_TRUE(run.IsOk()) << run.Message();
  EXPECT_TRUE(same(run->choices[1].mha_config, want));
  // Segments whose attention params are {} (old plans), or name only some keys.
  p = PlanFor(g, "bert-base", DefaultScheme(g), {});
  p.fusion.segments[1].params = json::object();
  run = PlanToRun(p, g, "plan.json");
  ASSERT_TRUE(run.IsOk()) << run.Message();
  EXPECT_TRUE(same(run->choices[1].mha_config, want));
  EXPECT_EQ(run->choices[1].mha_variant, MhaVariant::kFused);
  p.fusion.segments[1].params = {{"block_m", 128}};
  run = PlanToRun(p, g, "plan.json");
  ASSERT_TRUE(run.IsOk()) << run.Message();
  EXPECT_TRUE(same(run->choices[1].mha_config, (MhaConfig{MhaKernel::kRowWise, 128, 16, 2})));
  p.fusion.segments[1].params = {{"variant", "sd"}, {"sub_len", 32}};
  run = PlanToRun(p, g, "plan.json");
  ASSERT_TRUE(run.IsOk()) << run.Message();
  EXPECT_EQ(run->choices[1].mha_variant, MhaVariant::kDecomposed);
  EXPECT_EQ(run->choices[1].sub_len, 32);
}

// Issue 35: a plan that records what runs (mha.runs) replays that, not Eq. 2's pick beside it;
// segment params still override it key by key.
TEST(PlanToRun, MhaRunsIsWhatAReplayRuns) {
  const OpGraph g = PresetGraph("bert-base", 2, 128);
  Plan p = PlanFor(g, "bert-base", DefaultScheme(g), {});
  p.fusion = PlanFusion{};
  p.mha = PlanMha{MhaKernel::kBlockWise, 16, 16, 4, "eq1+eq2"};
  p.mha.runs = PlanMhaRuns{MhaKernel::kBlockWise, 64, 64, 5, "kernels", ""};
  auto run = PlanToRun(p, g, "plan.json");
  ASSERT_TRUE(run.IsOk()) << run.Message();
  EXPECT_EQ(run->choices[1].mha_config, (MhaConfig{MhaKernel::kBlockWise, 64, 64, 5}));
  EXPECT_EQ(PlanRunningMha(p.mha), (MhaConfig{MhaKernel::kBlockWise, 64, 64, 5}));
  p.mha.runs = PlanMhaRuns{MhaKernel::kRowWise, 0, 0, 0, "engine model", ""};
  EXPECT_EQ(PlanRunningMha(p.mha), (MhaConfig{MhaKernel::kRowWise, 64, 64, 4}));
  p.mha.runs.reset();
  EXPECT_EQ(PlanRunningMha(p.mha), (MhaConfig{MhaKernel::kBlockWise, 16, 16, 4}));
}

TEST(PlanToRun, RefusesTemplatesParamsAndCodesThatDoNotFit) {
  const OpGraph g = PresetGraph("bert-base", 2, 128);
  const FusionScheme d = DefaultScheme(g);  // 01111100100110: [1][2-6][7-8][9][10-11][12-13][14]
  ASSERT_EQ(d.Code(), "01111100100110");
  Plan p = PlanFor(g, "bert-base", d, {});
  p.fusion.segments[2].template_name = "gemm_norm";
  auto run = PlanToRun(p, g, "plan.json");
  ASSERT_FALSE(run.IsOk());
  EXPECT_EQ(run.Message(), "plan.json: fusion.segments[2].template: the plan has 'gemm_norm', this "
                           "run's ops [#7,#8] (GEMM+Add) match 'gemm_add' (refused)");
  p = PlanFor(g, "bert-base", d, {});
  p.fusion.segments[0].template_name = "gemm_bias";
  run = PlanToRun(p, g, "plan.json");
  ASSERT_FALSE(run.IsOk());
  EXPECT_EQ(run.Message().rfind("plan.json: fusion.segments[0].template: the plan has 'gemm_bias', "
                                "this run's ops [#1] (GEMM) match no template (", 0), 0u)
      << run.Message();
  p = PlanFor(g, "bert-base", d, {});
  p.fusion.segments[1].params = {{"block_m", "x"}};
  run = PlanToRun(p, g, "plan.json");
  ASSERT_FALSE(run.IsOk());
  EXPECT_EQ(run.Message(),
            R"(plan.json: fusion.segments[1].params.block_m: expected an integer >= 1, got "x")");
  p = PlanFor(g, "bert-base", d, {});
  p.fusion.segments[3].params = {{"algo", -2}};
  run = PlanToRun(p, g, "plan.json");
  ASSERT_FALSE(run.IsOk());
  EXPECT_EQ(run.Message(), "plan.json: fusion.segments[3].params.algo: expected an integer >= 0, got -2");
  // A code for another layer, and a segment list that does not follow the code (a plan built
  // in memory; the loader refuses both in files).
  p = PlanFor(g, "bert-base", d, {});
  p.fusion.code = "0101";
  p.fusion.segments.clear();
  run = PlanToRun(p, g, "plan.json");
  ASSERT_FALSE(run.IsOk());
  EXPECT_EQ(run.Message().rfind("plan.json: fusion.code: expected 14 digits", 0), 0u) << run.Message();
  p = PlanFor(g, "bert-base", d, {});
  p.fusion.segments.pop_back();
  run = PlanToRun(p, g, "plan.json");
  ASSERT_FALSE(run.IsOk());
  EXPECT_EQ(run.Message(), "plan.json: fusion.segments: code '01111100100110' has 7 segments, the "
                           "list has 6");
  p = PlanFor(g, "bert-base", d, {});
  p.fusion.segments[2].ops = {7};
  run = PlanToRun(p, g, "plan.json");
  ASSERT_FALSE(run.IsOk());
  EXPECT_EQ(run.Message(), "plan.json: fusion.segments[2].ops: expected [7,8] (segment 3 of code "
                           "'01111100100110'), got [7]");
}

// ---- model ---------------------------------------------------------------------------------------

TEST(PlanModelGraph, ModelToPlanAndPlanGraphRebuildTheLayer) {
  for (const auto& [preset, part] : std::vector<std::pair<std::string, LayerPart>>{
           {"bert-small", LayerPart::kEncoder}, {"gpt2-small", LayerPart::kDecoder},
           {"t5-base", LayerPart::kDecoder}}) {
    SCOPED_TRACE(preset);
    const ModelConfig cfg = *FindModelPreset(preset);
    const PlanModel m = ModelToPlan(cfg, part, false);
    EXPECT_EQ(m.name, cfg.name);
    EXPECT_EQ(m.family, cfg.family);
    EXPECT_EQ(m.part, part);
    EXPECT_EQ(m.hidden, cfg.hidden);
    EXPECT_EQ(m.heads, cfg.heads);
    EXPECT_EQ(m.head_dim, cfg.head_dim);
    EXPECT_EQ(m.ffn, cfg.ffn);
    EXPECT_EQ(m.layers, cfg.layers);
    EXPECT_FALSE(m.separate_bias);
    const OpGraph want = PresetGraph(preset, 2, 96, part);
    Plan p = PlanFor(want, preset, DefaultScheme(want), {});
    auto g = PlanGraph(p, DType::kF16, "plan.json");
    ASSERT_TRUE(g.IsOk()) << g.Message();
    ASSERT_EQ(g->Size(), want.Size());
    for (int n = 1; n <= g->Size(); ++n) EXPECT_EQ(g->At(n).kind, want.At(n).kind) << n;
    EXPECT_EQ(g->batch, 2);
    EXPECT_EQ(g->seq_len, 96);
    EXPECT_EQ(g->layers, cfg.layers);
    EXPECT_EQ(g->model, cfg.name);
    EXPECT_EQ(g->part, part);
    // The model section survives the file format.
    auto loaded = PlanFromJson(PlanToJson(p), "plan.json");
    ASSERT_TRUE(loaded.IsOk()) << loaded.Message();
    EXPECT_TRUE(*loaded->model == m);
  }
  // separate_bias: Bias ops of their own.
  const OpGraph plain = PresetGraph("bert-small", 1, 64);
  Plan p = PlanFor(plain, "bert-small", DefaultScheme(plain), {});
  p.model->separate_bias = true;
  auto g = PlanGraph(p, DType::kF32, "plan.json");
  ASSERT_TRUE(g.IsOk()) << g.Message();
  EXPECT_GT(g->Size(), plain.Size());
  EXPECT_EQ(g->dtype, DType::kF32);
  p.model.reset();
  EXPECT_EQ(PlanGraph(p, DType::kF16, "plan.json").Message(),
            "plan.json: model: the plan has no model; give --model or --config");
}

// ---- CheckPlanFor --------------------------------------------------------------------------------

TEST(CheckPlanFor, AcceptsItsOwnRunAndWarnsOnAnotherDevice) {
  const OpGraph g = PresetGraph("bert-base", 2, 128);
  const Plan p = PlanFor(g, "bert-base", DefaultScheme(g), {});
  const Mask mask = CausalMask(128);
  auto ok = CheckPlanFor(p, g, mask, p.device, "plan.json");
  ASSERT_TRUE(ok.IsOk()) << ok.Message();
  EXPECT_TRUE(ok->warnings.empty());
  // Without a model section and without a code too (an analytical plan).
  Plan analytical = p;
  analytical.model.reset();
  analytical.fusion = PlanFusion{};
  EXPECT_TRUE(CheckPlanFor(analytical, g, mask, p.device, "plan.json").IsOk());
  // The layer count is the run's choice: a plan is per layer.
  Plan fewer = p;
  fewer.model->layers = 2;
  EXPECT_TRUE(CheckPlanFor(fewer, g, mask, p.device, "plan.json").IsOk());

  const DeviceSpec a100 = *FindBuiltinDevice("a100");
  auto warned = CheckPlanFor(p, g, mask, a100, "plan.json");
  ASSERT_TRUE(warned.IsOk()) << warned.Message();
  ASSERT_EQ(warned->warnings.size(), 1u);
  EXPECT_EQ(warned->warnings[0], "plan made on " + p.device.name + ", running on " + a100.name +
                                     ": its timings and parameters may not carry over");
  DeviceSpec cpu = p.device;
  cpu.name = "cpu";
  warned = CheckPlanFor(p, g, mask, cpu, "plan.json");
  ASSERT_TRUE(warned.IsOk()) << warned.Message();
  EXPECT_EQ(warned->warnings.size(), 1u);
}

TEST(CheckPlanFor, RefusesAnotherWorkloadModelMaskOrLayer) {
  const OpGraph g = PresetGraph("bert-base", 2, 128);
  const Plan base = PlanFor(g, "bert-base", DefaultScheme(g), {});
  const Mask mask = CausalMask(128);
  const auto refused = [&](const Plan& p, const OpGraph& graph, const Mask& m) {
    auto r = CheckPlanFor(p, graph, m, base.device, "plan.json");
    EXPECT_FALSE(r.IsOk());
    return r.Message();
  };
  EXPECT_EQ(refused(base, PresetGraph("bert-base", 1, 128), mask),
            "plan.json: workload.batch: the plan was tuned for batch 2, this run has batch 1 (refused)");
  EXPECT_EQ(refused(base, PresetGraph("bert-base", 2, 64), CausalMask(64)),
            "plan.json: workload.seq_len: the plan was tuned for L = 128, this run has L = 64 (refused)");
  EXPECT_EQ(refused(base, PresetGraph("bert-small", 2, 128), mask),
            "plan.json: workload.heads: the plan was tuned for 12 heads, this run has 8 heads (refused)");
  // Same attention, another model.
  Plan p = base;
  p.model->ffn = 4096;
  EXPECT_EQ(refused(p, g, mask),
            "plan.json: model.ffn: the plan was tuned for ffn 4096, this run has ffn 3072 (refused)");
  p = base;
  p.model->hidden = 1024;
  EXPECT_EQ(refused(p, g, mask),
            "plan.json: model.hidden: the plan was tuned for hidden 1024, this run has hidden 768 (refused)");
  const OpGraph gpt2 = PresetGraph("gpt2-small", 2, 128);  // same sizes as bert-base
  EXPECT_EQ(refused(base, gpt2, mask),
            "plan.json: model.family: the plan was tuned for a bert model, this run has a gpt2 "
            "model (refused)");
  const OpGraph t5_enc = PresetGraph("t5-small", 2, 128, LayerPart::kEncoder);
  const OpGraph t5_dec = PresetGraph("t5-small", 2, 128, LayerPart::kDecoder);
  const Plan t5 = PlanFor(t5_enc, "t5-small", DefaultScheme(t5_enc), {});
  EXPECT_EQ(refused(t5, t5_dec, mask),
            "plan.json: model.part: the plan was tuned for the encoder layer, this run has the "
            "decoder layer (refused)");
  p = base;
  p.model->separate_bias = true;
  EXPECT_EQ(refused(p, g, mask),
            "plan.json: model.separate_bias: the plan was tuned for a layer with separate Bias "
            "ops, this run has a layer with no separate Bias ops (refused)");
  // T5 has no biases: its separate_bias changes nothing, so it is no reason to refuse.
  Plan t5_bias = t5;
  t5_bias.model->separate_bias = true;
  EXPECT_TRUE(CheckPlanFor(t5_bias, t5_enc, mask, base.device, "plan.json").IsOk());

  MaskSpec bb;
  bb.pattern = "bigbird";
  bb.seq_len = 128;
  const Mask bigbird = *Generate(*Resolve(bb));
  char density[32];
  std::snprintf(density, sizeof density, "%.4g", bigbird.Density());
  EXPECT_EQ(refused(base, g, bigbird),
            "plan.json: mask.hash: the plan was tuned for mask " + base.mask.hash +
                " (density 0.5039), this run's mask is " + bigbird.HashHex() + " (density " +
                density + ") (refused)");

  // A code for another op count (a plan without a model, so only the code can tell).
  const OpGraph biased = PresetGraph("bert-base", 2, 128, std::nullopt, /*separate_bias=*/true);
  p = base;
  p.model.reset();
  EXPECT_EQ(refused(p, biased, mask),
            "plan.json: fusion.code: the plan's code has 14 digits (ops), this run's layer has " +
                std::to_string(biased.Size()) + " ops (refused)");
}

}  // namespace
