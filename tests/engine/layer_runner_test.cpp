// LayerRunner / ModelRunner / DefaultScheme on the CPU backend: a BERT layer computed by the
// runner (op by op and under fused schemes) against the same layer written out by hand with
// the reference ops; every scheme of GPT-2 and T5 agreeing with op by op; the on-chip rule
// (an inner output read later forces op by op, except Add -> Norm's sum_out); bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/reference.h"
#include "engine/fusion/default_scheme.h"
#include "engine/mask/mask_spec.h"
#include "engine/run/model_runner.h"
#include "test_graphs.h"

using namespace stof::engine;
using stof::engine::testing::PresetGraph;

namespace {

Mask BigBird(int64_t L) {
  MaskSpec s;
  s.pattern = "bigbird";
  s.seq_len = L;
  s.width = 4, s.global = 2, s.block = 8, s.fill = 0.2;
  auto m = Generate(s);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  return *m;
}

std::vector<float> RunModel(const OpGraph& g, const Mask& mask, const std::string& code,
                            int layers = 1, std::vector<std::string>* how = nullptr) {
  CpuBackend cpu;
  auto scheme = FusionScheme::FromCode(code, g);
  EXPECT_TRUE(scheme.IsOk()) << scheme.Message();
  if (!scheme.IsOk()) return {};
  ModelRunOptions o;
  o.layers = layers;
  o.seed = 11;
  auto m = ModelRunner::Create(cpu, g, mask, *scheme, o);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  if (!m.IsOk()) return {};
  if (how)
    for (const auto& s : (*m)->Layer(0).Segments()) how->push_back(s.how);
  EXPECT_TRUE((*m)->Run(nullptr).IsOk());
  auto out = (*m)->ReadOutput();
  EXPECT_TRUE(out.IsOk());
  return out.IsOk() ? *out : std::vector<float>{};
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    d = std::max(d, static_cast<double>(std::fabs(a[i] - b[i])));
  return d;
}

// BERT's layer (docs/fusion.md ops #1-#14) by hand from the reference ops.
std::vector<float> BertByHand(const OpGraph& g, const Mask& mask, const LayerRunner& layer,
                              const std::vector<float>& x) {
  const int64_t B = g.batch, L = g.seq_len, H = g.heads, d = g.head_dim, D = g.hidden,
                F = g.ffn, rows = B * L;
  const auto w = [&](const std::string& n) { return layer.HostWeight(n); };
  std::vector<float> qkv(static_cast<size_t>(rows * 3 * D));
  cpu::LinearEpilogue(x.data(), w("w_qkv_proj").data(), w("b_qkv_proj").data(),
                      Activation::kNone, nullptr, qkv.data(), rows, 3 * D, D);
  std::vector<float> q(static_cast<size_t>(B * H * L * d)), k(q.size()), v(q.size()), o(q.size());
  cpu::SplitHeads(qkv.data(), 3 * D, 0, q.data(), B, L, H, d);
  cpu::SplitHeads(qkv.data(), 3 * D, D, k.data(), B, L, H, d);
  cpu::SplitHeads(qkv.data(), 3 * D, 2 * D, v.data(), B, L, H, d);
  EXPECT_TRUE(
      cpu::MaskedAttention(q.data(), k.data(), v.data(), o.data(), Workload{B, L, H, d, DType::kF32}, mask)
          .IsOk());
  std::vector<float> ctx(static_cast<size_t>(rows * D)), h1(ctx.size()), ln1(ctx.size());
  cpu::MergeHeads(o.data(), ctx.data(), B, L, H, d);
  cpu::LinearEpilogue(ctx.data(), w("w_out_proj").data(), w("b_out_proj").data(),
                      Activation::kNone, x.data(), h1.data(), rows, D, D);
  cpu::LayerNorm(h1.data(), ln1.data(), w("g_ln_attn").data(), w("beta_ln_attn").data(), rows, D);
  std::vector<float> up(static_cast<size_t>(rows * F)), h2(ctx.size()), out(ctx.size());
  cpu::LinearEpilogue(ln1.data(), w("w_ffn_up").data(), w("b_ffn_up").data(), Activation::kGelu,
                      nullptr, up.data(), rows, F, D);
  cpu::LinearEpilogue(up.data(), w("w_ffn_down").data(), w("b_ffn_down").data(),
                      Activation::kNone, ln1.data(), h2.data(), rows, D, F);
  cpu::LayerNorm(h2.data(), out.data(), w("g_ln_ffn").data(), w("beta_ln_ffn").data(), rows, D);
  return out;
}

}  // namespace

TEST(LayerRunner, BertLayerMatchesHandWrittenReferenceUnderEveryScheme) {
  const OpGraph g = PresetGraph("bert-small", 2, 32);
  ASSERT_EQ(g.Size(), 14);
  const Mask mask = BigBird(32);
  CpuBackend cpu;
  ModelRunOptions o;
  o.seed = 11;
  auto m = ModelRunner::Create(cpu, g, mask, FusionScheme::OpByOp(g), o);
  ASSERT_TRUE(m.IsOk()) << m.Message();
  const auto want = BertByHand(g, mask, (*m)->Layer(0), (*m)->HostInput());
  // Op by op; the paper's scheme [1][2-6][7-9][10-12][13-14] (MHA fused, GEMM+norm, GEMM
  // chain, bias+add+norm); GEMM+act and GEMM+norm for the FFN; the default scheme.
  const std::vector<std::string> codes = {FusionScheme::OpByOp(g).Code(), "01111100011100",
                                          "01111100011000", DefaultScheme(g).Code(),
                                          DefaultScheme(g, {true, true}).Code()};
  for (const auto& code : codes) {
    const auto got = RunModel(g, mask, code);
    // Fused calls keep double sums where op by op rounds to fp32 between ops: ~1e-6.
    EXPECT_LT(MaxAbsDiff(got, want), 2e-5) << "scheme " << code;
  }
  // The hand-written layer is not trivial: LayerNorm output rows have unit scale.
  double mx = 0;
  for (float v : want) mx = std::max(mx, static_cast<double>(std::fabs(v)));
  EXPECT_GT(mx, 0.5);
}

TEST(LayerRunner, DefaultSchemeOfBertAndGpt2) {
  const OpGraph bert = PresetGraph("bert-base", 1, 64);
  // [1] [2-6] sparse_mha [7-8] gemm_add [9] [10-11] gemm_act [12-13] gemm_add [14].
  EXPECT_EQ(DefaultScheme(bert).Code(), "01111100100110");
  // With chains: [10-12] becomes a GEMM chain, then [13-14] bias_add_norm.
  EXPECT_EQ(DefaultScheme(bert, {true, false}).Code(), "01111100100011");
  // With GEMM + norm row blocks too: [7-9] gemm_norm, [10-12] chain, [13-14].
  EXPECT_EQ(DefaultScheme(bert, {true, true}).Code(), "01111100011100");
  // And with GEMM + norm alone: [7-9], [10-11] gemm_act, [12-14] gemm_norm.
  EXPECT_EQ(DefaultScheme(bert, {false, true}).Code(), "01111100011000");
  const OpGraph gpt = PresetGraph("gpt2-small", 1, 64);
  // GPT-2: op 9's residual stream is read by op 14, so [8-10] GEMM+Add+LN cannot be one
  // segment; [8-9] gemm_add and [10] alone instead.
  const std::string code = DefaultScheme(gpt).Code();
  auto scheme = FusionScheme::FromCode(code, gpt);
  ASSERT_TRUE(scheme.IsOk());
  for (const Segment& s : scheme->Segments()) EXPECT_FALSE(s.Contains(8) && s.Contains(10)) << code;
}

TEST(LayerRunner, Gpt2AndT5SchemesAgreeWithOpByOp) {
  for (const std::string model : {"gpt2-small", "t5-small"}) {
    for (auto part : {LayerPart::kEncoder, LayerPart::kDecoder}) {
      if (model == "gpt2-small" && part == LayerPart::kEncoder) continue;
      const OpGraph g = PresetGraph(model, 1, 32, part);
      ASSERT_GT(g.Size(), 0);
      const Mask mask = BigBird(32);
      const auto ref = RunModel(g, mask, FusionScheme::OpByOp(g).Code(), 2);
      for (bool chains : {false, true}) {
        const auto got = RunModel(g, mask, DefaultScheme(g, {chains, chains}).Code(), 2);
        EXPECT_LT(MaxAbsDiff(got, ref), 2e-5) << model << " " << LayerPartName(part);
      }
    }
  }
}

TEST(LayerRunner, Gpt2CausalMaskIsApplied) {
  // With the causal AND, changing the mask above the diagonal must not change the output.
  const OpGraph g = PresetGraph("gpt2-small", 1, 32);
  Mask full = *Mask::Create(32, 32);
  Mask lower = *Mask::Create(32, 32);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      full.Set(i, j, true);
      lower.Set(i, j, j <= i);
    }
  const auto a = RunModel(g, full, DefaultScheme(g).Code());
  const auto b = RunModel(g, lower, DefaultScheme(g).Code());
  EXPECT_EQ(MaxAbsDiff(a, b), 0.0);
}

TEST(LayerRunner, InnerOutputReadLaterForcesOpByOpOrSumOut) {
  const OpGraph g = PresetGraph("gpt2-small", 1, 32);
  const Mask mask = BigBird(32);
  // [8-10] GEMM + Add + LN: op 9 is read by op 14 -> op by op, and the reason says so.
  // ops: 1 | 2 | 3-7 | 8-10 | 11 | 12 | 13 | 14
  std::vector<std::string> how;
  const auto got = RunModel(g, mask, "01000001110101", 1, &how);
  ASSERT_EQ(how.size(), 8u);
  EXPECT_NE(how[3].find("op 9's output is read after the segment"), std::string::npos) << how[3];
  // [9-10] Add + LN fused: sum_out keeps op 9's output for op 14; same result as op by op.
  how.clear();
  const auto fused = RunModel(g, mask, "01000001001010", 1, &how);
  EXPECT_EQ(how[4], "bias_add_norm");
  EXPECT_LT(MaxAbsDiff(fused, RunModel(g, mask, FusionScheme::OpByOp(g).Code())), 2e-5);
  EXPECT_LT(MaxAbsDiff(got, fused), 2e-5);
}

TEST(LayerRunner, BadInputIsAnErrorNamingTheField) {
  const OpGraph g = PresetGraph("bert-small", 1, 32);
  CpuBackend cpu;
  ModelRunOptions o;
  auto wrong_mask = ModelRunner::Create(cpu, g, BigBird(64), FusionScheme::OpByOp(g), o);
  ASSERT_FALSE(wrong_mask.IsOk());
  EXPECT_NE(wrong_mask.Message().find("mask"), std::string::npos) << wrong_mask.Message();
  o.layers = 0;
  auto zero = ModelRunner::Create(cpu, g, BigBird(32), FusionScheme::OpByOp(g), o);
  ASSERT_FALSE(zero.IsOk());
  EXPECT_NE(zero.Message().find("layers"), std::string::npos);
  o.layers = 1;
  o.choices.resize(3);
  auto choices = ModelRunner::Create(cpu, g, BigBird(32), FusionScheme::OpByOp(g), o);
  ASSERT_FALSE(choices.IsOk());
  EXPECT_NE(choices.Message().find("choices"), std::string::npos);
  // A call the backend refuses surfaces with the step's label.
  GemmCall bad;
  bad.m = 4, bad.n = 4, bad.k = 0;
  auto st = cpu.RunGemm(bad);
  ASSERT_FALSE(st.IsOk());
  EXPECT_NE(st.Message().find("k: must be at least 1"), std::string::npos) << st.Message();
}

TEST(LayerRunner, CheckAgainstCpuOnTheCpuIsExact) {
  const OpGraph g = PresetGraph("bert-small", 1, 32);
  CpuBackend cpu;
  auto c = CheckLayerAgainstCpu(cpu, g, BigBird(32), DefaultScheme(g), {}, 3, 1e-6);
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_TRUE(c->passed);
  EXPECT_EQ(c->nan_count, 0);
  EXPECT_LT(c->max_row_error, 1e-5);
}

// MeasureModel's progress (what `stof run` shows on stderr): every measurement announced once
// and in order, each run reported, the whole model layer by layer, estimates in range and a
// last report of fraction 1.
TEST(LayerRunner, MeasureModelReportsProgress) {
  const OpGraph g = PresetGraph("bert-small", 1, 32);
  CpuBackend cpu;
  ModelRunOptions o;
  o.layers = 3;
  const FusionScheme scheme = DefaultScheme(g);
  auto m = ModelRunner::Create(cpu, g, BigBird(32), scheme, o);
  ASSERT_TRUE(m.IsOk()) << m.Message();
  MeasureOptions mo;
  mo.warmup = 1;
  mo.repeats = 2;
  std::vector<std::string> stages;
  std::vector<MeasureProgress> reports;
  auto r = MeasureModel(cpu, **m, mo, [&](const MeasureProgress& p, bool new_stage) {
    if (new_stage) stages.push_back(p.stage);
    reports.push_back(p);
  });
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const size_t n = scheme.Segments().size();
  ASSERT_EQ(stages.size(), n + 2);
  EXPECT_EQ(stages[0], "segment 1/" + std::to_string(n) + " " + SegmentLabel(scheme.Segments()[0]));
  EXPECT_EQ(stages[n], "layer 0");
  EXPECT_EQ(stages[n + 1], "all 3 layers");
  // Each stage: its announcement, then warm-up + timed runs (1 + 2 here, all fast), the model
  // stage also after each of its first two layers.
  int64_t model_reports = 0, most_layers = 0;
  for (const MeasureProgress& p : reports) {
    EXPECT_TRUE(p.fraction == -1 || (p.fraction >= 0 && p.fraction <= 1)) << p.stage << " " << p.fraction;
    EXPECT_TRUE(p.remaining_s == -1 || p.remaining_s >= 0) << p.stage;
    if (p.stage == "all 3 layers") ++model_reports, most_layers = std::max<int64_t>(most_layers, p.layers_done);
  }
  EXPECT_EQ(model_reports, 1 + 3 * 3 + 1);  // start, 3 runs x 3 layers, the end
  EXPECT_EQ(most_layers, 3);
  EXPECT_EQ(reports.back().fraction, 1.0);
  EXPECT_EQ(reports.back().remaining_s, 0.0);
  EXPECT_EQ(reports.back().runs, 3);
  // Once one segment ran, there is an estimate.
  EXPECT_GE(reports[2].fraction, 0.0) << reports[2].stage;
}
