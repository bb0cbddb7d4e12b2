// LaunchScaleMaskSoftmax and LaunchSoftmaxRows (elementwise_kernels.h): one row-softmax kernel,
// with or without a mask. It came from NativeMha's softmax step (kernels/attention/
// native_attention.cu), which now calls LaunchScaleMaskSoftmax in place on its S workspace.
//
// 256 threads per block, T threads per row (32 .. 256, the smallest power of two with
// T * 8 >= cols), 256 / T rows per block, one launch for all rows. Masked: the row's mask words
// (query i = row % L; shared by every batch and head) are staged in shared memory once. Pass 1
// reads x and keeps an online (max, sum) of 2^(y - max), y = x * scale * log2(e) in fp32, over
// the attended elements, merged across the row by warp shuffles and, for T > 32, shared memory;
// pass 2 reads x again (L1/L2-hot) and writes p = 2^(y - max) / sum as fp16, 0 where masked or
// when the row has no finite attended element. -inf inputs (LaunchApplyMask's masked elements)
// give 0 and never NaN: a chunk whose attended elements are all -inf adds nothing. When
// cols % 8 == 0 and x, out are 16-byte aligned a thread moves 8 halves at a time; else 1.
// A thread reads (both passes) and writes exactly the same chunks, so out may equal x.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "kernels/cuda_check.h"
#include "kernels/norm/elementwise_kernels.h"
#include "kernels/norm/mi_common.cuh"

namespace stof::kernels {

namespace {

constexpr int kSoftmaxThreads = 256;
constexpr int kSoftmaxWarps = kSoftmaxThreads / 32;
constexpr int64_t kMaxMaskLen = 32768;  // engine::Mask::kMaxLen: 512 words, 4 KiB per row
constexpr double kLog2E = 1.4426950408889634;
static_assert(kSoftmaxThreads % 32 == 0 && kSoftmaxThreads <= 1024, "whole warps per block");

// Merges a partial (max m2, sum s2 of 2^(y - m2)) into (m, s). Commutative in its two
// operands (so both lanes of a shuffle butterfly get the same bits); m = -inf means "nothing
// attended yet" (s = 0) and never produces -inf - -inf.
__device__ __forceinline__ void MergeRowStat(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == -INFINITY) return;
  s = s * exp2f(m - mn) + s2 * exp2f(m2 - mn);
  m = mn;
}

// The V mask bits of columns [c, c + V) (V divides 64 and c % V == 0: one word); all V bits
// without a mask.
template <int V, bool kMasked>
__device__ __forceinline__ unsigned ChunkBits(const uint64_t* words, int64_t c) {
  constexpr unsigned kAll = (1u << V) - 1u;
  if constexpr (kMasked)
    return static_cast<unsigned>(words[c >> 6] >> (c & 63)) & kAll;
  else
    return kAll;
}

// Pass 1 of one row: this thread's (max, sum) over its chunks.
template <int V, bool kMasked>
__device__ __forceinline__ void RowStatPass(const __half* row, const uint64_t* words, int64_t cols,
                                            int lane_in_row, int threads_per_row, float scale2,
                                            float& m, float& s) {
  for (int64_t c = static_cast<int64_t>(lane_in_row) * V; c < cols;
       c += static_cast<int64_t>(threads_per_row) * V) {
    const unsigned bits = ChunkBits<V, kMasked>(words, c);
    if (bits == 0) continue;
    float x[V];
    mi::LoadHalves<V>(row + c, x);
    float cm = -INFINITY;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      x[j] *= scale2;
      if ((bits >> j) & 1u) cm = fmaxf(cm, x[j]);
    }
    if (cm == -INFINITY) continue;  // only -inf attended here: adds nothing (and no inf - inf)
    float cs = 0.f;
#pragma unroll
    for (int j = 0; j < V; ++j)
      if ((bits >> j) & 1u) cs += exp2f(x[j] - cm);
    MergeRowStat(m, s, cm, cs);
  }
}

// Pass 2 of one row: p = 2^(y - m) * inv_sum where attended, else 0; all zeros when the row
// has no finite attended element (m = -inf).
template <int V, bool kMasked>
__device__ __forceinline__ void RowWritePass(const __half* row, __half* out_row,
                                             const uint64_t* words, int64_t cols,
                                             int lane_in_row, int threads_per_row, float scale2,
                                             float m, float inv_sum) {
  const bool dead = m == -INFINITY;
  for (int64_t c = static_cast<int64_t>(lane_in_row) * V; c < cols;
       c += static_cast<int64_t>(threads_per_row) * V) {
    const unsigned bits = dead ? 0u : ChunkBits<V, kMasked>(words, c);
    float x[V] = {};
    if (bits != 0) {
      mi::LoadHalves<V>(row + c, x);
#pragma unroll
      for (int j = 0; j < V; ++j)
        x[j] = ((bits >> j) & 1u) ? exp2f(x[j] * scale2 - m) * inv_sum : 0.f;
    }
    mi::StoreHalves<V>(out_row + c, x);
  }
}

// Softmax of `rows` rows of length `cols` from x into out (may be x). kMasked: row r uses mask
// row r % cols (an L x L mask, cols = L); dynamic shared memory holds kSoftmaxWarps float2
// partials, then (256 / threads_per_row) * words_per_row mask words (none without a mask).
template <int V, bool kMasked>
__global__ void __launch_bounds__(kSoftmaxThreads)
    SoftmaxRowsKernel(const __half* x, __half* out, const uint64_t* __restrict__ mask,
                      int64_t rows, int64_t cols, int64_t words_per_row, int threads_per_row,
                      float scale2) {
  extern __shared__ uint64_t smem_u64[];
  float2* partial = reinterpret_cast<float2*>(smem_u64);
  uint64_t* smem_words = smem_u64 + kSoftmaxWarps;  // float2 == one uint64_t slot each

  const int rows_per_block = kSoftmaxThreads / threads_per_row;
  const int group = static_cast<int>(threadIdx.x) / threads_per_row;
  const int lane_in_row = static_cast<int>(threadIdx.x) % threads_per_row;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * rows_per_block + group;
  const bool active = row < rows;
  uint64_t* words = nullptr;
  if constexpr (kMasked) {
    words = smem_words + static_cast<int64_t>(group) * words_per_row;
    if (active) {
      const uint64_t* src = mask + (row % cols) * words_per_row;
      for (int64_t w = lane_in_row; w < words_per_row; w += threads_per_row)
        words[w] = __ldg(src + w);
    }
    __syncthreads();
  }

  const int64_t offset = (active ? row : 0) * cols;
  float m = -INFINITY, sum = 0.f;
  if (active)
    RowStatPass<V, kMasked>(x + offset, words, cols, lane_in_row, threads_per_row, scale2, m, sum);
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
  const float inv_sum = sum > 0.f ? 1.f / sum : 0.f;
  RowWritePass<V, kMasked>(x + offset, out + offset, words, cols, lane_in_row, threads_per_row,
                           scale2, m, inv_sum);
}

int ThreadsPerRow(int64_t cols) {
  int t = 32;
  while (t < kSoftmaxThreads && static_cast<int64_t>(t) * mi::kVecHalves < cols) t *= 2;
  return t;
}

// Both entry points: checked arguments, mask == nullptr for plain softmax.
engine::Status LaunchSoftmax(const char* op, int64_t rows, int64_t cols, const void* x,
                             const uint64_t* mask, float scale2, void* out, void* stream) {
  if (rows == 0) return engine::Status::Ok();
  const int tpr = ThreadsPerRow(cols);
  const int rows_per_block = kSoftmaxThreads / tpr;
  const int64_t words_per_row = mask ? (cols + 63) / 64 : 0;
  const size_t smem = sizeof(uint64_t) * (kSoftmaxWarps + rows_per_block * words_per_row);
  auto blocks = mi::GridBlocks(op, rows, rows_per_block);
  if (!blocks.IsOk()) return blocks.ToStatus();
  const bool vec = cols % mi::kVecHalves == 0 && mi::Aligned16(x) && mi::Aligned16(out);
  const auto* xs = static_cast<const __half*>(x);
  auto* os = static_cast<__half*>(out);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  const dim3 grid(*blocks), block(kSoftmaxThreads);
  if (mask) {
    if (vec)
      SoftmaxRowsKernel<mi::kVecHalves, true>
          <<<grid, block, smem, st>>>(xs, os, mask, rows, cols, words_per_row, tpr, scale2);
    else
      SoftmaxRowsKernel<1, true>
          <<<grid, block, smem, st>>>(xs, os, mask, rows, cols, words_per_row, tpr, scale2);
  } else {
    if (vec)
      SoftmaxRowsKernel<mi::kVecHalves, false>
          <<<grid, block, smem, st>>>(xs, os, nullptr, rows, cols, 0, tpr, scale2);
    else
      SoftmaxRowsKernel<1, false>
          <<<grid, block, smem, st>>>(xs, os, nullptr, rows, cols, 0, tpr, scale2);
  }
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace

engine::Status LaunchSoftmaxRows(int64_t rows, int64_t cols, const void* x, void* out,
                                 void* stream) {
  constexpr const char* kOp = "softmax_rows";
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "x", x));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "out", out));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "rows", rows, 0));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "cols", cols, 1));
  STOF_RETURN_IF_ERROR(mi::SizeFits(kOp, "rows * cols", mi::CheckedMul(rows, cols)));
  return LaunchSoftmax(kOp, rows, cols, x, nullptr, static_cast<float>(kLog2E), out, stream);
}

engine::Status LaunchScaleMaskSoftmax(int64_t bh, int64_t seq_len, const void* x, float scale,
                                      const void* mask_words, void* out, void* stream) {
  constexpr const char* kOp = "scale_mask_softmax";
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "x", x));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "mask_words", mask_words));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "out", out));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "bh", bh, 0));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "seq_len", seq_len, 1, kMaxMaskLen));
  if (!std::isfinite(scale))
    return engine::MakeError(std::string(kOp) + ": scale: expected a finite value, got " +
                             std::to_string(scale));
  const int64_t rows = mi::CheckedMul(bh, seq_len);
  STOF_RETURN_IF_ERROR(mi::SizeFits(kOp, "bh * seq_len^2", mi::CheckedMul(rows, seq_len)));
  const float scale2 = static_cast<float>(static_cast<double>(scale) * kLog2E);
  return LaunchSoftmax(kOp, rows, seq_len, x, static_cast<const uint64_t*>(mask_words), scale2,
                       out, stream);
}

}  // namespace stof::kernels
