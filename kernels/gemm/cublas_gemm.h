// cuBLAS fp16 GEMM: the peer every GEMM-like kernel of ours is compared against, and the
// workload of `stof profile gemm`. CUDA-free header (the handle is hidden behind a pointer).
// Layout: column-major, as cuBLAS is natively: C (m x n, ldc = m) = A (m x k, lda = m) *
// B (k x n, ldb = k), no transposes; fp16 inputs and output, fp32 accumulation
// (CUBLAS_COMPUTE_32F), alpha = 1, beta = 0, so repeated runs give the same C (re-runnable).
// A row-major caller computing C = A * B passes its B as A and its A as B with m and n swapped.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/status.h"

namespace stof::kernels {

class CublasGemm {
 public:
  // Creates the cuBLAS handle on the current device.
  static engine::Expected<std::unique_ptr<CublasGemm>> Create();
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // Runs on `stream` (opaque cudaStream_t). m, n, k >= 1; pointers are device fp16 buffers of
  // m*k, k*n and m*n elements.
  engine::Status Run(int64_t m, int64_t n, int64_t k, const void* a, const void* b, void* c,
                     void* stream);

  static double Flops(int64_t m, int64_t n, int64_t k) { return 2.0 * m * n * k; }
  // Bytes that must move at least: A and B read once, C written once (fp16).
  static double MinBytes(int64_t m, int64_t n, int64_t k) { return 2.0 * (m * k + k * n + m * n); }

 private:
  CublasGemm() = default;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// One GEMM as a re-runnable workload for the profiler: owns A, B (uniform in [-1, 1) from
// `seed`, never zeros) and C (poisoned with NaN) on the current device and a CublasGemm.
// Verify recomputes `samples` entries of C on the host in double from the fp16 inputs and
// returns the largest relative error (relative to the sum of |a*b| terms of that entry).
class GemmWorkload {
 public:
  static engine::Expected<std::unique_ptr<GemmWorkload>> Create(int64_t m, int64_t n, int64_t k,
                                                                uint64_t seed = 1);
  ~GemmWorkload();
  GemmWorkload(const GemmWorkload&) = delete;
  GemmWorkload& operator=(const GemmWorkload&) = delete;

  engine::Status Run(void* stream) { return m_gemm->Run(m_m, m_n, m_k, m_a, m_b, m_c, stream); }
  engine::Expected<double> Verify(int samples = 64) const;
  double Flops() const { return CublasGemm::Flops(m_m, m_n, m_k); }
  double MinBytes() const { return CublasGemm::MinBytes(m_m, m_n, m_k); }

 private:
  GemmWorkload() = default;
  int64_t m_m = 0, m_n = 0, m_k = 0;
  void *m_a = nullptr, *m_b = nullptr, *m_c = nullptr;
  std::vector<uint16_t> m_host_a, m_host_b;  // fp16 bits, kept for Verify
  std::unique_ptr<CublasGemm> m_gemm;
};

}  // namespace stof::kernels
