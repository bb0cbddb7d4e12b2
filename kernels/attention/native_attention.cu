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
// Softmax kernel: 256 threads per block, T threads per row (32 .. 256, the smallest power of
// two with T * 8 >= L), 256 / T rows per block, one launch for all B * H * L rows. Per row:
// the mask row (words of query i = row % L; shared by every batch and head) is staged in
// shared memory once, then pass 1 reads S and keeps an online (max, sum) of 2^(x - max) over
// attended elements (x = s * log2(e) / sqrt(d), fp32), merged across the row by warp shuffles
// and, for T > 32, shared memory; pass 2 reads S again (L1/L2-hot) and writes
// p = 2^(x - max) / sum as fp16, 0 where masked or when the row attends nothing. When
// L % 8 == 0 a thread moves 8 halves (16 bytes) at a time (rows stay 16-byte aligned); else 1.
#include "kernels/attention/native_attention.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/gemm/cublas_check.h"

namespace stof::kernels {

namespace {

constexpr int kSoftmaxThreads = 256;
constexpr int kSoftmaxWarps = kSoftmaxThreads / 32;
constexpr int kVecHalves = 8;  // 16-byte loads and stores
static_assert(kSoftmaxThreads % 32 == 0 && kSoftmaxThreads <= 1024, "whole warps per block");

// Merges a partial (max m2, sum s2 of 2^(x - m2)) into (m, s). Commutative in its two
// operands (so both lanes of a shuffle butterfly get the same bits); m = -inf means "nothing
// attended yet" (s = 0) and never produces -inf - -inf.
__device__ __forceinline__ void MergeRowStat(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  s = s * exp2f(m - mn) + s2 * exp2f(m2 - mn);
  m = mn;
}

// `V` halves of S starting at `p` into fp32.
template <int V>
__device__ __forceinline__ void LoadHalves(const __half* p, float (&x)[V]) {
  if constexpr (V == kVecHalves) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
    for (int j = 0; j < V / 2; ++j) {
      const float2 f = __half22float2(h[j]);
      x[2 * j] = f.x;
      x[2 * j + 1] = f.y;
    }
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = __half2float(p[j]);
  }
}

template <int V>
__device__ __forceinline__ void StoreHalves(__half* p, const float (&x)[V]) {
  if constexpr (V == kVecHalves) {
    uint4 raw;
    __half2* h = reinterpret_cast<__half2*>(&raw);
#pragma unroll
    for (int j = 0; j < V / 2; ++j) h[j] = __floats2half2_rn(x[2 * j], x[2 * j + 1]);
    *reinterpret_cast<uint4*>(p) = raw;
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) p[j] = __float2half_rn(x[j]);
  }
}

// The V mask bits of columns [c, c + V) (V divides 64 and c % V == 0: one word).
template <int V>
__device__ __forceinline__ unsigned MaskBits(const uint64_t* words, int64_t c) {
  return static_cast<unsigned>(words[c >> 6] >> (c & 63)) & ((1u << V) - 1u);
}

// Pass 1 of one row: this thread's (max, sum) over its chunks.
template <int V>
__device__ __forceinline__ void RowStatPass(const __half* row, const uint64_t* words, int64_t L,
                                            int lane_in_row, int threads_per_row, float scale2,
                                            float& m, float& s) {
  for (int64_t c = static_cast<int64_t>(lane_in_row) * V; c < L;
       c += static_cast<int64_t>(threads_per_row) * V) {
    const unsigned bits = MaskBits<V>(words, c);
    if (bits == 0) continue;
    float x[V];
    LoadHalves<V>(row + c, x);
    float cm = -INFINITY;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      x[j] *= scale2;
      if ((bits >> j) & 1u) cm = fmaxf(cm, x[j]);
    }
    float cs = 0.f;
#pragma unroll
    for (int j = 0; j < V; ++j)
      if ((bits >> j) & 1u) cs += exp2f(x[j] - cm);
    MergeRowStat(m, s, cm, cs);
  }
}

// Pass 2 of one row: p = 2^(x - m) * inv_sum where attended, else 0.
template <int V>
__device__ __forceinline__ void RowWritePass(__half* row, const uint64_t* words, int64_t L,
                                             int lane_in_row, int threads_per_row, float scale2,
                                             float m, float inv_sum) {
  for (int64_t c = static_cast<int64_t>(lane_in_row) * V; c < L;
       c += static_cast<int64_t>(threads_per_row) * V) {
    const unsigned bits = MaskBits<V>(words, c);
    float x[V] = {};
    if (bits != 0) LoadHalves<V>(row + c, x);
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = ((bits >> j) & 1u) ? exp2f(x[j] * scale2 - m) * inv_sum : 0.f;
    StoreHalves<V>(row + c, x);
  }
}

// Scale + mask + softmax in place over `rows` = B * H * L rows of length L. Dynamic shared
// memory: kSoftmaxWarps float2 partials, then (256 / threads_per_row) * words_per_row mask words.
__global__ void __launch_bounds__(kSoftmaxThreads)
    MaskedSoftmaxKernel(__half* __restrict__ s, const uint64_t* __restrict__ mask, int64_t rows,
                        int64_t L, int64_t words_per_row, int threads_per_row, float scale2,
                        bool vectorised) {
  extern __shared__ uint64_t smem_u64[];
  float2* partial = reinterpret_cast<float2*>(smem_u64);
  uint64_t* smem_words = smem_u64 + kSoftmaxWarps;  // float2 == one uint64_t slot each

  const int rows_per_block = kSoftmaxThreads / threads_per_row;
  const int group = static_cast<int>(threadIdx.x) / threads_per_row;
  const int lane_in_row = static_cast<int>(threadIdx.x) % threads_per_row;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * rows_per_block + group;
  const bool active = row < rows;
  uint64_t* words = smem_words + static_cast<int64_t>(group) * words_per_row;

  if (active) {
    const uint64_t* src = mask + (row % L) * words_per_row;
    for (int64_t w = lane_in_row; w < words_per_row; w += threads_per_row) words[w] = __ldg(src + w);
  }
  __syncthreads();

  __half* srow = s + (active ? row : 0) * L;
  float m = -INFINITY, sum = 0.f;
  if (active) {
    if (vectorised)
      RowStatPass<kVecHalves>(srow, words, L, lane_in_row, threads_per_row, scale2, m, sum);
    else
      RowStatPass<1>(srow, words, L, lane_in_row, threads_per_row, scale2, m, sum);
  }
  // A warp lies within one row group (threads_per_row is a multiple of 32).
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const float s2 = __shfl_xor_sync(0xffffffffu, sum, off);
    MergeRowStat(m, sum, m2, s2);
  }
  if (threads_per_row > 32) {  // uniform over the block: the barrier is safe
    const int warp = static_cast<int>(threadIdx.x) / 32;
    if ((threadIdx.x & 31) == 0) partial[warp] = make_float2(m, sum);
    __syncthreads();
    const int warps_per_row = threads_per_row / 32;
    m = -INFINITY;
    sum = 0.f;
    for (int i = 0; i < warps_per_row; ++i) {
      const float2 p = partial[group * warps_per_row + i];
      MergeRowStat(m, sum, p.x, p.y);
    }
  }
  if (!active) return;
  const float inv_sum = sum > 0.f ? 1.f / sum : 0.f;  // 0: nothing attended, the row stays 0
  if (vectorised)
    RowWritePass<kVecHalves>(srow, words, L, lane_in_row, threads_per_row, scale2, m, inv_sum);
  else
    RowWritePass<1>(srow, words, L, lane_in_row, threads_per_row, scale2, m, inv_sum);
}

int ThreadsPerRow(int64_t L) {
  int t = 32;
  while (t < kSoftmaxThreads && static_cast<int64_t>(t) * kVecHalves < L) t *= 2;
  return t;
}

std::string Str(int64_t v) { return std::to_string(v); }

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

  const int tpr = ThreadsPerRow(L);
  const int rows_per_block = kSoftmaxThreads / tpr;
  const int64_t rows = heads * L;
  const int64_t words_per_row = (L + 63) / 64;
  const size_t smem = sizeof(uint64_t) * (kSoftmaxWarps + rows_per_block * words_per_row);
  const int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
  if (blocks > INT_MAX)
    return engine::MakeError("native MHA: workload: " + Str(rows) +
                             " softmax rows exceed the grid limit");
  const float scale2 = static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(d)));

  std::lock_guard<std::mutex> lock(m_impl->mutex);
  STOF_CUBLAS_TRY(cublasSetStream(h, st));
  // S^T = K Q^T per head (column-major view; see the top of this file).
  STOF_CUBLAS_TRY(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_T, CUBLAS_OP_N, iL, iL, id, &one, k, CUDA_R_16F, id, stride_x, q, CUDA_R_16F,
      id, stride_x, &zero, ws, CUDA_R_16F, iL, stride_s, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  MaskedSoftmaxKernel<<<static_cast<unsigned>(blocks), kSoftmaxThreads, smem, st>>>(
      ws, m_impl->mask, rows, L, words_per_row, tpr, scale2, L % kVecHalves == 0);
  STOF_CUDA_TRY(cudaGetLastError());
  // O^T = V^T P^T per head.
  STOF_CUBLAS_TRY(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, id, iL, iL, &one, v, CUDA_R_16F, id, stride_x, ws, CUDA_R_16F,
      iL, stride_s, &zero, o, CUDA_R_16F, id, stride_x, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  return engine::Status::Ok();
}

}  // namespace stof::kernels
