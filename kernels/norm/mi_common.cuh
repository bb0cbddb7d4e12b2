// Shared pieces of the memory-intensive kernels (kernels/norm/*.cu): fp16 <-> fp32 moves of 1 or
// 8 halves (8 = one 16-byte load or store), the activation formula on the device, warp-group
// sums, and host-side argument checks that name the field. Private to kernels/ (CUDA header).
// Invariants: an 8-half move needs a 16-byte aligned address (callers check Aligned16 on the
// host for the base pointers and keep every offset a multiple of 8 halves).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "engine/core/activation.h"
#include "engine/core/status.h"
#include "kernels/common/activation.cuh"

namespace stof::kernels::mi {

inline constexpr int kVecHalves = 8;  // 16-byte loads and stores

// ---- device ----

// V halves at p into fp32 x[0 .. V).
template <int V>
__device__ __forceinline__ void LoadHalves(const __half* p, float* x) {
  static_assert(V == 1 || V == kVecHalves, "1 or 8 halves");
  if constexpr (V == kVecHalves) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
    for (int j = 0; j < V / 2; ++j) {
      const float2 f = __half22float2(h[j]);
      x[2 * j] = f.x;
      x[2 * j + 1] = f.y;
    }
  } else {
    x[0] = __half2float(p[0]);
  }
}

// Same through the read-only (non-coherent) cache: for small operands every row reads again
// (bias, gamma, beta), never for a buffer the kernel writes.
template <int V>
__device__ __forceinline__ void LoadHalvesLdg(const __half* p, float* x) {
  static_assert(V == 1 || V == kVecHalves, "1 or 8 halves");
  if constexpr (V == kVecHalves) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
    const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
    for (int j = 0; j < V / 2; ++j) {
      const float2 f = __half22float2(h[j]);
      x[2 * j] = f.x;
      x[2 * j + 1] = f.y;
    }
  } else {
    x[0] = __half2float(__ldg(p));
  }
}

// fp32 x[0 .. V) rounded to nearest into V halves at p.
template <int V>
__device__ __forceinline__ void StoreHalves(__half* p, const float* x) {
  static_assert(V == 1 || V == kVecHalves, "1 or 8 halves");
  if constexpr (V == kVecHalves) {
    uint4 raw;
    __half2* h = reinterpret_cast<__half2*>(&raw);
#pragma unroll
    for (int j = 0; j < V / 2; ++j) h[j] = __floats2half2_rn(x[2 * j], x[2 * j + 1]);
    *reinterpret_cast<uint4*>(p) = raw;
  } else {
    p[0] = __float2half_rn(x[0]);
  }
}

// engine::Activate in fp32: one definition for every family (kernels/common/activation.cuh).
using common::Activate;

// Sum of v over each aligned group of `width` lanes (a power of two <= 32); every lane of the
// group gets the same bits (the xor butterfly adds the same two values in either order). All
// 32 lanes of the warp must call it.
__device__ __forceinline__ float GroupSumInWarp(float v, int width) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    if (off < width) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// ---- host ----

inline bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

inline std::string Str(int64_t v) { return std::to_string(v); }

inline engine::Status NotNull(const char* op, const char* field, const void* p) {
  if (p) return engine::Status::Ok();
  return engine::MakeError(std::string(op) + ": " + field + ": null pointer");
}

// lo <= v (and v <= hi when hi >= 0).
inline engine::Status InRange(const char* op, const char* field, int64_t v, int64_t lo,
                              int64_t hi = -1) {
  if (v >= lo && (hi < 0 || v <= hi)) return engine::Status::Ok();
  return engine::MakeError(std::string(op) + ": " + field + ": expected " +
                           (hi < 0 ? ">= " + Str(lo) : Str(lo) + " .. " + Str(hi)) + ", got " +
                           Str(v));
}

// a * b (both >= 0) when it stays below 2^62 (room for byte offsets), else -1.
inline int64_t CheckedMul(int64_t a, int64_t b) {
  constexpr int64_t kLimit = int64_t{1} << 62;
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > kLimit / a) return -1;
  return a * b;
}

inline engine::Status SizeFits(const char* op, const char* what, int64_t product) {
  if (product >= 0) return engine::Status::Ok();
  return engine::MakeError(std::string(op) + ": " + what + ": element count overflows");
}

// Blocks for `rows` rows at `rows_per_block`, refused above the grid's x limit.
inline engine::Expected<unsigned> GridBlocks(const char* op, int64_t rows, int64_t rows_per_block) {
  const int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
  if (blocks > std::numeric_limits<int>::max())
    return engine::MakeError(std::string(op) + ": rows: " + Str(rows) +
                             " rows need more blocks than the grid allows");
  return static_cast<unsigned>(blocks);
}

}  // namespace stof::kernels::mi
