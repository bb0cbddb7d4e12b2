// PredictLadder (engine/tune/ladder.h): the four rungs in order with their names, predicted
// (never "measured"), the unfused rung moving more bytes than the fused one, and bad input;
// the default fused rung is the MHA choice's own mma.sync configuration.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/device/device_spec.h"
#include "engine/select/mha_choice.h"
#include "engine/select/model_capabilities.h"
#include "engine/tune/ladder.h"
#include "test_masks.h"

namespace stof::engine {
namespace {

Workload W(int64_t batch, int64_t L) { return Workload{batch, L, 12, 64, DType::kF16}; }

TEST(Ladder, FourPredictedRungsInOrder) {
  const Mask mask = testing::PatternMask("bigbird", 512);
  auto rungs = PredictLadder(W(8, 512), mask, *FindBuiltinDevice("h100"));
  ASSERT_TRUE(rungs.IsOk()) << rungs.Message();
  ASSERT_EQ(rungs->size(), 4u);
  const std::vector<MhaVariant> want = {MhaVariant::kUnfused, MhaVariant::kDecomposed,
                                        MhaVariant::kRecomposed, MhaVariant::kFused};
  const std::vector<std::string> names = {"unfused", "decomposed (sd)",
                                          "decomposed + fused (sdf)", "fully fused"};
  for (size_t i = 0; i < 4; ++i) {
    const LadderRung& r = (*rungs)[i];
    EXPECT_EQ(r.variant, want[i]);
    EXPECT_EQ(r.name, names[i]);
    EXPECT_GT(r.us, 0) << r.name;
    EXPECT_TRUE(std::isfinite(r.us)) << r.name;
    EXPECT_GT(r.dram_bytes, 0) << r.name;
    EXPECT_GE(r.kernels, 1) << r.name;
    EXPECT_FALSE(r.measured) << r.name;
    EXPECT_EQ(r.basis.rfind("predicted", 0), 0u) << r.basis;
  }
  // Unfused writes and reads the dense B*H*L*L scores; fused keeps them on chip.
  const double scores = 2.0 * 8 * 12 * 512 * 512;  // fp16 S written once
  EXPECT_GT(rungs->front().dram_bytes, rungs->back().dram_bytes + scores);
  EXPECT_EQ(rungs->front().kernels, 3);  // GEMM, scale+mask+softmax, GEMM
  EXPECT_EQ(rungs->back().kernels, 1);
  // The JSON form keeps every rung and its fields.
  const nlohmann::json j = LadderToJson(*rungs);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["variant"], "unfused");
  EXPECT_EQ(j[3]["variant"], "fused");
  EXPECT_EQ(j[2]["name"], "decomposed + fused (sdf)");
  EXPECT_EQ(j[1]["measured"], false);
  EXPECT_DOUBLE_EQ(j[3]["us"].get<double>(), rungs->back().us);
}

TEST(Ladder, DefaultFusedConfigIsInThePreferredSet) {
  const Mask mask = testing::PatternMask("bigbird", 1024);
  auto c = DefaultFusedMhaConfig(W(8, 1024), mask, *FindBuiltinDevice("h100"));
  ASSERT_TRUE(c.IsOk()) << c.Message();
  if (c->kernel == MhaKernel::kBlockWise) {
    EXPECT_GE(c->block_m, 64);
    EXPECT_GE(c->block_n, 64);
    EXPECT_EQ(c->num_warps, c->block_m / 16);
  }
}

// The default fused rung is not a rule of its own: it is the configuration ChooseMhaConfig
// picks among the mma.sync kernels before the Hopper tile model (MhaChoice::portable), so on an
// H100, where the choice then takes the Hopper kernel, the ladder keeps the mma.sync one; bf16
// asks as f16 (the mma.sync kernels' type); a row-wise pick gets the legal block fields.
TEST(Ladder, DefaultFusedConfigIsTheChoicesMmaSyncConfig) {
  for (const char* name : {"h100", "a100"}) {
    const DeviceSpec device = *FindBuiltinDevice(name);
    for (const char* pattern : {"bigbird", "sliding_window", "causal", "dilated"})
      for (int64_t L : {512, 2048}) {
        const Mask mask = testing::PatternMask(pattern, L);
        for (int64_t d : {64, 128}) {
          Workload w{8, L, 12, d, DType::kF16};
          auto c = ChooseMhaConfig(mask, w, device, MhaRequest{}, ModelMhaCapabilities());
          ASSERT_TRUE(c.IsOk()) << c.Message();
          ASSERT_TRUE(c->portable.has_value()) << name << " " << pattern << " " << L;
          MhaConfig want = *c->portable;
          if (want.kernel == MhaKernel::kRowWise) want = MhaConfig{MhaKernel::kRowWise, 64, 64, 4};
          EXPECT_FALSE(IsHopperMhaWarps(want.num_warps));
          auto got = DefaultFusedMhaConfig(w, mask, device);
          ASSERT_TRUE(got.IsOk()) << got.Message();
          EXPECT_EQ(*got, want) << name << " " << pattern << " L" << L << " d" << d;
          w.dtype = DType::kBF16;
          EXPECT_EQ(*DefaultFusedMhaConfig(w, mask, device), want);
        }
      }
  }
  // BigBird L1024 on an H100: the choice runs the Hopper kernel, the ladder's F rung the
  // mma.sync configuration it replaced.
  const Mask mask = testing::PatternMask("bigbird", 1024);
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  auto c = ChooseMhaConfig(mask, W(8, 1024), h100, MhaRequest{}, ModelMhaCapabilities());
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_TRUE(IsHopperMhaWarps(c->config.num_warps));
  EXPECT_EQ(*DefaultFusedMhaConfig(W(8, 1024), mask, h100), *c->portable);
}

TEST(Ladder, BadInput) {
  const Mask small = testing::PatternMask("bigbird", 256);
  auto r = PredictLadder(W(8, 512), small, *FindBuiltinDevice("h100"));
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find("mask: expected 512 x 512"), std::string::npos) << r.Message();
  EXPECT_NE(r.Message().find("256 x 256"), std::string::npos) << r.Message();

  const Mask mask = testing::PatternMask("bigbird", 512);
  auto zero = PredictLadder(W(0, 512), mask, *FindBuiltinDevice("h100"));
  ASSERT_FALSE(zero.IsOk());
  EXPECT_NE(zero.Message().find("batch"), std::string::npos) << zero.Message();

  DeviceSpec broken = *FindBuiltinDevice("h100");
  broken.dram_bytes_per_s = 0;
  auto dev = PredictLadder(W(8, 512), mask, broken);
  ASSERT_FALSE(dev.IsOk());
  EXPECT_NE(dev.Message().find("device"), std::string::npos) << dev.Message();
}

}  // namespace
}  // namespace stof::engine
