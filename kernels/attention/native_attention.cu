// NativeMha (native_attention.h): the unfused baseline. Two cuBLAS strided-batched GEMMs around
// one scale + mask + softmax kernel over the S workspace. Host code validates once; the kernel
// trusts its parameters.
//
// Row-major [L, d] per head is, to column-major cuBLAS, a d x L matrix with ld = d, so:
//   S (row-major L x L) = Q K^T   <=>  S^T (col-major, ld L) = K Q^T = op_T(K) * op_N(Q):
//     m = n = L, k = d, A = K (transa T, lda d), B = Q (transb N, ldb d), C = S (ldc L)
//   O (row-major L x d) = P V     <=>  O^T (col-major, ld d) = V^T P^T = op_N(V) * op_N(P):
//     m = d, n = L, k = L, A = V (lda d), B = P (ldb L), C = O (ldc d)
// batched over B * H heads with strides L*d (Q, K, V, O) and L*L (S).
//
// Softmax step: LaunchScaleMaskSoftmax (kernels/norm/elementwise_kernels.h, one kernel: scale +
// mask + softmax over every row of S, in place, fp32 math, fp16 out; rows with nothing attended
// give zeros) at scale 1/sqrt(d), on the mask words uploaded at Create (engine::Mask layout).
#include "kernels/attention/native_attention.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "engine/core/text_format.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm/cublas_check.h"
#include "kernels/norm/elementwise_kernels.h"

namespace stof::kernels {

namespace {

using engine::Str;

std::string GiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

engine::Status CheckShape(const engine::Workload& w, const char* what) {
  STOF_RETURN_IF_ERROR(w.Validate(what));
  if (w.dtype != engine::DType::kF16)
    return engine::MakeError(std::string(what) + ".dtype: the native MHA baseline supports f16 "
                             "only, got " + engine::DTypeName(w.dtype));
  if (w.head_dim != 64 && w.head_dim != 128)
    return engine::MakeError(std::string(what) + ".head_dim: the native MHA baseline supports 64 "
                             "or 128, got " + Str(w.head_dim));
  return engine::Status::Ok();
}

}  // namespace

struct NativeMha::Impl {
  cublasHandle_t handle = nullptr;
  __half* workspace = nullptr;
  uint64_t* mask = nullptr;
  std::mutex mutex;  // cublasSetStream + the three launches, per call
  ~Impl() {
    if (handle) cublasDestroy(handle);
    if (workspace) cudaFree(workspace);
    if (mask) cudaFree(mask);
  }
};

NativeMha::NativeMha() = default;
NativeMha::~NativeMha() = default;

int64_t NativeMha::WorkspaceBytesFor(const engine::Workload& w) {
  // Any workload, validated or not: every product is guarded.
  if (w.batch < 1 || w.heads < 1 || w.seq_len < 1 || w.batch > INT64_MAX / w.heads) return -1;
  const int64_t heads = w.batch * w.heads;
  if (w.seq_len > 2000000000) return -1;  // keeps seq_len^2 * 2 within int64
  const int64_t per_head = w.seq_len * w.seq_len * 2;
  if (heads > INT64_MAX / per_head) return -1;
  return heads * per_head;
}

engine::Expected<std::unique_ptr<NativeMha>> NativeMha::Create(const engine::Mask& mask,
                                                               const engine::Workload& workload) {
  STOF_RETURN_IF_ERROR(CheckShape(workload, "workload"));
  if (mask.Rows() != workload.seq_len || mask.Cols() != workload.seq_len)
    return engine::MakeError("native MHA: mask: size " + Str(mask.Rows()) + " x " +
                             Str(mask.Cols()) + " does not match workload.seq_len " +
                             Str(workload.seq_len));
  const int64_t ws_bytes = WorkspaceBytesFor(workload);
  const std::string ws_text = "the S workspace of B*H*L*L fp16 = " + Str(workload.batch) + "*" +
                              Str(workload.heads) + "*" + Str(workload.seq_len) + "^2*2 bytes";
  if (ws_bytes < 0) return engine::MakeError("native MHA: " + ws_text + " overflows int64");

  std::unique_ptr<NativeMha> n(new NativeMha());
  n->m_impl = std::make_unique<Impl>();
  n->m_workload = workload;
  const auto t0 = std::chrono::steady_clock::now();
  if (cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&n->m_impl->workspace),
                                 static_cast<size_t>(ws_bytes));
      e != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: an allocation failure is not sticky
    n->m_impl->workspace = nullptr;
    return engine::MakeError("native MHA: cannot allocate " + ws_text + " = " + Str(ws_bytes) +
                             " bytes (" + GiB(ws_bytes) + "): cudaMalloc: " +
                             cudaGetErrorString(e) +
                             "; use a smaller batch, fewer heads or another kernel");
  }
  n->m_workspace_bytes = ws_bytes;
  const std::vector<uint64_t>& words = mask.Words();
  const size_t mask_bytes = words.size() * sizeof(uint64_t);
  STOF_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&n->m_impl->mask), mask_bytes));
  STOF_CUDA_TRY(cudaMemcpy(n->m_impl->mask, words.data(), mask_bytes, cudaMemcpyHostToDevice));
  n->m_mask_bytes = static_cast<int64_t>(mask_bytes);
  n->m_timing.upload_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  STOF_CUBLAS_TRY(cublasCreate(&n->m_impl->handle));
  // Spelled out: nvcc's front end does not apply C++20's implicit move into a converting
  // constructor.
  return engine::Expected<std::unique_ptr<NativeMha>>(std::move(n));
}

engine::Status NativeMha::Launch(const engine::Workload& w, const void* q, const void* k,
                                 const void* v, void* o, void* stream) const {
  STOF_RETURN_IF_ERROR(CheckShape(w, "native MHA: workload"));
  if (w.seq_len != m_workload.seq_len || w.head_dim != m_workload.head_dim)
    return engine::MakeError("native MHA: workload: prepared for L = " + Str(m_workload.seq_len) +
                             ", d = " + Str(m_workload.head_dim) + ", got L = " + Str(w.seq_len) +
                             ", d = " + Str(w.head_dim));
  const int64_t heads = w.batch * w.heads;
  const int64_t capacity = m_workload.batch * m_workload.heads;
  if (heads > capacity)
    return engine::MakeError("native MHA: workload: batch * heads = " + Str(heads) +
                             " exceeds the " + Str(capacity) +
                             " heads the S workspace was allocated for (prepare with the larger "
                             "batch)");
  if (!q || !k || !v || !o) return engine::MakeError("native MHA: q, k, v, o: null pointer");

  const int64_t L = w.seq_len, d = w.head_dim;
  // Validate bounds L <= 32768 and B * H <= 65536 * 1024 = 2^26: all fit cuBLAS's int.
  const int iL = static_cast<int>(L), id = static_cast<int>(d), batch = static_cast<int>(heads);
  const long long stride_x = static_cast<long long>(L * d), stride_s = static_cast<long long>(L * L);
  const float one = 1.f, zero = 0.f;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  cublasHandle_t h = m_impl->handle;
  __half* ws = m_impl->workspace;

  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));

  std::lock_guard<std::mutex> lock(m_impl->mutex);
  STOF_CUBLAS_TRY(cublasSetStream(h, st));
  // S^T = K Q^T per head (column-major view; see the top of this file).
  STOF_CUBLAS_TRY(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_T, CUBLAS_OP_N, iL, iL, id, &one, k, CUDA_R_16F, id, stride_x, q, CUDA_R_16F,
      id, stride_x, &zero, ws, CUDA_R_16F, iL, stride_s, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  STOF_RETURN_IF_ERROR(
      LaunchScaleMaskSoftmax(heads, L, ws, scale, m_impl->mask, ws, stream).WithContext(
          "native MHA: "));
  // O^T = V^T P^T per head.
  STOF_CUBLAS_TRY(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, id, iL, iL, &one, v, CUDA_R_16F, id, stride_x, ws, CUDA_R_16F,
      iL, stride_s, &zero, o, CUDA_R_16F, id, stride_x, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  return engine::Status::Ok();
}

}  // namespace stof::kernels
