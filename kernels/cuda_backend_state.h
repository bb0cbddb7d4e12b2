// CudaBackend's private state (cuda_backend.h): the layer-op state (cuBLASLt handle, device
// copies of masks) and the attention objects of the non-fused MHA variants. Included only by
// cuda_backend.cpp and cuda_backend_layer_ops.cpp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "kernels/attention/native_attention.h"
#include "kernels/cuda_backend.h"
#include "kernels/gemm_epilogue/lt_gemm.h"
#include "kernels/recomposition/recomposed_attention.h"

namespace stof::kernels {

struct CudaBackend::LayerState {
  std::mutex mu;
  std::unique_ptr<LtGemm> lt;
  std::map<uint64_t, void*> mask_words;  // mask hash -> device words
  // The Hopper GEMM chain's split workspace (zero-filled; every launch leaves it zero), grown
  // to the largest launch seen; the backend's calls are stream-ordered, so one is enough.
  void* chain_workspace = nullptr;
  size_t chain_workspace_bytes = 0;
  ~LayerState() {
    for (auto& [h, p] : mask_words) cudaFree(p);
    if (chain_workspace) cudaFree(chain_workspace);
  }
};

// Attention objects that own a workspace sized for one workload, kept per (mask, workload,
// variant, T) so a layer's repeated runs reuse them; and the scratch for a pre-scaled q.
struct CudaBackend::MhaState {
  std::mutex mu;
  using Key = std::tuple<uint64_t, int64_t, int64_t, int64_t, int64_t, int, int64_t>;
  std::map<Key, std::unique_ptr<NativeMha>> native;
  std::map<Key, std::unique_ptr<RecomposedMha>> recomposed;
  void* scaled_q = nullptr;
  size_t scaled_q_bytes = 0;
  ~MhaState() {
    if (scaled_q) cudaFree(scaled_q);
  }
};

}  // namespace stof::kernels
