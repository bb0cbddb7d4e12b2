// CudaBackend (cuda_backend.h): cudart for memory and copies, our kernels for MHA. RunMha checks
// everything that can be checked on the host before building a layout or launching, so a bad
// call costs no device work and its message names the field.
#include "kernels/cuda_backend.h"
#include "kernels/cuda_backend_state.h"

#include <cuda_runtime.h>

#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention/native_attention.h"
#include "kernels/attention/row_sparse_attention.h"
#include "kernels/cuda_check.h"
#include "kernels/device_query.h"
#include "kernels/norm/elementwise_kernels.h"
#include "kernels/recomposition/recomposed_attention.h"

namespace stof::kernels {

CudaBackend::CudaBackend() = default;
CudaBackend::~CudaBackend() {
  if (MakeCurrent().IsOk()) {
    m_mha.reset();
    m_layer.reset();
  }
}

engine::Expected<std::unique_ptr<CudaBackend>> CudaBackend::Create(int device) {
  auto spec = QueryDeviceSpec(device);  // also checks that the device exists
  if (!spec.IsOk()) return engine::Error{"cuda backend: " + spec.Message()};
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->m_device = device;
  b->m_spec = std::move(*spec);
  b->m_name = "cuda:" + std::to_string(device) + " (" + b->m_spec.name + ")";
  STOF_RETURN_IF_ERROR(b->MakeCurrent());
  return b;
}

engine::Status CudaBackend::MakeCurrent() const {
  STOF_CUDA_TRY(cudaSetDevice(m_device));
  return engine::Status::Ok();
}

engine::Expected<void*> CudaBackend::Allocate(size_t bytes) {
  if (bytes == 0)
    return engine::MakeError("cuda backend: allocate: bytes: must be at least 1, got 0");
  STOF_RETURN_IF_ERROR(MakeCurrent());
  void* p = nullptr;
  STOF_CUDA_TRY(cudaMalloc(&p, bytes));
  return p;
}

void CudaBackend::Free(void* ptr) {
  if (ptr == nullptr) return;
  if (MakeCurrent().IsOk()) cudaFree(ptr);
}

engine::Status CudaBackend::CopyToDevice(void* dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return engine::Status::Ok();
  if (dst == nullptr)
    return engine::MakeError("cuda backend: copy to device: dst: must not be null");
  if (host_src == nullptr)
    return engine::MakeError("cuda backend: copy to device: host_src: must not be null");
  STOF_RETURN_IF_ERROR(MakeCurrent());
  STOF_CUDA_TRY(cudaMemcpy(dst, host_src, bytes, cudaMemcpyHostToDevice));
  return engine::Status::Ok();
}

engine::Status CudaBackend::CopyToHost(void* host_dst, const void* src, size_t bytes) {
  if (bytes == 0) return engine::Status::Ok();
  if (host_dst == nullptr)
    return engine::MakeError("cuda backend: copy to host: host_dst: must not be null");
  if (src == nullptr) return engine::MakeError("cuda backend: copy to host: src: must not be null");
  STOF_RETURN_IF_ERROR(MakeCurrent());
  STOF_CUDA_TRY(cudaMemcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost));
  return engine::Status::Ok();
}

engine::Status CudaBackend::Synchronize() {
  STOF_RETURN_IF_ERROR(MakeCurrent());
  STOF_CUDA_TRY(cudaDeviceSynchronize());
  return engine::Status::Ok();
}

engine::Status CudaBackend::RunMha(const engine::MhaCall& call) {
  STOF_RETURN_IF_ERROR(engine::ValidateMhaCall(call));
  const engine::Workload& w = call.workload;
  if (!Supports(w.dtype)) {
    return engine::MakeError(std::string("mha call: workload.dtype: the cuda backend supports "
                                         "f16 only, got ") +
                             engine::DTypeName(w.dtype));
  }
  if (w.head_dim != 64 && w.head_dim != 128) {
    return engine::MakeError(
        "mha call: workload.head_dim: the cuda kernels support 64 or 128, got " +
        std::to_string(w.head_dim));
  }
  STOF_RETURN_IF_ERROR(MakeCurrent());
  // The block-wise kernel takes the scale and strided views itself. For the others a scale
  // other than 1/sqrt(d) (T5: none) is applied to q: they fold 1/sqrt(d) into their exponent,
  // so q * scale * sqrt(d) gives scores * scale.
  const bool block_wise = call.variant == engine::MhaVariant::kFused &&
                          call.config.kernel == engine::MhaKernel::kBlockWise;
  const bool strided =
      !call.q_strides.Packed() || !call.kv_strides.Packed() || !call.o_strides.Packed();
  if (strided && !block_wise)
    return engine::MakeError(
        "mha call: q_strides: strided q/k/v/o are taken by the fused block-wise kernel only; "
        "split the heads for the other variants");
  const void* q = call.q;
  if (!block_wise && call.scale != 0.0f &&
      std::fabs(call.scale * std::sqrt(static_cast<double>(w.head_dim)) - 1.0) > 1e-7) {
    auto scaled = ScaledQ(call);
    if (!scaled.IsOk()) return scaled.ToStatus();
    q = *scaled;
  }
  if (call.variant != engine::MhaVariant::kFused) return RunOtherMha(call, q);
  const engine::MhaConfig& c = call.config;
  if (c.kernel == engine::MhaKernel::kRowWise) {
    auto layout = m_layouts.GetRow(*call.mask);
    if (!layout.IsOk()) return engine::Error{"mha call: " + layout.Message()};
    return LaunchRowSparseAttention(w, **layout, q, call.k, call.v, call.o, call.stream);
  }
  // Refuse an unsupported configuration before building a layout for it.
  auto config_ok = CheckBlockSparseConfig(w.head_dim, c.block_m, c.block_n, c.num_warps,
                                          m_spec.smem_per_block_bytes);
  if (!config_ok.IsOk()) return engine::Error{"mha call: config: " + config_ok.Message()};
  auto layout = m_layouts.GetBlock(*call.mask, c.block_m, c.block_n);
  if (!layout.IsOk()) return engine::Error{"mha call: " + layout.Message()};
  return LaunchBlockSparseAttention(w, **layout, c.num_warps, q, call.k, call.v, call.o,
                                    call.stream, call.q_strides, call.kv_strides,
                                    call.o_strides, call.scale);
}

engine::Expected<const void*> CudaBackend::ScaledQ(const engine::MhaCall& call) {
  if (!m_mha) m_mha = std::make_unique<MhaState>();
  const engine::Workload& w = call.workload;
  const int64_t n = w.batch * w.heads * w.seq_len * w.head_dim;
  const size_t bytes = static_cast<size_t>(n) * 2;
  {
    std::lock_guard<std::mutex> lock(m_mha->mu);
    if (m_mha->scaled_q_bytes < bytes) {
      if (m_mha->scaled_q) STOF_CUDA_TRY(cudaFree(m_mha->scaled_q));
      m_mha->scaled_q = nullptr;
      m_mha->scaled_q_bytes = 0;
      STOF_CUDA_TRY(cudaMalloc(&m_mha->scaled_q, bytes));
      m_mha->scaled_q_bytes = bytes;
    }
  }
  const float factor =
      static_cast<float>(call.scale * std::sqrt(static_cast<double>(w.head_dim)));
  STOF_RETURN_IF_ERROR(LaunchScale(n, call.q, factor, m_mha->scaled_q, call.stream));
  return static_cast<const void*>(m_mha->scaled_q);
}

engine::Status CudaBackend::RunOtherMha(const engine::MhaCall& call, const void* q) {
  if (!m_mha) m_mha = std::make_unique<MhaState>();
  const engine::Workload& w = call.workload;
  const MhaState::Key key{call.mask->Hash(), w.batch * w.heads, w.seq_len, w.head_dim,
                          w.heads, static_cast<int>(call.variant), call.sub_len};
  std::unique_lock<std::mutex> lock(m_mha->mu);
  if (call.variant == engine::MhaVariant::kUnfused) {
    auto& slot = m_mha->native[key];
    if (!slot) {
      auto made = NativeMha::Create(*call.mask, w);
      if (!made.IsOk()) return engine::Error{"mha call (unfused): " + made.Message()};
      slot = std::move(*made);
    }
    lock.unlock();
    return slot->Launch(w, q, call.k, call.v, call.o, call.stream);
  }
  auto& slot = m_mha->recomposed[key];
  if (!slot) {
    RecomposeParams params;
    params.sub_len = static_cast<int>(call.sub_len);
    const RecomposeVariant v = call.variant == engine::MhaVariant::kDecomposed
                                   ? RecomposeVariant::kDecomposed
                                   : RecomposeVariant::kRecomposed;
    auto made = RecomposedMha::Create(*call.mask, w, v, params);
    if (!made.IsOk())
      return engine::Error{std::string("mha call (") + engine::MhaVariantName(call.variant) +
                           "): " + made.Message()};
    slot = std::move(*made);
  }
  lock.unlock();
  return slot->Launch(w, q, call.k, call.v, call.o, call.stream);
}

}  // namespace stof::kernels
