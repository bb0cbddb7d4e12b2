// PredictLadder (engine/tune/ladder.h): the four rungs in order with their names, predicted
// (never "measured"), the unfused rung moving more bytes than the fused one, and bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/device/device_spec.h"
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
