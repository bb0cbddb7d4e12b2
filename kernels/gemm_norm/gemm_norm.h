// Fused GEMM + bias + residual add + LayerNorm / RMSNorm (a CI op and its MI epilogue in one
// kernel): out = Norm(a w + bias + residual) * gamma (+ beta), the out-projection and FFN-down
// of BERT / GPT-2 / T5. Each thread block owns a block of full rows, so the GEMM output is
// normalised in registers and never reaches DRAM un-normalised. CUDA-free header: buffers are
// fp16 device pointers (void*), the stream is an opaque cudaStream_t. Used by the tuner, the
// fusion engine's segment runner and tests/gpu/gemm_norm_test.cpp. Design, limits and the
// floor: docs/kernels-gemm-norm.md.
// Invariants: the arguments are checked by CheckGemmNormArgs and the tuning parameters by
// CheckGemmNormParams (LaunchGemmNorm calls both); the kernels trust them.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/status.h"

namespace stof::kernels {

struct GemmNormArgs {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;         // [m, k] row-major fp16
  const void* w = nullptr;         // [k, n] row-major fp16
  const void* bias = nullptr;      // [n], optional
  const void* residual = nullptr;  // [m, n], optional
  const void* gamma = nullptr;     // [n], required
  const void* beta = nullptr;      // [n]; nullptr => RMSNorm, else LayerNorm
  float eps = 1e-5f;
  void* out = nullptr;  // [m, n]; may equal residual (not a)
};

// The tuner's knobs: rows per block, k per pipeline step, warps per block (they split the n
// columns), cp.async pipeline depth.
struct GemmNormParams {
  int bm = 32;
  int bk = 32;
  int warps = 4;
  int stages = 2;
};

// Shape and pointer rules, each failure naming its field ("gemm_norm: n: ..."):
// m in [1, 2^31 - 1]; n a multiple of 64 up to 512 or of 128 up to 1024 (a block holds
// BM x n fp32 accumulators: see the doc); k a positive multiple of 8 (16-byte rows) below
// 2^31; a, w, gamma, out non-null and 16-byte aligned; bias, beta 4-byte aligned and residual
// 16-byte aligned when given; eps finite and >= 0; out must not alias a.
engine::Status CheckGemmNormArgs(const GemmNormArgs& args);

// Tuning rules: bm in {16, 32, 64}, bk in {32, 64}, warps in {4, 8}, stages in {2, 3, 4};
// n / warps a multiple of 16, at most 128 columns per warp (64 at bm 64); the shared memory
// (GemmNormSmemBytes) within smem_optin_bytes. Also checks args.n. Names the failing field.
engine::Status CheckGemmNormParams(const GemmNormArgs& args, const GemmNormParams& params,
                                   int64_t smem_optin_bytes);

// Dynamic shared memory of one block in bytes, or 0 when (n, params) is not a compiled
// combination (see CheckGemmNormParams). This is the least a setting needs; with a residual,
// settings of more than 128 registers a thread (bm x n / warps > 2048) also take a prefetch
// tile of bm x (n + 8) halves when it fits the limit (docs/kernels-gemm-norm.md).
int64_t GemmNormSmemBytes(int64_t n, const GemmNormParams& params);

// Every setting CheckGemmNormParams accepts for (n, k) and the limit; empty when n is not
// supported. The first is a good default for large m (most rows per block that fit, 8 warps,
// the deepest pipeline at bk 32); small m (few blocks) wants bm 16: the tuner decides.
std::vector<GemmNormParams> SupportedGemmNormParams(int64_t n, int64_t k, int64_t smem_optin_bytes);

// Checks args and params (against the current device's opt-in shared memory per block,
// queried once per device), then enqueues the kernel on `stream` (cudaStream_t, null = the
// default stream). Asynchronous: a kernel fault surfaces at the next synchronisation.
engine::Status LaunchGemmNorm(const GemmNormArgs& args, const GemmNormParams& params, void* stream);

}  // namespace stof::kernels
