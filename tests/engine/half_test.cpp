// fp16 and bf16 <-> fp32 on the host (engine/core/half.h): exact values, round to nearest
// even at the halfway points, subnormals, overflow, infinities and NaN. The GPU tests build
// their inputs and read their outputs with these, so a wrong rounding would shift every
// reference.
#include "engine/core/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using stof::engine::Bf16ToFloat;
using stof::engine::FloatToBf16;
using stof::engine::FloatToHalf;
using stof::engine::HalfToFloat;

float Bits(uint32_t x) { return std::bit_cast<float>(x); }

TEST(Half, ExactValuesRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f, 0.000000059604645f})
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00u);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000u);
}

TEST(Half, RoundsToNearestEvenAndSaturatesToInf) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to the even one, 1.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00u);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02u);
  EXPECT_EQ(FloatToHalf(70000.0f), 0x7c00u);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00u);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Bf16, ExactValuesRoundTrip) {
  // Values bf16 holds exactly: zeros, small integers, the largest finite (0x7f7f), the
  // smallest normal (0x0080) and a subnormal (0x0001).
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, Bits(0x7f7f0000u), Bits(0x00800000u),
                  Bits(0x00010000u)})
    EXPECT_EQ(Bf16ToFloat(FloatToBf16(f)), f) << f;
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80u);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xc000u);
  EXPECT_EQ(Bf16ToFloat(0x3f80u), 1.0f);
}

TEST(Bf16, RoundsToNearestEvenAndSaturatesToInf) {
  // 1 + 2^-8 is halfway between 1 (even mantissa) and 1 + 2^-7: to 1.
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80u);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82u);
  // Just above the halfway point rounds up.
  EXPECT_EQ(FloatToBf16(Bits(0x3f808001u)), 0x3f81u);
  // The largest finite float rounds past bf16's largest finite value: inf.
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::max()), 0x7f80u);
  EXPECT_EQ(FloatToBf16(-std::numeric_limits<float>::infinity()), 0xff80u);
  const uint16_t nan = FloatToBf16(Bits(0x7f800001u));  // a NaN whose payload is in the low half
  EXPECT_TRUE(std::isnan(Bf16ToFloat(nan))) << std::hex << nan;
}

}  // namespace
