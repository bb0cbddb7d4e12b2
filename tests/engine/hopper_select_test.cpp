// engine/select/hopper_select.h: the tile model that decides, on an sm_90 device, between the
// portable block-wise configuration and the Hopper kernel's tiles (64 x 64 with 5 warps,
// 128 x 64 and 128 x 128 with 12). Values by hand: on a full mask every tiling computes L^2
// elements, so the ratio is 1 / rate.
#include <gtest/gtest.h>

#include <tuple>
#include <utility>

#include "engine/device/device_spec.h"
#include "engine/select/hopper_select.h"
#include "tests/engine/test_masks.h"

namespace {

using stof::engine::DeviceSpec;
using stof::engine::EstimateHopperTile;
using stof::engine::HopperKernelHeadDim;
using stof::engine::HopperTileCtasPerSm;
using stof::engine::HopperTimeRatio;
using stof::engine::Mask;
using stof::engine::MhaConfig;
using stof::engine::MhaKernel;
using stof::engine::Workload;
using stof::engine::testing::PatternMask;

Workload Shape(int64_t L, int64_t d) {
  Workload w;
  w.batch = 4, w.heads = 12, w.seq_len = L, w.head_dim = d;
  return w;
}

DeviceSpec H100() { return *stof::engine::FindBuiltinDevice("h100"); }

const MhaConfig kPortable{MhaKernel::kBlockWise, 64, 64, 4};

// On a full mask the tiles differ only in rate: at d 64 64 x 128 x 5 is the fastest (1.73
// against 1.65 for 64 x 64 x 5 and 128 x 128); at d 128 128 x 128 (2.2 against 1.85).
TEST(HopperSelect, FullMaskRatioIsOneOverTheRate) {
  const MhaConfig h64{MhaKernel::kBlockWise, 64, 128, 5}, h128{MhaKernel::kBlockWise, 128, 128, 12};
  for (auto [d, rate, tile] : {std::tuple<int64_t, double, MhaConfig>{64, 1.73, h64},
                               {128, 2.2, h128}}) {
    auto e = EstimateHopperTile(PatternMask("full", 1024), Shape(1024, d), H100(), kPortable);
    ASSERT_TRUE(e.IsOk()) << e.Message();
    EXPECT_TRUE(e->eligible);
    EXPECT_TRUE(e->prefer_hopper);
    EXPECT_DOUBLE_EQ(e->portable_elements, 1024.0 * 1024.0);
    EXPECT_DOUBLE_EQ(e->hopper_elements, 1024.0 * 1024.0);
    EXPECT_NEAR(e->ratio, 1.0 / rate, 1e-12);
    EXPECT_EQ(e->hopper, tile);
  }
}

// A band of 127 keys per row (w = 64) at L 4096: 190 valid 64 x 64 blocks; 128 x 64 has 126
// valid blocks, 1.33x the elements, more than its rate makes up, so the 64-row Hopper tile
// wins at both head sizes, on the portable tile's elements.
TEST(HopperSelect, NarrowBandTakesTheSixtyFourRowTile) {
  for (auto [d, rate] : {std::pair<int64_t, double>{64, 1.65}, {128, 1.85}}) {
    auto e = EstimateHopperTile(PatternMask("sliding_window", 4096), Shape(4096, d), H100(),
                                kPortable);
    ASSERT_TRUE(e.IsOk()) << e.Message();
    EXPECT_TRUE(e->eligible);
    EXPECT_TRUE(e->prefer_hopper);
    EXPECT_DOUBLE_EQ(e->portable_elements, 190.0 * 4096);
    EXPECT_DOUBLE_EQ(e->hopper_elements, 190.0 * 4096);
    EXPECT_EQ(e->hopper, (MhaConfig{MhaKernel::kBlockWise, 64, 64, 5}));
    EXPECT_NEAR(e->ratio, 1.0 / rate, 1e-12);
  }
  // The 128 x 64 tile's ratio by hand: its elements over its rate, over the portable elements.
  auto r =
      HopperTimeRatio(PatternMask("sliding_window", 4096), Shape(4096, 64), 128, 64, kPortable);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_NEAR(*r, 126.0 * 8192 / (1.65 * 0.78) / (190.0 * 4096), 1e-12);
  EXPECT_GT(*r, 1.0);
}

// Longformer L128 d64: 64 x 64 and 64 x 128 hold the same elements (the whole 128 x 128), so
// 64 x 128's rate (1.73 over 1.65) wins, unless its grid spills into a second wave of CTAs:
// at B20 H12 480 CTAs exceed its 132 x 3 slots (the busiest SM then runs 4 of 3.64 items per
// SM) and fit 64 x 64's 132 x 4 (at B16, 384 CTAs, both fit).
TEST(HopperSelect, APartialSecondWaveMovesTheChoiceToTheTileThatFitsOne) {
  Workload w = Shape(128, 64);
  w.heads = 12;
  for (auto [batch, bn] : {std::pair<int64_t, int64_t>{1, 128}, {16, 128}, {20, 64}}) {
    w.batch = batch;
    auto e = EstimateHopperTile(PatternMask("longformer", 128), w, H100(), kPortable);
    ASSERT_TRUE(e.IsOk()) << e.Message();
    EXPECT_EQ(e->hopper, (MhaConfig{MhaKernel::kBlockWise, 64, bn, 5})) << "B" << batch;
    // The ratio against the portable tiling stays elements over rate.
    EXPECT_NEAR(e->ratio, 1.0 / (bn == 128 ? 1.73 : 1.65), 1e-12) << "B" << batch;
  }
}

TEST(HopperSelect, TimeRatioRefusesATileTheKernelDoesNotHave) {
  auto r = HopperTimeRatio(PatternMask("full", 512), Shape(512, 128), 64, 128, kPortable);
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find("the Hopper kernel has no 64 x 128 tile at head_dim 128"),
            std::string::npos)
      << r.Message();
  r = HopperTimeRatio(PatternMask("full", 512), Shape(512, 64), 32, 64, kPortable);
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find("expected 128 x 64, 128 x 128, 64 x 64 or 64 x 128, got 32 x 64"),
            std::string::npos)
      << r.Message();
  r = HopperTimeRatio(PatternMask("full", 512), Shape(512, 100), 64, 64, kPortable);
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find("head_dim: expected a multiple of 8 from 8 to 256, got 100"),
            std::string::npos);
  r = HopperTimeRatio(PatternMask("full", 512), Shape(512, 256), 128, 128, kPortable);
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find("no 128 x 128 tile at head_dim 256"), std::string::npos)
      << r.Message();
}

// The head size the Hopper kernel computes a head_dim at: the smallest of 64, 128, 256 that
// holds it; none for sizes the copy engine cannot address (not a multiple of 8) or past 256.
TEST(HopperSelect, HeadSizesRunOnTheKernelThatHoldsThem) {
  EXPECT_EQ(HopperKernelHeadDim(8), 64);
  EXPECT_EQ(HopperKernelHeadDim(32), 64);
  EXPECT_EQ(HopperKernelHeadDim(64), 64);
  EXPECT_EQ(HopperKernelHeadDim(72), 128);
  EXPECT_EQ(HopperKernelHeadDim(96), 128);
  EXPECT_EQ(HopperKernelHeadDim(128), 128);
  EXPECT_EQ(HopperKernelHeadDim(136), 256);
  EXPECT_EQ(HopperKernelHeadDim(256), 256);
  for (int64_t bad : {0, 4, 60, 100, 264, 512, -64}) EXPECT_EQ(HopperKernelHeadDim(bad), 0) << bad;
  // The tiles at d 256: 128 x 64 and 64 x 64, one CTA per SM each.
  EXPECT_EQ(HopperTileCtasPerSm(256, 128, 64), 1);
  EXPECT_EQ(HopperTileCtasPerSm(256, 64, 64), 1);
  EXPECT_EQ(HopperTileCtasPerSm(256, 128, 128), 0);
  EXPECT_EQ(HopperTileCtasPerSm(96, 64, 64), HopperTileCtasPerSm(128, 64, 64));
  EXPECT_EQ(HopperTileCtasPerSm(32, 64, 128), HopperTileCtasPerSm(64, 64, 128));
}

TEST(HopperSelect, OnlySm90WithHeadDim64Or128AndABlockWisePick) {
  DeviceSpec a100 = *stof::engine::FindBuiltinDevice("a100");
  auto e = EstimateHopperTile(PatternMask("full", 512), Shape(512, 64), a100, kPortable);
  ASSERT_TRUE(e.IsOk());
  EXPECT_FALSE(e->eligible);
  EXPECT_FALSE(e->prefer_hopper);
  EXPECT_NE(e->why_not.find("compute capability 8.0"), std::string::npos) << e->why_not;
  e = EstimateHopperTile(PatternMask("full", 512), Shape(512, 100), H100(), kPortable);
  ASSERT_TRUE(e.IsOk());
  EXPECT_NE(e->why_not.find("head_dim 100"), std::string::npos) << e->why_not;
  e = EstimateHopperTile(PatternMask("full", 512), Shape(512, 64), H100(),
                         MhaConfig{MhaKernel::kRowWise, 64, 64, 4});
  ASSERT_TRUE(e.IsOk());
  EXPECT_FALSE(e->prefer_hopper);
  EXPECT_NE(e->why_not.find("row-wise"), std::string::npos);
}

TEST(HopperSelect, MaskOfAnotherSizeIsAnError) {
  auto e = EstimateHopperTile(PatternMask("full", 256), Shape(512, 64), H100(), kPortable);
  ASSERT_FALSE(e.IsOk());
  EXPECT_NE(e.Message().find("expected 512 x 512, got 256 x 256"), std::string::npos)
      << e.Message();
}

// An empty mask has no valid block: nothing to compare, the portable pick stays.
TEST(HopperSelect, EmptyMaskKeepsThePortablePick) {
  auto m = Mask::Create(1024, 1024, "empty");
  ASSERT_TRUE(m.IsOk());
  auto e = EstimateHopperTile(*m, Shape(1024, 128), H100(), kPortable);
  ASSERT_TRUE(e.IsOk());
  EXPECT_EQ(e->portable_elements, 0.0);
  EXPECT_FALSE(e->prefer_hopper);
}

}  // namespace
