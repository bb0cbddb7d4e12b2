// Internal to kernels/gemm_norm/: the fused GEMM + norm kernel's parameter block, its
// shared-memory formula and the launcher of one compiled variant (kBM rows per block,
// kWarpCols = the most columns a warp handles). CUDA-free, so gemm_norm.cpp (host C++) can
// dispatch to the instantiations in gemm_norm_bm16.cu / gemm_norm_bm32.cu.
// Invariants (checked by CheckGemmNormArgs / CheckGemmNormParams, trusted by the kernel):
// n = warps * warp_cols, warp_cols a multiple of 16 and <= kWarpCols; k a multiple of 8;
// bk in {32, 64}; stages in {2, 3, 4}; m >= 1; pointers 16-byte aligned (bias, gamma, beta 4).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/status.h"

namespace stof::kernels::detail {

struct GemmNormKernelParams {
  const void* a = nullptr;
  const void* w = nullptr;
  const void* bias = nullptr;      // may be null
  const void* residual = nullptr;  // may be null; may equal out
  const void* gamma = nullptr;
  const void* beta = nullptr;  // null: RMSNorm
  void* out = nullptr;
  int m = 0, n = 0, k = 0;
  int bk = 32, stages = 2, warps = 4;
  int warp_cols = 0;  // n / warps
  // The residual gets its own shared tile, filled with step 0's copies (its latency hidden by
  // the k loop); otherwise it is loaded after the loop into the freed stages. Only with a
  // residual; the host's rule: gemm_norm.cpp, UsePrefetch.
  bool prefetch_residual = false;
  float eps = 1e-5f;
  float inv_n = 0.f;  // 1 / n
};

// 16 bytes of padding per shared-memory row: every row is then an odd number of 16-byte units
// (n / 8 + 1 and bk / 8 + 1 with n, bk multiples of 16), so the 8 row addresses of one
// ldmatrix phase, and the 8 rows a warp's fragment stores touch, fall into distinct banks
// (the same rule as the attention kernel's kSmemPadHalves).
constexpr int kGemmNormPadHalves = 8;

// Dynamic shared memory of one block:
//   stages x { A tile bm x (bk + 8) halves, W tile bk x (n + 8) halves }
//   row tile bm x (n + 8) halves, only with prefetch_residual (the residual, loaded with step
//     0's copies; then the output). Without it the row tile reuses the stages after the k loop
//     (bm <= 2 x 32 rows of W tile, so it always fits there).
//   row statistics 2 x warps x bm floats
constexpr size_t GemmNormSmemBytesFor(int bm, int bk, int n, int warps, int stages,
                                      bool prefetch_residual) {
  const size_t a_tile = static_cast<size_t>(bm) * static_cast<size_t>(bk + kGemmNormPadHalves);
  const size_t w_tile = static_cast<size_t>(bk) * static_cast<size_t>(n + kGemmNormPadHalves);
  const size_t rows = static_cast<size_t>(bm) * static_cast<size_t>(n + kGemmNormPadHalves);
  return (static_cast<size_t>(stages) * (a_tile + w_tile) + (prefetch_residual ? rows : 0)) * 2 +
         2 * static_cast<size_t>(warps) * static_cast<size_t>(bm) * sizeof(float);
}

// Sets the kernel's attributes once per device (`device` < 64; others every call), then
// enqueues ceil(m / kBM) blocks of 32 * warps threads with `smem_bytes` of dynamic shared
// memory on `stream`.
template <int kBM, int kWarpCols>
engine::Status LaunchGemmNormVariant(const GemmNormKernelParams& p, size_t smem_bytes, int device,
                                     int smem_optin, void* stream);

// The compiled variants (gemm_norm_bm16.cu: kBM 16; gemm_norm_bm32.cu: kBM 32 and 64): the
// accumulators per thread, kBM * kWarpCols / 32 floats, stay at or below 128 (the traits'
// static_assert). The dispatch in gemm_norm.cpp picks the smallest kWarpCols >= n / warps.
extern template engine::Status LaunchGemmNormVariant<16, 64>(const GemmNormKernelParams&, size_t,
                                                             int, int, void*);
extern template engine::Status LaunchGemmNormVariant<16, 96>(const GemmNormKernelParams&, size_t,
                                                             int, int, void*);
extern template engine::Status LaunchGemmNormVariant<16, 128>(const GemmNormKernelParams&, size_t,
                                                              int, int, void*);
extern template engine::Status LaunchGemmNormVariant<32, 64>(const GemmNormKernelParams&, size_t,
                                                             int, int, void*);
extern template engine::Status LaunchGemmNormVariant<32, 96>(const GemmNormKernelParams&, size_t,
                                                             int, int, void*);
extern template engine::Status LaunchGemmNormVariant<32, 128>(const GemmNormKernelParams&, size_t,
                                                              int, int, void*);
extern template engine::Status LaunchGemmNormVariant<64, 64>(const GemmNormKernelParams&, size_t,
                                                             int, int, void*);

}  // namespace stof::kernels::detail
