// CudaBackend (cuda_backend.h): cudart for memory and copies, our kernels for MHA. RunMha checks
// everything that can be checked on the host before building a layout or launching, so a bad
// call costs no device work and its message names the field.
#include "kernels/cuda_backend.h"

#include <cuda_runtime.h>

#include <string>

#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention/row_sparse_attention.h"
#include "kernels/cuda_check.h"
#include "kernels/device_query.h"

namespace stof::kernels {

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
  const engine::MhaConfig& c = call.config;
  if (c.kernel == engine::MhaKernel::kRowWise) {
    auto layout = m_layouts.GetRow(*call.mask);
    if (!layout.IsOk()) return engine::Error{"mha call: " + layout.Message()};
    return LaunchRowSparseAttention(w, **layout, call.q, call.k, call.v, call.o, call.stream);
  }
  // Refuse an unsupported configuration before building a layout for it.
  auto config_ok = CheckBlockSparseConfig(w.head_dim, c.block_m, c.block_n, c.num_warps,
                                          m_spec.smem_per_block_bytes);
  if (!config_ok.IsOk()) return engine::Error{"mha call: config: " + config_ok.Message()};
  auto layout = m_layouts.GetBlock(*call.mask, c.block_m, c.block_n);
  if (!layout.IsOk()) return engine::Error{"mha call: " + layout.Message()};
  return LaunchBlockSparseAttention(w, **layout, c.num_warps, call.q, call.k, call.v, call.o,
                                    call.stream);
}

}  // namespace stof::kernels
