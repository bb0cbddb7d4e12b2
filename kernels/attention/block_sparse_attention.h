// The block-wise BSR sparse MHA kernel (STOF's block-wise kernel): launch function, the set of
// supported (head_dim, BLOCK_M, BLOCK_N, num_warps) and the check that rejects the rest with a
// message listing what is supported. CUDA-free header; called by CudaBackend::RunMha, the GPU
// tests and (later) the tuner, which fetches a DeviceBlockLayout once and times launches.
//
// Supported set (docs/kernels.md): fp16, head_dim 64 or 128; BLOCK_M, BLOCK_N in
// {16, 32, 64, 128}; num_warps in {1, 2, 4, 8} with num_warps >= BLOCK_M / 16, or
// num_warps = BLOCK_M / 32 at head_dim 64 and BLOCK_N <= 64; the shared memory of
// BlockSparseSmemBytes within the device's per-block limit. Those rules are host arithmetic and
// live in the engine (engine/select/block_sparse_rules.h, one copy for the kernels and the
// engine's model of them); this header names them for the kernels' callers. num_warps 5 and 12
// select the Hopper kernel (kernels/attention_hopper/hopper_attention.h). Only (head_dim,
// BLOCK_N, rows per warp) are template parameters: 11 kernel instantiations in all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/select/block_sparse_rules.h"
#include "kernels/attention_common/block_config.h"
#include "kernels/attention_common/mha_operands.h"

namespace stof::kernels {

class DeviceBlockLayout;

// The mma.sync kernel's rules (engine/select/block_sparse_rules.h): rows per warp, shared
// memory per thread block, the preferred set of automatic choices, the supported set as text.
using engine::BlockSparseRowsPerWarp;
using engine::BlockSparseSmemBytes;
using engine::DescribeSupportedBlockSparseConfigs;
using engine::IsPreferredBlockSparseConfig;

// Ok when the combination is supported with `smem_limit_bytes` of shared memory per block;
// otherwise an error naming the combination, the rule it breaks and the supported set.
// num_warps 5 and 12: the Hopper kernel's check (CheckHopperAttentionConfig); any other:
// engine::CheckPortableBlockSparseConfig.
engine::Status CheckBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                      int64_t num_warps,
                                      int64_t smem_limit_bytes = kHopperSmemPerBlock);

// Every combination the mma.sync kernel supports for head_dim
// (engine::PortableBlockSparseConfigs), BLOCK_M-major, then BLOCK_N, then num_warps.
std::vector<BlockSparseConfig> SupportedBlockSparseConfigs(
    int64_t head_dim, int64_t smem_limit_bytes = kHopperSmemPerBlock);

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
