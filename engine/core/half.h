// fp16 and bf16 <-> fp32 on the host (IEEE binary16 / bfloat16 bits in a uint16_t), round to
// nearest even. Used wherever host code prepares or reads 16-bit device data: the layer
// runner's weights (engine/run), the GPU tests and `stof bench` (through
// kernels/util/mha_check.h). Header-only.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace stof::engine {

// fp32 -> fp16 bits, round to nearest even (inf/NaN kept, overflow to inf).
inline uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t e8 = static_cast<int32_t>((x >> 23) & 0xffu);
  uint32_t mant = x & 0x7fffffu;
  if (e8 == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int32_t e = e8 - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // fp16 subnormal or zero: in units of 2^-24 the value is mant24 >> (14 - e)
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return static_cast<uint16_t>(sign | h);
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (e == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);  // subnormal or zero
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (mant << 13));
}

// f rounded to the nearest fp16 value, as a float: what a device sees after an fp16 upload.
inline float RoundToHalf(float f) { return HalfToFloat(FloatToHalf(f)); }

// fp32 -> bf16 bits (the upper half of the fp32 bits), round to nearest even; NaN stays a
// quiet NaN, overflow rounds to inf as the hardware's cvt.rn.bf16 does.
inline uint16_t FloatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  const uint32_t round = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + round) >> 16);
}

inline float Bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace stof::engine
