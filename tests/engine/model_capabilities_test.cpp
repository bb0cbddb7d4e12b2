// The kernels' rules as engine host arithmetic (engine/select/block_sparse_rules.h,
// recompose_params.h: the one copy the kernels call too) and the engine's model of the Hopper
// kernel's check (model_capabilities.h), by value, so a build without kernels tests them too:
// the mma.sync kernel's supported and preferred sets and shared memory, SD / SDF's parameters,
// the Hopper variants' shared memory and refusals, and ModelMhaCapabilities sending num_warps 5
// and 12 to the Hopper check. That the model answers as the kernels do is checked against them
// in a CUDA build (tests/gpu/mha_capabilities_test.cpp).
#include "engine/select/model_capabilities.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/select/block_sparse_rules.h"
#include "engine/select/recompose_params.h"

namespace stof::engine {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ModelCapabilities, MmaSyncSupportedAndPreferredSets) {
  // On a 227 KiB device: 45 combinations at d 64 (36 with 16 rows per warp, 9 with 32), 30 at
  // d 128 (docs/kernels.md); none at another head size.
  EXPECT_EQ(PortableBlockSparseConfigs(64).size(), 45u);
  EXPECT_EQ(PortableBlockSparseConfigs(128).size(), 30u);
  EXPECT_TRUE(PortableBlockSparseConfigs(96).empty());
  for (const MhaConfig& c : PortableBlockSparseConfigs(128))
    EXPECT_TRUE(CheckPortableBlockSparseConfig(128, c.block_m, c.block_n, c.num_warps).IsOk());
  // The preferred set: BLOCK >= 64, one warp per 16 rows, no split.
  EXPECT_TRUE(IsPreferredBlockSparseConfig(64, 64, 64, 4));
  EXPECT_TRUE(IsPreferredBlockSparseConfig(128, 128, 128, 8));
  EXPECT_FALSE(IsPreferredBlockSparseConfig(64, 16, 16, 4));   // Eq. 2's usual pick
  EXPECT_FALSE(IsPreferredBlockSparseConfig(64, 64, 64, 8));   // a split
  EXPECT_FALSE(IsPreferredBlockSparseConfig(64, 64, 64, 2));   // 32 rows per warp
  EXPECT_FALSE(IsPreferredBlockSparseConfig(64, 64, 64, 5));   // the Hopper kernel's
  // Shared memory: Q 64 x 72 halves + 2 stages x (K, V) x 64 x 72 halves; a split's merge area.
  EXPECT_EQ(BlockSparseSmemBytes(64, 64, 64, 4), 64u * 72 * 2 + 2u * 2 * 64 * 72 * 2);
  EXPECT_EQ(BlockSparseSmemBytes(64, 64, 16, 8), 64u * 72 * 2 + 2u * 64 * (72 * 4 + 8));
  EXPECT_EQ(BlockSparseRowsPerWarp(64, 64, 64, 2), 32);
  EXPECT_EQ(BlockSparseSmemBytes(96, 64, 64, 4), 0u);
  // A 48 KiB limit drops the large tiles, and the refusal names the need and the limit.
  auto small = CheckPortableBlockSparseConfig(128, 128, 128, 8, 49152);
  ASSERT_FALSE(small.IsOk());
  EXPECT_TRUE(Contains(small.Message(), "BLOCK_M 128, BLOCK_N 128, num_warps 8, head_dim 128: "
                                        "needs 174080 bytes of shared memory, the limit is 49152"))
      << small.Message();
  EXPECT_TRUE(Contains(small.Message(), "on sm_90 GPUs also the Hopper kernel")) << small.Message();
  EXPECT_EQ(DescribeSupportedBlockSparseConfigs(96), "none (head_dim must be 64 or 128)");
}

TEST(ModelCapabilities, RecomposeParameters) {
  for (RecomposeVariant v : {RecomposeVariant::kDecomposed, RecomposeVariant::kRecomposed}) {
    EXPECT_TRUE(CheckRecomposeParams(RecomposeParams{}, 64, v).IsOk());
    EXPECT_EQ(CheckRecomposeParams(RecomposeParams{96, 64}, 64, v).Message(),
              std::string("recomposed MHA (") + RecomposeVariantName(v) +
                  "): params.sub_len: expected 64 or 128 (T, whole 64-bit mask words), got 96");
    EXPECT_EQ(SupportedRecomposeParams(128, v).size(), 4u);
    EXPECT_TRUE(SupportedRecomposeParams(96, v).empty());
  }
  // SDF at T 128, BM 128, d 128 needs 140288 bytes: refused at 99 KiB, which SD does not need.
  const RecomposeParams big{128, 128};
  EXPECT_EQ(RecomposeSmemBytes(big, 128, RecomposeVariant::kRecomposed), 140288);
  EXPECT_FALSE(CheckRecomposeParams(big, 128, RecomposeVariant::kRecomposed, 101376).IsOk());
  EXPECT_TRUE(CheckRecomposeParams(big, 128, RecomposeVariant::kDecomposed, 101376).IsOk());
}

// The Hopper kernel's nine variants (head sizes 64, 128, 256; others run on the next one up)
// and its refusals, each naming the rule.
TEST(ModelCapabilities, HopperVariantsAndRefusals) {
  EXPECT_EQ(ModelHopperSmemBytes(64, 64, 64), 51396u);
  EXPECT_EQ(ModelHopperSmemBytes(128, 128, 128), 201928u);
  EXPECT_EQ(ModelHopperSmemBytes(96, 64, 64), ModelHopperSmemBytes(128, 64, 64));
  EXPECT_EQ(ModelHopperSmemBytes(256, 128, 128), 0u);
  EXPECT_EQ(ModelHopperSmemBytes(100, 64, 64), 0u);
  int variants = 0;
  for (int64_t d : {64, 128, 256})
    for (int64_t bm : {64, 128})
      for (int64_t bn : {64, 128}) {
        const int64_t warps = bm == 64 ? kHopperMhaWarps64 : kHopperMhaWarps;
        const bool ok = ModelCheckHopperConfig(d, bm, bn, warps, 232448).IsOk();
        EXPECT_EQ(ok, ModelHopperSmemBytes(d, bm, bn) > 0) << d << " " << bm << "x" << bn;
        variants += ok ? 1 : 0;
      }
  EXPECT_EQ(variants, 9);
  auto wide = ModelCheckHopperConfig(128, 64, 128, kHopperMhaWarps64, 232448);
  ASSERT_FALSE(wide.IsOk());
  EXPECT_TRUE(Contains(wide.Message(), "BLOCK_N must be 64 with BLOCK_M 64 above head_dim 64"))
      << wide.Message();
  auto smem = ModelCheckHopperConfig(128, 128, 128, kHopperMhaWarps, 101376);
  ASSERT_FALSE(smem.IsOk());
  EXPECT_TRUE(Contains(smem.Message(), "needs 201928 bytes of shared memory, the limit is 101376"))
      << smem.Message();
  // The capabilities object sends num_warps 5 and 12 to the Hopper check, the rest to the
  // mma.sync kernel's.
  const MhaKernelCapabilities& caps = ModelMhaCapabilities();
  EXPECT_TRUE(caps.CheckBlockWise(96, 128, 64, kHopperMhaWarps, 232448).IsOk());
  EXPECT_EQ(caps.CheckBlockWise(128, 64, 128, kHopperMhaWarps64, 232448).Message(),
            wide.Message());
  EXPECT_FALSE(caps.CheckBlockWise(96, 64, 64, 4, 232448).IsOk());
  EXPECT_EQ(caps.CheckHopper(128, 128, 128, kHopperMhaWarps, 101376).Message(), smem.Message());
}

}  // namespace
}  // namespace stof::engine
