// RunMmaSelfTest (mma_self_test.h): one warp, one 16 x 16 x 16 product through the same
// LoadA / LoadBFromNK / LoadBFromKN / AccumToA / Mma16816 helpers as the block-wise kernel,
// with the same padded shared-memory row stride (16 + 8 halves). Accumulator element (j, c)
// of a lane is row g + 8 (c >> 1), column 8 j + 2 t + (c & 1) (kernels/common/mma_sync.cuh).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <vector>

#include "kernels/common/mma_sync.cuh"
#include "kernels/attention/mma_self_test.h"
#include "kernels/cuda_check.h"

namespace stof::kernels {

namespace {

constexpr int kStride = 24;  // 16 + 8 halves, as the kernel pads its rows

__device__ void StoreAccum(float* c, const float (&acc)[2][4], int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) c[(g + 8 * (e >> 1)) * 16 + 8 * j + 2 * t + (e & 1)] = acc[j][e];
}

// in: a [16][16], bt = B^T [16][16] (n-major), b [16][16] (k-major), all row-major fp16.
__global__ void MmaSelfTestKernel(const __half* a, const __half* bt, const __half* b, float* c_nk,
                                  float* c_kn, float* c_pv) {
  __shared__ __align__(16) __half a_s[16 * kStride];
  __shared__ __align__(16) __half bt_s[16 * kStride];
  __shared__ __align__(16) __half b_s[16 * kStride];
  const int lane = static_cast<int>(threadIdx.x);
  // 16 rows x 2 chunks of 8 halves: one 16-byte chunk per lane per matrix.
  const int r = lane >> 1, c = (lane & 1) * 8;
  *reinterpret_cast<uint4*>(a_s + r * kStride + c) =
      *reinterpret_cast<const uint4*>(a + r * 16 + c);
  *reinterpret_cast<uint4*>(bt_s + r * kStride + c) =
      *reinterpret_cast<const uint4*>(bt + r * 16 + c);
  *reinterpret_cast<uint4*>(b_s + r * kStride + c) =
      *reinterpret_cast<const uint4*>(b + r * 16 + c);
  __syncwarp();

  uint32_t af[4];
  mma::LoadA(af, a_s, kStride, lane);
  float acc_nk[2][4] = {}, acc_kn[2][4] = {}, acc_pv[2][4] = {};
  uint32_t bf[4];
  mma::LoadBFromNK(bf, bt_s, kStride, lane);
  mma::Mma16816(acc_nk[0], af, bf[0], bf[1]);
  mma::Mma16816(acc_nk[1], af, bf[2], bf[3]);
  mma::LoadBFromKN(bf, b_s, kStride, lane);
  mma::Mma16816(acc_kn[0], af, bf[0], bf[1]);
  mma::Mma16816(acc_kn[1], af, bf[2], bf[3]);
  uint32_t pf[4];
  mma::AccumToA(pf, acc_nk[0], acc_nk[1]);
  mma::Mma16816(acc_pv[0], pf, bf[0], bf[1]);
  mma::Mma16816(acc_pv[1], pf, bf[2], bf[3]);
  StoreAccum(c_nk, acc_nk, lane);
  StoreAccum(c_kn, acc_kn, lane);
  StoreAccum(c_pv, acc_pv, lane);
}

}  // namespace

engine::Status RunMmaSelfTest(const float* a, const float* b, float* c_nk, float* c_kn,
                              float* c_pv) {
  if (a == nullptr || b == nullptr || c_nk == nullptr || c_kn == nullptr || c_pv == nullptr)
    return engine::MakeError("mma self-test: every matrix pointer must be set");
  std::vector<__half> h(3 * 256);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      h[i * 16 + j] = __float2half_rn(a[i * 16 + j]);
      h[256 + j * 16 + i] = __float2half_rn(b[i * 16 + j]);  // B^T: [n][k]
      h[512 + i * 16 + j] = __float2half_rn(b[i * 16 + j]);  // B:   [k][n]
    }
  }
  __half* d_in = nullptr;
  float* d_out = nullptr;
  STOF_CUDA_TRY(cudaMalloc(&d_in, h.size() * sizeof(__half)));
  const cudaError_t e_alloc = cudaMalloc(&d_out, 3 * 256 * sizeof(float));
  if (e_alloc != cudaSuccess) {
    cudaFree(d_in);
    return CudaError(e_alloc, "cudaMalloc(&d_out, ...)", __FILE__, __LINE__);
  }
  auto run = [&]() -> engine::Status {
    STOF_CUDA_TRY(cudaMemcpy(d_in, h.data(), h.size() * sizeof(__half), cudaMemcpyHostToDevice));
    STOF_CUDA_TRY(cudaMemset(d_out, 0xFF, 3 * 256 * sizeof(float)));  // NaN: unwritten shows
    MmaSelfTestKernel<<<1, 32>>>(d_in, d_in + 256, d_in + 512, d_out, d_out + 256, d_out + 512);
    STOF_CUDA_TRY(cudaGetLastError());
    STOF_CUDA_TRY(cudaDeviceSynchronize());
    std::vector<float> out(3 * 256);
    STOF_CUDA_TRY(
        cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 256; ++i) {
      c_nk[i] = out[i];
      c_kn[i] = out[256 + i];
      c_pv[i] = out[512 + i];
    }
    return engine::Status::Ok();
  };
  engine::Status st = run();
  cudaFree(d_in);
  cudaFree(d_out);
  return st;
}

}  // namespace stof::kernels
