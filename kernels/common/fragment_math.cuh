// Scalar helpers on accumulator fragments shared by every tensor-core kernel family (the
// mma.sync families through kernels/common/mma_sync.cuh, the Hopper kernel through
// kernels/common/fragment_softmax.cuh): -inf, 2^x on the SFU, two fp32 as one .f16x2 register,
// and the sum over a quad (the 4 lanes that hold one accumulator row's columns in the m16n8
// and wgmma m64nN layouts). Device-only.
#pragma once

#include <cstdint>

namespace stof::kernels::common {

__device__ __forceinline__ float NegInf() { return __int_as_float(0xff800000u); }

// 2^x with the SFU (relative error about 2^-22); 2^-inf = +0, which masking relies on.
__device__ __forceinline__ float FastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Two fp32 values as one .f16x2 register, `lo` in the low half (round to nearest).
__device__ __forceinline__ uint32_t PackHalf2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// The same as .bf16x2 (the Hopper kernel's bf16 path).
__device__ __forceinline__ uint32_t PackBf162(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// PackBf162 when kBf16, else PackHalf2.
template <bool kBf16>
__device__ __forceinline__ uint32_t PackPair(float lo, float hi) {
  if constexpr (kBf16) {
    return PackBf162(lo, hi);
  } else {
    return PackHalf2(lo, hi);
  }
}

// The sum of `x` over the 4 lanes of a quad (lanes 4g..4g+3), which hold disjoint columns of
// the same accumulator rows; every lane gets it.
__device__ __forceinline__ float QuadSum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// The same for the maximum.
__device__ __forceinline__ float QuadMax(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

}  // namespace stof::kernels::common
