// CublasGemm and GemmWorkload (cublas_gemm.h). CublasGemm wraps cublasGemmEx with CUBLAS_GEMM_DEFAULT: cuBLAS picks its
// kernel (tensor cores for fp16 with fp32 compute; on sm_90 its wgmma kernels). The handle's
// stream is set on every Run, since callers (the profiler's passes) hand different streams.
#include "kernels/gemm/cublas_gemm.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <random>
#include <string>

#include "kernels/cuda_check.h"
#include "kernels/gemm/cublas_check.h"

namespace stof::kernels {

struct CublasGemm::Impl {
  cublasHandle_t handle = nullptr;
};

engine::Expected<std::unique_ptr<CublasGemm>> CublasGemm::Create() {
  std::unique_ptr<CublasGemm> g(new CublasGemm());
  g->m_impl = std::make_unique<Impl>();
  STOF_CUBLAS_TRY(cublasCreate(&g->m_impl->handle));
  return g;
}

CublasGemm::~CublasGemm() {
  if (m_impl && m_impl->handle) cublasDestroy(m_impl->handle);
}

engine::Status CublasGemm::Run(int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                               void* c, void* stream) {
  if (m < 1 || n < 1 || k < 1 || m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return engine::Error{"CublasGemm: m, n, k must be in 1..2^31-1, got " + std::to_string(m) +
                         ", " + std::to_string(n) + ", " + std::to_string(k)};
  if (!a || !b || !c) return engine::Error{"CublasGemm: null matrix pointer"};
  const float alpha = 1.0f, beta = 0.0f;
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  STOF_CUBLAS_TRY(cublasSetStream(m_impl->handle, static_cast<cudaStream_t>(stream)));
  STOF_CUBLAS_TRY(cublasGemmEx(m_impl->handle, CUBLAS_OP_N, CUBLAS_OP_N, im, in, ik, &alpha, a,
                               CUDA_R_16F, im, b, CUDA_R_16F, ik, &beta, c, CUDA_R_16F, im,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return engine::Status::Ok();
}

namespace {
uint16_t HalfBits(float f) { return static_cast<__half_raw>(__float2half(f)).x; }
double HalfValue(uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return static_cast<double>(__half2float(__half(raw)));
}
}  // namespace

engine::Expected<std::unique_ptr<GemmWorkload>> GemmWorkload::Create(int64_t m, int64_t n,
                                                                     int64_t k, uint64_t seed) {
  if (m < 1 || n < 1 || k < 1)
    return engine::Error{"GemmWorkload: m, n, k: must be >= 1"};
  std::unique_ptr<GemmWorkload> w(new GemmWorkload());
  w->m_m = m;
  w->m_n = n;
  w->m_k = k;
  auto gemm = CublasGemm::Create();
  if (!gemm.IsOk()) return engine::Error{gemm.Message()};
  w->m_gemm = std::move(*gemm);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  w->m_host_a.resize(static_cast<size_t>(m * k));
  w->m_host_b.resize(static_cast<size_t>(k * n));
  for (uint16_t& x : w->m_host_a) x = HalfBits(dist(rng));
  for (uint16_t& x : w->m_host_b) x = HalfBits(dist(rng));
  const size_t a_bytes = w->m_host_a.size() * 2, b_bytes = w->m_host_b.size() * 2;
  const size_t c_bytes = static_cast<size_t>(m * n) * 2;
  STOF_CUDA_TRY(cudaMalloc(&w->m_a, a_bytes));
  STOF_CUDA_TRY(cudaMalloc(&w->m_b, b_bytes));
  STOF_CUDA_TRY(cudaMalloc(&w->m_c, c_bytes));
  STOF_CUDA_TRY(cudaMemcpy(w->m_a, w->m_host_a.data(), a_bytes, cudaMemcpyHostToDevice));
  STOF_CUDA_TRY(cudaMemcpy(w->m_b, w->m_host_b.data(), b_bytes, cudaMemcpyHostToDevice));
  STOF_CUDA_TRY(cudaMemset(w->m_c, 0xFF, c_bytes));  // NaN in fp16
  STOF_CUDA_TRY(cudaDeviceSynchronize());
  return w;
}

GemmWorkload::~GemmWorkload() {
  if (m_a) cudaFree(m_a);
  if (m_b) cudaFree(m_b);
  if (m_c) cudaFree(m_c);
}

engine::Expected<double> GemmWorkload::Verify(int samples) const {
  STOF_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<uint16_t> c(static_cast<size_t>(m_m * m_n));
  STOF_CUDA_TRY(cudaMemcpy(c.data(), m_c, c.size() * 2, cudaMemcpyDeviceToHost));
  std::mt19937_64 rng(12345);
  double worst = 0;
  for (int s = 0; s < samples; ++s) {
    const int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(m_m));
    const int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(m_n));
    double ref = 0, mag = 0;
    for (int64_t p = 0; p < m_k; ++p) {  // column-major: A(i,p) = a[i + p*m], B(p,j) = b[p + j*k]
      const double t = HalfValue(m_host_a[i + p * m_m]) * HalfValue(m_host_b[p + j * m_k]);
      ref += t;
      mag += std::fabs(t);
    }
    const double got = HalfValue(c[i + j * m_m]);
    if (!std::isfinite(got)) return engine::Error{"GemmWorkload: C(" + std::to_string(i) + ", " +
                                                  std::to_string(j) + ") is not finite"};
    worst = std::max(worst, std::fabs(got - ref) / std::max(mag, 1e-30));
  }
  return worst;
}

}  // namespace stof::kernels
