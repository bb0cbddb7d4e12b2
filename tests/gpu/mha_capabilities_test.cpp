// engine::ModelMhaCapabilities (engine/select/model_capabilities.h, what a build without kernels
// chooses with) against this build's kernels (kernels::MhaCapabilities,
// kernels/attention/mha_choice.h). Host only, no GPU needed: every capability answers the same,
// message for message, over a grid of head sizes, tiles, warp counts and shared-memory limits
// (the mma.sync, SD / SDF and Hopper rules are one copy, the engine's; the Hopper kernel's
// shared memory per variant is modelled, so this is where the model is held to the kernel); and so the one choice (engine::ChooseMhaConfig) picks the same with either object,
// and ModelMhaRun is the kernels' chooser's answer but for decided_by.
#include <gtest/gtest.h>

#include <string>

#include "engine/analysis/mha_run.h"
#include "engine/device/device_spec.h"
#include "engine/select/model_capabilities.h"
#include "kernels/attention/mha_choice.h"
#include "kernels/attention_hopper/hopper_attention.h"
#include "tests/engine/test_masks.h"

namespace {

namespace se = stof::engine;
namespace sk = stof::kernels;

constexpr int64_t kLimits[] = {49152, 101376, 232448};  // 48 KiB, 99 KiB, 227 KiB

std::string At(int64_t d, int64_t bm, int64_t bn, int64_t w, int64_t smem) {
  return "d " + std::to_string(d) + " " + std::to_string(bm) + "x" + std::to_string(bn) + " w" +
         std::to_string(w) + " smem " + std::to_string(smem);
}

void ExpectSame(const se::Status& model, const se::Status& kernels, const std::string& at) {
  EXPECT_EQ(model.IsOk(), kernels.IsOk()) << at << ": " << model.Message() << " | "
                                          << kernels.Message();
  EXPECT_EQ(model.Message(), kernels.Message()) << at;
}

TEST(MhaCapabilities, ModelAnswersAsTheKernels) {
  const se::MhaKernelCapabilities& model = se::ModelMhaCapabilities();
  const se::MhaKernelCapabilities& kernels = sk::MhaCapabilities();
  int accepted = 0;
  for (int64_t smem : kLimits)
    for (int64_t d : {64, 96, 128, 256}) {
      EXPECT_EQ(model.DescribeBlockWise(d, smem), kernels.DescribeBlockWise(d, smem)) << d;
      for (int64_t bm : {16, 32, 64, 128})
        for (int64_t bn : {16, 32, 64, 128})
          for (int64_t w = 1; w <= 12; ++w) {
            const std::string at = At(d, bm, bn, w, smem);
            const se::Status block = kernels.CheckBlockWise(d, bm, bn, w, smem);
            ExpectSame(model.CheckBlockWise(d, bm, bn, w, smem), block, at);
            ExpectSame(model.CheckHopper(d, bm, bn, w, smem),
                       kernels.CheckHopper(d, bm, bn, w, smem), at);
            EXPECT_EQ(model.PreferredBlockWise(d, bm, bn, w, smem),
                      kernels.PreferredBlockWise(d, bm, bn, w, smem)) << at;
            accepted += block.IsOk() ? 1 : 0;
          }
    }
  EXPECT_GT(accepted, 100);  // the grid reaches both kernels' supported sets
  for (int64_t smem : kLimits)
    for (int64_t d : {64, 96, 128})
      for (se::RecomposeVariant v : {se::RecomposeVariant::kDecomposed,
                                     se::RecomposeVariant::kRecomposed})
        for (int t : {32, 64, 128})
          for (int bm : {32, 64, 128}) {
            const se::RecomposeParams p{t, bm};
            ExpectSame(model.CheckRecompose(p, d, v, smem), kernels.CheckRecompose(p, d, v, smem),
                       At(d, bm, t, 0, smem) + " " + se::RecomposeVariantName(v));
          }
}

// Every head size the Hopper kernel takes (multiples of 8 up to 256) and every tile.
TEST(MhaCapabilities, ModelHopperSharedMemoryIsTheKernels) {
  int variants = 0;
  for (int64_t d = 0; d <= 264; d += 4)
    for (int64_t bm : {32, 64, 128})
      for (int64_t bn : {32, 64, 128, 256}) {
        const size_t kernel = sk::HopperAttentionSmemBytes(d, bm, bn);
        EXPECT_EQ(se::ModelHopperSmemBytes(d, bm, bn), kernel) << d << " " << bm << "x" << bn;
        variants += kernel > 0 ? 1 : 0;
      }
  EXPECT_GT(variants, 9);
}

// The one choice with either capabilities object: the same configuration, sources and note on
// the grid (BigBird, causal, sliding window, Longformer at L 512-4096, d 64 and 128, f16
// and bf16) on sm_90 and sm_80 / sm_89 devices, and a few requests that reach the checks.
TEST(MhaCapabilities, OneChoiceWithEitherCapabilities) {
  for (const char* name : {"h100", "a100", "4090"}) {
    const se::DeviceSpec device = *se::FindBuiltinDevice(name);
    for (const char* pattern : {"bigbird", "causal", "sliding_window", "longformer"})
      for (int64_t L : {512, 1024, 4096}) {
        const se::Mask m = se::testing::PatternMask(pattern, L);
        for (int64_t d : {64, 128})
          for (se::DType t : {se::DType::kF16, se::DType::kBF16}) {
            const se::Workload w{4, L, 12, d, t};
            const std::string at = std::string(name) + " " + pattern + " L" +
                                   std::to_string(L) + " d" + std::to_string(d) + " " +
                                   se::DTypeName(t);
            auto model = se::ModelMhaRun(m, w, device);
            auto kernels = se::ChooseMhaRun(m, w, device, sk::MhaCapabilities(), "kernels");
            ASSERT_EQ(model.IsOk(), kernels.IsOk()) << at;
            if (!model.IsOk()) {
              EXPECT_EQ(model.Message(), kernels.Message()) << at;
              continue;
            }
            se::MhaRunChoice as_kernels = *model;
            as_kernels.decided_by = "kernels";
            EXPECT_EQ(as_kernels, *kernels) << at;
          }
      }
  }
  const se::Mask m = se::testing::PatternMask("bigbird", 1024);
  const se::Workload w{4, 1024, 12, 128, se::DType::kF16};
  const se::DeviceSpec a100 = *se::FindBuiltinDevice("a100");
  for (const se::MhaRequest& r : {se::MhaRequest{se::MhaKernelRequest::kBlockWise, 128, 128, 12},
                                  se::MhaRequest{se::MhaKernelRequest::kBlockWise, 128, 128, 0},
                                  se::MhaRequest{se::MhaKernelRequest::kBlockWise, 0, 0, 2},
                                  se::MhaRequest{se::MhaKernelRequest::kRecomposed, 128, 128, 0}}) {
    auto model = se::ChooseMhaConfig(m, w, a100, r, se::ModelMhaCapabilities());
    auto kernels = sk::ChooseMhaConfig(m, w, a100, r);
    ASSERT_EQ(model.IsOk(), kernels.IsOk()) << model.Message() << " | " << kernels.Message();
    if (!model.IsOk()) {
      EXPECT_EQ(model.Message(), kernels.Message());
      continue;
    }
    EXPECT_EQ(model->config, kernels->config);
    EXPECT_EQ(model->params_source, kernels->params_source);
    EXPECT_EQ(model->note, kernels->note);
  }
}

}  // namespace
