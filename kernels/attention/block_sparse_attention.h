// The block-wise BSR sparse MHA kernel (STOF's block-wise kernel): launch function, the set of
// supported (head_dim, BLOCK_M, BLOCK_N, num_warps) and the check that rejects the rest with a
// message listing what is supported. CUDA-free header; called by CudaBackend::RunMha, the GPU
// tests and (later) the tuner, which fetches a DeviceBlockLayout once and times launches.
//
// Supported set (docs/kernels.md): fp16, head_dim 64 or 128; BLOCK_M, BLOCK_N in
// {16, 32, 64, 128}; num_warps in {1, 2, 4, 8} with num_warps >= BLOCK_M / 16 (each warp owns
// 16 query rows; num_warps / (BLOCK_M / 16) warp groups split the valid K/V blocks of a block
// row), or num_warps = BLOCK_M / 32 at head_dim 64 and BLOCK_N <= 64 (each warp owns 32 rows,
// so every K/V fragment it reads feeds two MMAs); the shared memory of BlockSparseSmemBytes
// within the device's per-block limit. Only (head_dim, BLOCK_N, rows per warp) are template
// parameters: 11 kernel instantiations in all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "kernels/attention_common/block_config.h"
#include "kernels/attention_common/mha_operands.h"

namespace stof::kernels {

class DeviceBlockLayout;

// Query rows each warp owns: 16, 32 (num_warps = BLOCK_M / 32, head_dim 64, BLOCK_N <= 64), or
// 0 when the combination is not structurally valid (unsupported head_dim, block size or
// num_warps, or too few warps for BLOCK_M).
int64_t BlockSparseRowsPerWarp(int64_t head_dim, int64_t block_m, int64_t block_n,
                               int64_t num_warps);

// Dynamic shared memory one thread block needs, in bytes (0 when BlockSparseRowsPerWarp is 0).
size_t BlockSparseSmemBytes(int64_t head_dim, int64_t block_m, int64_t block_n, int64_t num_warps);

// Ok when the combination is supported with `smem_limit_bytes` of shared memory per block;
// otherwise an error naming the combination, the rule it breaks and the supported set.
engine::Status CheckBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                      int64_t num_warps,
                                      int64_t smem_limit_bytes = kHopperSmemPerBlock);

// The part of the supported set that automatic choices (ChooseMhaConfig without overrides)
// draw from: BLOCK_M, BLOCK_N >= 64 with one warp per 16 rows and no split. Why (H100,
// `stof bench mha`, docs/kernels.md "Choosing parameters"): Eq. 2's score grows as
// tiles shrink, and on this mma.sync kernel 16 x 16 tiles ran 1.4-2.7 x slower than 64 x 64
// with 4 warps (sliding window L4096 B16: 500 vs 222 us; BigBird L4096 B16: 1740 vs 642 us);
// 32 rows per warp ran 1.13-1.24 x slower, and a split 1.12-1.45 x slower except at batch 1
// with global rows (Longformer L4096 B1: 83 vs 100 us), where one heavy block row dominates.
bool IsPreferredBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                  int64_t num_warps,
                                  int64_t smem_limit_bytes = kHopperSmemPerBlock);

// Every supported combination for head_dim, BLOCK_M-major, then BLOCK_N, then num_warps.
std::vector<BlockSparseConfig> SupportedBlockSparseConfigs(
    int64_t head_dim, int64_t smem_limit_bytes = kHopperSmemPerBlock);
// The same as text, one BLOCK_M x num_warps group per entry ("16x{16,32,64,128} warps 1; ...").
std::string DescribeSupportedBlockSparseConfigs(int64_t head_dim,
                                                int64_t smem_limit_bytes = kHopperSmemPerBlock);

// O = softmax(mask(Q K^T / sqrt(d))) V for fp16 q, k, v, o of shape [B, H, L, d] (device
// pointers, 16-byte aligned, o not overlapping the inputs), the mask given by `layout`
// (BLOCK_M x BLOCK_N = the layout's block size), on `stream` (opaque cudaStream_t).
// Optional strided views (engine::MhaStrides; all-zero = packed): every stride a multiple of 8
// elements (16-byte rows for cp.async and uint4 stores), row >= head_dim. `scale` multiplies
// the scores (0 = 1/sqrt(head_dim); T5 passes 1).
// Asynchronous: errors from the kernel itself surface at the next synchronisation. Rows with
// nothing attended are written as zeros. Validates everything on the host first. `keys`
// (per batch row key ranges or kept keys, mha_operands.h): the Hopper kernel only.
engine::Status LaunchBlockSparseAttention(const engine::Workload& workload,
                                          const DeviceBlockLayout& layout, int64_t num_warps,
                                          const void* q, const void* k, const void* v, void* o,
                                          void* stream = nullptr,
                                          const engine::MhaStrides& q_strides = {},
                                          const engine::MhaStrides& kv_strides = {},
                                          const engine::MhaStrides& o_strides = {},
                                          float scale = 0.0f, const MhaKeyLimits& keys = {});

}  // namespace stof::kernels
