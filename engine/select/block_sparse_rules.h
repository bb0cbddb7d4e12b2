// The portable block-wise kernel's rules (the mma.sync BSR kernel of
// kernels/attention/block_sparse_attention.h) as host arithmetic, the one copy of them: which
// (head_dim, BLOCK_M, BLOCK_N, num_warps) it runs, the shared memory each needs, the preferred
// set automatic choices draw from, and the check that names the broken rule. The kernels'
// launch checks and their MhaKernelCapabilities (kernels/attention/mha_choice.cpp) call these,
// and so does the engine's model of the kernels for builds without them
// (engine/select/model_capabilities.h); the kernel's shared-memory layout uses the constants
// below (kernels/attention/block_sparse_variant.h). num_warps 5 and 12 name the Hopper kernel,
// whose rules live with it (kernels/attention_hopper/hopper_attention.h): not here.
//
// Supported set (docs/kernels.md): head_dim 64 or 128; BLOCK_M, BLOCK_N in {16, 32, 64, 128};
// num_warps in {1, 2, 4, 8} with num_warps >= BLOCK_M / 16 (each warp owns 16 query rows;
// num_warps / (BLOCK_M / 16) warp groups split the valid K/V blocks of a block row), or
// num_warps = BLOCK_M / 32 at head_dim 64 and BLOCK_N <= 64 (each warp owns 32 rows); the
// shared memory of BlockSparseSmemBytes within the device's per-block limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/core/status.h"

namespace stof::engine {

// Opt-in shared memory per block of H100 and H200 (227 KiB): the default limit of host-only
// checks (launches use the current device's own limit).
inline constexpr int64_t kBlockSparseDefaultSmemLimit = 232448;

// The kernel's shared memory: the Q tile, then the larger of the K/V stages and the split-merge
// area (the merge reuses the stages after the main loop). Rows are padded by 16 bytes so that
// ldmatrix's 8 row addresses hit distinct banks.
inline constexpr int kBlockSparseStages = 2;         // double-buffered K/V
inline constexpr int kBlockSparseSmemPadHalves = 8;  // halves of padding per shared-memory row
constexpr size_t BlockSparseSmemBytesFor(int head_dim, int block_m, int block_n, int split) {
  const size_t stride = static_cast<size_t>(head_dim + kBlockSparseSmemPadHalves);
  const size_t q = static_cast<size_t>(block_m) * stride * 2;
  const size_t kv = static_cast<size_t>(kBlockSparseStages) * 2 * static_cast<size_t>(split) *
                    static_cast<size_t>(block_n) * stride * 2;
  // fp32 partial O with a stride of head_dim + 8 floats, plus (max, sum) per row and group.
  const size_t merge = split > 1 ? static_cast<size_t>(split) * static_cast<size_t>(block_m) *
                                       (static_cast<size_t>(head_dim + 8) * 4 + 8)
                                 : 0;
  return q + (kv > merge ? kv : merge);
}

// Query rows each warp owns: 16, 32 (num_warps = BLOCK_M / 32, head_dim 64, BLOCK_N <= 64), or
// 0 when the combination is not structurally valid (unsupported head_dim, block size or
// num_warps, or too few warps for BLOCK_M).
int64_t BlockSparseRowsPerWarp(int64_t head_dim, int64_t block_m, int64_t block_n,
                               int64_t num_warps);

// Dynamic shared memory one thread block needs, in bytes (0 when BlockSparseRowsPerWarp is 0).
size_t BlockSparseSmemBytes(int64_t head_dim, int64_t block_m, int64_t block_n,
                            int64_t num_warps);

// Ok when the mma.sync kernel runs the combination with `smem_limit_bytes` of shared memory per
// block; otherwise "block-wise MHA: unsupported BLOCK_M .., BLOCK_N .., num_warps ..,
// head_dim ..: <the rule it breaks> (supported at head_dim ..: <the supported set>; on sm_90
// GPUs also the Hopper kernel: ...)". num_warps 5 and 12 (the Hopper kernel's) are refused
// here: callers send them to the Hopper kernel's own check first.
Status CheckPortableBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                      int64_t num_warps,
                                      int64_t smem_limit_bytes = kBlockSparseDefaultSmemLimit);

// The part of the supported set that automatic choices (ChooseMhaConfig without overrides)
// draw from: BLOCK_M, BLOCK_N >= 64 with one warp per 16 rows and no split. Why (H100,
// `stof bench mha`, docs/kernels.md "Choosing parameters"): Eq. 2's score grows as
// tiles shrink, and on this mma.sync kernel 16 x 16 tiles ran 1.4-2.7 x slower than 64 x 64
// with 4 warps (sliding window L4096 B16: 500 vs 222 us; BigBird L4096 B16: 1740 vs 642 us);
// 32 rows per warp ran 1.13-1.24 x slower, and a split 1.12-1.45 x slower except at batch 1
// with global rows (Longformer L4096 B1: 83 vs 100 us), where one heavy block row dominates.
bool IsPreferredBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                  int64_t num_warps,
                                  int64_t smem_limit_bytes = kBlockSparseDefaultSmemLimit);

// Every combination the mma.sync kernel runs for head_dim (block-wise MhaConfigs),
// BLOCK_M-major, then BLOCK_N, then num_warps.
std::vector<MhaConfig> PortableBlockSparseConfigs(
    int64_t head_dim, int64_t smem_limit_bytes = kBlockSparseDefaultSmemLimit);
// The same as text, one BLOCK_M x num_warps group per entry ("16x{16,32,64,128} warps 1; ...").
std::string DescribeSupportedBlockSparseConfigs(
    int64_t head_dim, int64_t smem_limit_bytes = kBlockSparseDefaultSmemLimit);

}  // namespace stof::engine
