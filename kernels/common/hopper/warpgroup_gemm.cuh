// The warpgroup GEMM steps of every Hopper kernel family: one 64-row product over a k extent
// held in shared memory, issued as m64nNk16 wgmmas and committed as one group. Operands are
// tiles of 64-column panels with the 128-byte swizzle (wgmma.cuh: 128 bytes per panel row,
// panels `panel_bytes` apart). Used by the Hopper attention kernel (S = Q K^T is GemmSsKMajor,
// O += P V is GemmRsNMajor) and the Hopper GEMM chain (C = A B is GemmSsNMajor, E += C D is
// GemmRsNMajor); the caller waits (WgmmaWait) before it reads the accumulators or releases
// the operands.
#pragma once

#include <cstdint>

#include "kernels/common/hopper/wgmma.cuh"

namespace stof::kernels::hopper {

constexpr int kPanelRowBytes = 128;  // one panel row: 64 two-byte elements

// D = A B^T (or D += when `accumulate`) for kK columns of k: A's 64 rows and B's kN rows are
// both K-major (k contiguous), each kK / 64 panels of `a_panel_bytes` / `b_panel_bytes`.
template <int kK, int kN, bool kBf16>
__device__ __forceinline__ void GemmSsKMajor(float (&d)[kN / 2], uint32_t a, uint32_t a_panel_bytes,
                                             uint32_t b, uint32_t b_panel_bytes,
                                             bool accumulate = false) {
  WgmmaFence();
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    const uint32_t off = (kk % 4) * 32;  // the 16-column slice inside a 128-byte row
    const uint64_t da = MakeSmemDesc(a + (kk / 4) * a_panel_bytes + off, 16, 1024);
    const uint64_t db = MakeSmemDesc(b + (kk / 4) * b_panel_bytes + off, 16, 1024);
    Wgmma<kN, kBf16>::SS(d, da, db, (accumulate || kk > 0) ? 1 : 0);
  }
  WgmmaCommit();
}

// D = A B (or D += when `accumulate`) for one 64-wide k step: A's 64 rows K-major in one
// panel, B [64 k rows][kN <= 64 columns] N-major (n contiguous, a row-major [K][N] matrix's
// box) in one panel.
template <int kN, bool kBf16>
__device__ __forceinline__ void GemmSsNMajor(float (&d)[kN / 2], uint32_t a, uint32_t b,
                                             bool accumulate) {
  static_assert(kN == 64, "one 64-column panel of B");
  WgmmaFence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const uint64_t da = MakeSmemDesc(a + kk * 32, 16, 1024);
    const uint64_t db = MakeSmemDesc(b + kk * 16 * kPanelRowBytes, 64 * kPanelRowBytes, 1024);
    Wgmma<kN, kBf16>::template SS<1>(d, da, db, (accumulate || kk > 0) ? 1 : 0);
  }
  WgmmaCommit();
}

// D += A B for kK rows of k: A as register fragments, one per 16-wide k slice (the
// accumulators of an earlier product, common::AccumToA); B [kK rows][kN columns] N-major in
// kN / 64 panels of `b_panel_bytes`. Past 128 columns each slice is several m64n128 products,
// whose accumulators are D's consecutive kN / 2-register parts (the m64nN fragment's order).
template <int kK, int kN, bool kBf16>
__device__ __forceinline__ void GemmRsNMajor(float (&d)[kN / 2], const uint32_t (&a)[kK / 16][4],
                                             uint32_t b, uint32_t b_panel_bytes) {
  constexpr int kW = kN < 128 ? kN : 128;  // columns per wgmma
  using Part = float[kW / 2];
  WgmmaFence();
#pragma unroll
  for (int k = 0; k < kK / 16; ++k) {
#pragma unroll
    for (int h = 0; h < kN / kW; ++h) {
      const uint32_t panels = b + h * (kW / 64) * b_panel_bytes;
      const uint64_t db = MakeSmemDesc(panels + k * 16 * kPanelRowBytes, b_panel_bytes, 1024);
      Wgmma<kW, kBf16>::RS(*reinterpret_cast<Part*>(d + h * (kW / 2)), a[k], db);
    }
  }
  WgmmaCommit();
}

}  // namespace stof::kernels::hopper
