// The row-wise sparse MHA kernel (STOF's row-wise kernel, for short and very sparse cases):
// one warp per query row walks that row's attended columns (DeviceRowLayout, per-row CSR),
// 32 keys at a time, one key per lane; warp shuffles only, no inter-warp synchronisation.
// CUDA-free header; called by CudaBackend::RunMha and the GPU tests.
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "engine/core/workload.h"

namespace stof::kernels {

class DeviceRowLayout;

// O = softmax(mask(Q K^T / sqrt(d))) V for fp16 q, k, v, o [B, H, L, d] (device pointers,
// 16-byte aligned), head_dim 64 or 128, the mask given by `layout`, on `stream` (opaque
// cudaStream_t). Asynchronous. Rows with nothing attended are written as zeros.
engine::Status LaunchRowSparseAttention(const engine::Workload& workload,
                                        const DeviceRowLayout& layout, const void* q, const void* k,
                                        const void* v, void* o, void* stream = nullptr);

}  // namespace stof::kernels
