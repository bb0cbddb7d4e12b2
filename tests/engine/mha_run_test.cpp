// engine/analysis/mha_run.h: what runs, as every view and command shows it. Without the
// kernels' rules (this CPU build) ChooseRun is ModelMhaRun: the engine's one MHA choice
// (ChooseMhaConfig) over the engine's model of the kernels' rules (ModelMhaCapabilities): Eq.
// 1's kernel, the best Eq. 2 candidate in the kernels' preferred set, on sm_90 the Hopper tile
// where the tile model says faster, bf16 on the Hopper kernel only; a chooser (the kernels'
// rules in a CUDA build) replaces it. Also the configuration, JSON and text forms, and the
// tuner's predicted choices starting from it. The kernels' capabilities against the model:
// tests/gpu/mha_capabilities_test.cpp.
#include <gtest/gtest.h>

#include "engine/analysis/mha_run.h"
#include "engine/device/device_spec.h"
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"
#include "engine/select/hopper_select.h"
#include "engine/select/block_sparse_rules.h"
#include "engine/select/kernel_select.h"
#include "engine/select/mha_choice.h"
#include "engine/select/model_capabilities.h"
#include "engine/tune/ladder.h"
#include "engine/tune/predicted_cost_source.h"
#include "engine/tune/tune_session.h"
#include "test_masks.h"

namespace stof::engine {
namespace {

using testing::PatternMask;

Workload BertBase(int64_t L) { return Workload{8, L, 12, 64, DType::kF16}; }

// BigBird at L = 1024, BERT-base, H100: Eq. 2 picks a small tile, the preferred set makes it
// 64-row, and the Hopper tile model then takes the Hopper kernel (the example: the
// GPU build's `stof select` prints the Hopper kernel 64 x 64 with 5 warps).
TEST(MhaRun, ModelFollowsTheKernelsRulesOnTheH100) {
  const Mask m = PatternMask("bigbird", 1024);
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  auto r = ModelMhaRun(m, BertBase(1024), h100);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const KernelSelection sel = *SelectKernel(m, BertBase(1024), h100);
  const MhaConfig portable = *DefaultFusedMhaConfig(BertBase(1024), m, h100);
  const HopperTileEstimate e = *EstimateHopperTile(m, BertBase(1024), h100, portable);
  EXPECT_EQ(r->decided_by, "engine model");
  EXPECT_EQ(r->kernel, MhaKernelName(sel.kernel));
  EXPECT_EQ(r->kernel_source, "eq1");
  ASSERT_TRUE(e.eligible) << e.why_not;
  const MhaConfig want = e.prefer_hopper ? e.hopper : portable;
  EXPECT_EQ(RunConfig(*r), want);
  EXPECT_EQ(r->family, e.prefer_hopper ? "hopper" : "portable");
  EXPECT_EQ(r->params_source, e.prefer_hopper ? "hopper tile model" : "eq2 (preferred set)");
  // Eq. 2's own pick is not what runs here, and the note says why.
  EXPECT_FALSE(sel.block_m == want.block_m && sel.block_n == want.block_n && sel.num_warps == want.num_warps);
  EXPECT_FALSE(r->note.empty());
}

// An A100 has no Hopper kernel: what runs is the preferred-set pick.
TEST(MhaRun, ModelWithoutHopperIsThePreferredSetPick) {
  const Mask m = PatternMask("bigbird", 1024);
  const DeviceSpec a100 = *FindBuiltinDevice("a100");
  auto r = ModelMhaRun(m, BertBase(1024), a100);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(RunConfig(*r), *DefaultFusedMhaConfig(BertBase(1024), m, a100));
  EXPECT_EQ(r->family, "portable");
  EXPECT_GE(r->block_m, 64);
  EXPECT_EQ(r->num_warps, r->block_m / 16);
}

// A decode step of 32 heads over 8 key/value heads: what the kernels run is the Hopper tile
// model's shape choice (Eq. 1 / Eq. 2 are not evaluated), the group's heads packed; an A100
// runs nothing and the error says why.
TEST(MhaRun, ModelOfAGroupedShapeIsTheHopperShapeChoice) {
  Workload w{8, 8192, 32, 128, DType::kF16};
  w.kv_heads = 8;
  w.q_len = 1;
  const Mask decode = *PatternMask("causal", 8192).LastRows(1);
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  auto r = ModelMhaRun(decode, w, h100);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const HopperShapeChoice pick = *ChooseHopperTileForShape(decode, w, h100);
  EXPECT_EQ(RunConfig(*r), pick.config);
  EXPECT_EQ(r->family, "hopper");
  EXPECT_EQ(r->kernel_source, "shape");
  EXPECT_EQ(r->params_source, "hopper tile model");
  EXPECT_NE(r->note.find("4 query heads x 1 row per tile (packed GQA)"), std::string::npos) << r->note;
  auto a100 = ModelMhaRun(decode, w, *FindBuiltinDevice("a100"));
  ASSERT_FALSE(a100.IsOk());
  EXPECT_NE(a100.Message().find("runs on the Hopper kernel only"), std::string::npos) << a100.Message();
}

// One choice: ModelMhaRun is ChooseMhaConfig with ModelMhaCapabilities, converted, on BigBird,
// causal and sliding-window masks at L 512-4096, d 64 and 128, f16 and bf16, on an sm_90
// device and an sm_80 one. What it picks follows the kernels' rules: f16 runs the preferred
// set's mma.sync configuration or, on sm_90, a Hopper one; bf16 runs the Hopper kernel on sm_90
// and nothing elsewhere, the reason naming the field.
TEST(MhaRun, ModelIsTheChoiceOverTheModelCapabilities) {
  for (const char* name : {"h100", "a100"}) {
    const DeviceSpec device = *FindBuiltinDevice(name);
    const bool sm90 = device.cc_major == 9 && device.cc_minor == 0;
    for (const char* pattern : {"bigbird", "causal", "sliding_window"})
      for (int64_t L : {512, 1024, 2048, 4096}) {
        const Mask m = PatternMask(pattern, L);
        for (int64_t d : {64, 128})
          for (DType t : {DType::kF16, DType::kBF16}) {
            const Workload w{8, L, 12, d, t};
            const std::string at = std::string(name) + " " + pattern + " L" +
                                   std::to_string(L) + " d" + std::to_string(d) + " " +
                                   DTypeName(t);
            auto model = ModelMhaRun(m, w, device);
            auto choice = ChooseMhaConfig(m, w, device, MhaRequest{}, ModelMhaCapabilities());
            ASSERT_EQ(model.IsOk(), choice.IsOk()) << at;
            if (!choice.IsOk()) {
              EXPECT_EQ(model.Message(), choice.Message()) << at;
              EXPECT_TRUE(t == DType::kBF16 && !sm90) << at << ": " << model.Message();
              EXPECT_EQ(model.Message().rfind("workload.dtype: bf16 runs on the Hopper kernel "
                                              "only", 0), 0u) << model.Message();
              continue;
            }
            EXPECT_EQ(*model, RunChoiceOf(*choice, "engine model")) << at;
            if (t == DType::kBF16) {
              EXPECT_EQ(model->family, "hopper") << at;
              EXPECT_EQ(model->kernel_source, "bf16") << at;
            } else if (model->family == "portable") {
              EXPECT_TRUE(IsPreferredBlockSparseConfig(d, model->block_m, model->block_n,
                                                       model->num_warps,
                                                       device.smem_per_block_bytes)) << at;
            } else if (model->family == "hopper") {
              EXPECT_TRUE(sm90) << at;
              EXPECT_EQ(model->params_source, "hopper tile model") << at;
            }
          }
      }
  }
}

// bf16 runs on the Hopper kernel only, as the kernels choose (ChooseMhaConfig's bf16 path):
// on an H100 the tile model's configuration with kernel source "bf16", where the model used to
// answer as for f16; on an A100 nothing, the reason naming the field. A model's f32 is asked
// about as f16, the kernels' default.
TEST(MhaRun, ModelRunsBf16OnTheHopperKernelOnly) {
  const Mask m = PatternMask("bigbird", 1024);
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  Workload bf16 = BertBase(1024);
  bf16.dtype = DType::kBF16;
  auto r = ModelMhaRun(m, bf16, h100);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const MhaConfig portable = *DefaultFusedMhaConfig(BertBase(1024), m, h100);
  const HopperTileEstimate e = *EstimateHopperTile(m, BertBase(1024), h100, portable);
  EXPECT_EQ(RunConfig(*r), e.hopper);
  EXPECT_EQ(r->family, "hopper");
  EXPECT_EQ(r->kernel_source, "bf16");
  EXPECT_EQ(r->params_source, "hopper tile model");
  auto a100 = ModelMhaRun(m, bf16, *FindBuiltinDevice("a100"));
  ASSERT_FALSE(a100.IsOk());
  EXPECT_EQ(a100.Message(), "workload.dtype: bf16 runs on the Hopper kernel only: the device is "
                            "not sm_90 (compute capability 8.0)");
  Workload f32 = BertBase(1024);
  f32.dtype = DType::kF32;
  EXPECT_EQ(*ModelMhaRun(m, f32, h100), *ModelMhaRun(m, BertBase(1024), h100));
}

TEST(MhaRun, ChooserReplacesTheModelAndErrorsPass) {
  const Mask m = PatternMask("bigbird", 512);
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  int calls = 0;
  const MhaRunChooser kernels = [&](const Mask&, const Workload&, const DeviceSpec&) -> Expected<MhaRunChoice> {
    ++calls;
    MhaRunChoice c = RunChoiceOf(MhaConfig{MhaKernel::kBlockWise, 128, 64, 12}, "ignored");
    c.kernel_source = "eq1";
    return c;
  };
  auto r = ChooseRun(kernels, m, BertBase(512), h100);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r->decided_by, "kernels");
  EXPECT_EQ(r->family, "hopper");
  EXPECT_EQ(ChooseRun(nullptr, m, BertBase(512), h100)->decided_by, "engine model");
  const MhaRunChooser failing = [](const Mask&, const Workload&, const DeviceSpec&) -> Expected<MhaRunChoice> {
    return MakeError("workload.head_dim: the sparse MHA kernels support 64 or 128, got 96");
  };
  EXPECT_EQ(ChooseRun(failing, m, BertBase(512), h100).Message(),
            "workload.head_dim: the sparse MHA kernels support 64 or 128, got 96");
  // The model names a mask of the wrong size.
  auto bad = ChooseRun(nullptr, PatternMask("bigbird", 256), BertBase(512), h100);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("256"), std::string::npos) << bad.Message();
}

TEST(MhaRun, FormsOfAChoice) {
  MhaRunChoice c = RunChoiceOf(MhaConfig{MhaKernel::kBlockWise, 64, 64, 5}, "engine model");
  c.kernel_source = "eq1";
  c.params_source = "hopper tile model";
  EXPECT_EQ(MhaRunChoiceShort(c), "block_wise 64x64 w5 (Hopper)");
  EXPECT_EQ(MhaRunChoiceText(c),
            "block_wise 64x64, 5 warps: Hopper kernel (wgmma, TMA, warp-specialized); kernel from "
            "eq1, parameters from hopper tile model (the engine's model of the kernels' rules: this "
            "build has no kernels)");
  const nlohmann::json j = MhaRunChoiceJson(c);
  EXPECT_EQ(j["num_warps"], 5);
  EXPECT_EQ(j["family"], "hopper");
  EXPECT_EQ(j["decided_by"], "engine model");
  EXPECT_FALSE(j.contains("note"));
  const MhaRunChoice row = RunChoiceOf(MhaConfig{MhaKernel::kRowWise, 16, 16, 1}, "kernels");
  EXPECT_EQ(row.block_m, 0);
  EXPECT_EQ(row.family, "");
  EXPECT_EQ(RunConfig(row), (MhaConfig{MhaKernel::kRowWise, 64, 64, 4}));  // legal block fields
  EXPECT_EQ(MhaRunChoiceShort(row), "row_wise");
}

// The tuner's predictions start from what runs (the untuned default is what every view shows),
// not from Eq. 2's raw pick; Eq. 2's other settings, row-wise and SDF follow.
TEST(MhaRun, PredictedTuningChoicesStartFromWhatRuns) {
  const Mask m = PatternMask("bigbird", 1024);
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  GraphRequest rq;
  rq.model = *FindModelPreset("bert-base");
  rq.batch = 8;
  rq.seq_len = 1024;
  const OpGraph g = *BuildLayerGraph(rq);
  PredictedCostSource src(g, m, h100, MakeSegmentPredictor(g, m, h100));
  auto choices = src.Choices(Segment{2, 6});
  ASSERT_TRUE(choices.IsOk()) << choices.Message();
  ASSERT_GT(choices->size(), 3u);
  EXPECT_EQ(choices->front().mha_variant, MhaVariant::kFused);
  EXPECT_EQ(choices->front().mha_config, RunConfig(*ModelMhaRun(m, g.AttentionWorkload(), h100)));
  EXPECT_EQ(choices->back().mha_variant, MhaVariant::kRecomposed);
  int front = 0;
  for (const SegmentChoice& c : *choices)
    front += c.mha_variant == MhaVariant::kFused && c.mha_config == choices->front().mha_config ? 1 : 0;
  EXPECT_EQ(front, 1);  // listed once
}

}  // namespace
}  // namespace stof::engine
