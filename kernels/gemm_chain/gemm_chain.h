// The fused CI+CI GEMM chain of MCFuser (docs/kernels-gemm-chain.md): C = act(A B + bias1),
// E = C D + bias2, with C kept on chip (registers, then one fp16 tile in shared memory), for
// fp16 in and out with fp32 accumulation. One tiling expression family, the deep order
// "mhnk" of MCFuser: the grid covers (m tiles, h tiles, batch); each thread block loops over
// n tiles, computes C[bm, bn] over the k tiles, applies the epilogue, and accumulates
// E[bm, bh] += C[bm, bn] D[bn, bh]; E is stored once after the n loop. With bh < h, every
// block of a row of h tiles recomputes the same C: GEMM 1 runs ceil(h / bh) times.
// The same kernel computes the FFN form E = act(A W1 + b1) W2 + b2 (b = W1, d = W2).
//
// CUDA-free header: device buffers are void* (they hold __half), streams are opaque
// cudaStream_t. Users: the GPU tests (tests/gpu/gemm_chain_test.cpp), the benchmark and the
// engine's GEMM-chain tuner (which ranks (expression, tiles) with MCFuser's model, and reads
// GemmChainSharedBytes and SupportedGemmChainParams to stay within what is instantiated).
// Invariants: LaunchGemmChain validates everything here once on the host (the kernel trusts
// its parameters); only the settings of SupportedGemmChainParams are instantiated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/activation.h"
#include "engine/core/status.h"

namespace stof::kernels {

// One chain: (batch, M, N, K, H) in MCFuser's names. Row-major fp16 matrices; batch i of X
// starts at x + i * stride_x elements. stride -1 = packed (the matrix's own size); 0 = every
// batch shares the matrix (weights; not allowed for e when batch > 1).
// Rules (CheckGemmChainArgs): 1 <= batch <= 65535; m >= 1 (any value: ragged last m tile);
// n, k, h positive multiples of 16 (every 16-byte chunk of a row is wholly in or out, and
// the MMA's k step is 16); a, b, d, e non-null and 16-byte aligned; a positive stride is a
// multiple of 8 and at least the matrix's size; bias1 [n] and bias2 [h] optional.
// e must not overlap a, b or d (blocks write E while others still read the inputs).
struct GemmChainArgs {
  int64_t batch = 1, m = 0, n = 0, k = 0, h = 0;  // MCFuser's (batch, M, N, K, H)
  const void* a = nullptr;                        // [batch, m, k] row-major
  const void* b = nullptr;                        // [batch, k, n]
  const void* d = nullptr;                        // [batch, n, h]
  int64_t stride_a = -1, stride_b = -1, stride_d = -1, stride_e = -1;  // elements between
                                                  // batches; -1 = packed; 0 = shared (weights)
  const void* bias1 = nullptr;                    // [n], optional (FFN)
  engine::Activation act = engine::Activation::kNone;  // on C (FFN: kGelu / kRelu)
  const void* bias2 = nullptr;                    // [h], optional
  void* e = nullptr;                              // [batch, m, h]
};

// Tile sizes of the mhnk kernel (multiples of 16) and warps per block. The warps form a
// grid of warps_m x warps_n (warps_m = min(warps, max(1, bm / 32))): each warp owns
// bm / warps_m rows of C and of E, bn / warps_n columns of C and bh / warps_n columns of E.
struct GemmChainParams {
  int bm = 64, bn = 64, bk = 32, bh = 64, warps = 4;  // tile sizes: multiples of 16
  bool operator==(const GemmChainParams&) const = default;
};

// "64x64x64x128/4w" (bm x bn x bk x bh / warps), for messages and benchmark tables.
std::string GemmChainParamsName(const GemmChainParams& p);

// Ok when the shape, activation and strides of `args` follow the rules above (the buffers are
// not looked at, so a tuner may ask before it allocates); otherwise an error naming the field.
engine::Status CheckGemmChainShape(const GemmChainArgs& args);

// Ok when `args` follows the rules above; otherwise an error naming the field
// ("gemm_chain: h: expected a positive multiple of 16, got 100").
engine::Status CheckGemmChainArgs(const GemmChainArgs& args);

// Ok when `p` is an instantiated setting that fits the shape of `args` (bm <= m rounded up to
// 16; bn <= n, bk <= k, bh <= h: no tile larger than its dimension; the grid within CUDA's
// limits) and needs at most `smem_optin_bytes` of shared memory per block; otherwise an error
// naming the field ("gemm_chain: params.bh: 256 is larger than h = 64"). Does not re-check
// the rest of `args` (CheckGemmChainArgs does).
engine::Status CheckGemmChainParams(const GemmChainArgs& args, const GemmChainParams& p,
                                    int64_t smem_optin_bytes);

// The instantiated settings that pass CheckGemmChainParams for `args` (empty when its shape,
// activation or strides are invalid; the buffers are not looked at, so a tuner may ask before
// it allocates), best first by a crude wave-and-traffic estimate (docs): the first is a
// good default, the tuner ranks the rest with MCFuser's model and measurements.
std::vector<GemmChainParams> SupportedGemmChainParams(const GemmChainArgs& args,
                                                      int64_t smem_optin_bytes);

// Every instantiated setting, whatever the shape (the table the kernel file instantiates).
const std::vector<GemmChainParams>& AllGemmChainParams();

// Dynamic shared memory of one thread block in bytes, for any structurally valid `p` (tiles
// positive multiples of 16, warps 4 or 8, the warp grid dividing the tiles), instantiated or
// not, so the engine's model can reason about candidates; 0 for a malformed `p`.
//   2 * [ 2 bm (bk + 8) + 2 bk (bn + 8) + bm (bn + 8) + 2 bn (bh + 8) ]
// (double-buffered A and B tiles, one C tile, double-buffered D tiles; rows padded by 8
// halves), or 2 bm (bh + 8) when that is larger (the E tile staged for the store reuses it).
int64_t GemmChainSharedBytes(const GemmChainParams& p);

// Validates args and params (the device's opt-in shared memory per block as the limit) and
// enqueues the kernel on `stream` (cudaStream_t, null = default stream) of the current
// device. Asynchronous; kernel faults surface at the next synchronisation.
engine::Status LaunchGemmChain(const GemmChainArgs& args, const GemmChainParams& p, void* stream);

}  // namespace stof::kernels
