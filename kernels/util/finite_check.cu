// PoisonBuffer and CountNonFinite (finite_check.h). A grid-stride loop per dtype checks the
// exponent bits directly (all ones = inf or NaN), so no fp16 arithmetic is needed.
#include "kernels/util/finite_check.h"

#include <cuda_runtime.h>

#include "kernels/cuda_check.h"

namespace stof::kernels {

namespace {
template <typename Bits, Bits kExpMask>
__global__ void CountNonFiniteKernel(const Bits* data, int64_t count, unsigned long long* out) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    local += (data[i] & kExpMask) == kExpMask;
  }
  if (local) atomicAdd(out, local);
}
}  // namespace

engine::Status PoisonBuffer(void* ptr, size_t bytes, void* stream) {
  STOF_CUDA_TRY(cudaMemsetAsync(ptr, 0xFF, bytes, static_cast<cudaStream_t>(stream)));
  return engine::Status::Ok();
}

engine::Expected<int64_t> CountNonFinite(const void* ptr, int64_t count, engine::DType dtype,
                                         void* stream) {
  if (count < 0) return engine::Error{"CountNonFinite: count: must be >= 0"};
  auto s = static_cast<cudaStream_t>(stream);
  unsigned long long* d_out = nullptr;
  STOF_CUDA_TRY(cudaMallocAsync(&d_out, sizeof *d_out, s));
  STOF_CUDA_TRY(cudaMemsetAsync(d_out, 0, sizeof *d_out, s));
  const int threads = 256;
  const int blocks = static_cast<int>(count / threads + 1 < 4096 ? count / threads + 1 : 4096);
  switch (dtype) {
    case engine::DType::kF16:
      CountNonFiniteKernel<uint16_t, 0x7C00><<<blocks, threads, 0, s>>>(
          static_cast<const uint16_t*>(ptr), count, d_out);
      break;
    case engine::DType::kBF16:
      CountNonFiniteKernel<uint16_t, 0x7F80><<<blocks, threads, 0, s>>>(
          static_cast<const uint16_t*>(ptr), count, d_out);
      break;
    case engine::DType::kF32:
      CountNonFiniteKernel<uint32_t, 0x7F800000u><<<blocks, threads, 0, s>>>(
          static_cast<const uint32_t*>(ptr), count, d_out);
      break;
  }
  STOF_CUDA_TRY(cudaGetLastError());
  unsigned long long h_out = 0;
  STOF_CUDA_TRY(cudaMemcpyAsync(&h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost, s));
  STOF_CUDA_TRY(cudaFreeAsync(d_out, s));
  STOF_CUDA_TRY(cudaStreamSynchronize(s));
  return static_cast<int64_t>(h_out);
}

}  // namespace stof::kernels
