// LaunchBiasActAdd, LaunchScale, LaunchApplyMask, LaunchSplitHeads, LaunchMergeHeads
// (elementwise_kernels.h; the softmax entry points are in softmax_kernels.cu).
//
// Row kernels (bias/act/add, mask, split/merge): 256 threads per block, a group of T threads per
// row (a power of two, 1 .. 256, the smallest that gives each thread at most 4 units of the
// row; a unit is 8 halves on the vector path, else 1), 256 / T rows per block. Working a row at
// a time keeps the column index (bias, mask word, head) a running value instead of a 64-bit
// division per element. Scale is a flat grid-stride loop. Each thread reads an element before
// it writes it and touches no other thread's elements, so out may equal x where allowed.
// Instantiations: bias/act/add 3 activations x 2 paths, scale 2, mask 2, split/merge 2 x 2.
#include "kernels/norm/elementwise_kernels.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/cuda_check.h"
#include "kernels/norm/mi_common.cuh"

namespace stof::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kUnitsPerThread = 4;
constexpr int64_t kMaxMaskLen = 32768;  // engine::Mask::kMaxLen
constexpr uint16_t kHalfMinusInf = 0xFC00u;
constexpr int kMaxGridStrideBlocks = 8192;  // enough to fill any current GPU; then grid-stride

// Threads per row (as log2) for rows of `units` units: the smallest power of two with at most
// kUnitsPerThread units each, capped at the block.
int RowThreadsLog2(int64_t units) {
  int t = 1;
  while (t < kThreads && static_cast<int64_t>(t) * kUnitsPerThread < units) t *= 2;
  return std::countr_zero(static_cast<unsigned>(t));
}

// The row and this thread's lane in it; row >= rows for the idle groups of the last block.
struct RowLane {
  int64_t row;
  int lane, tpr;
};
__device__ __forceinline__ RowLane ThisRow(int tpr_log2) {
  RowLane r;
  r.tpr = 1 << tpr_log2;
  r.lane = static_cast<int>(threadIdx.x) & (r.tpr - 1);
  r.row = static_cast<int64_t>(blockIdx.x) * (kThreads >> tpr_log2) +
          (static_cast<int>(threadIdx.x) >> tpr_log2);
  return r;
}

engine::Expected<unsigned> RowBlocks(const char* op, int64_t rows, int tpr_log2) {
  return mi::GridBlocks(op, rows, kThreads >> tpr_log2);
}

// ---- bias + activation + residual ----

template <engine::Activation A, int V>
__global__ void __launch_bounds__(kThreads)
    BiasActAddKernel(const __half* x, const __half* __restrict__ bias, const __half* residual,
                     __half* out, int64_t rows, int64_t cols, int tpr_log2) {
  const RowLane r = ThisRow(tpr_log2);
  if (r.row >= rows) return;
  const int64_t base = r.row * cols;
  for (int64_t c = static_cast<int64_t>(r.lane) * V; c < cols; c += static_cast<int64_t>(r.tpr) * V) {
    float v[V];
    mi::LoadHalves<V>(x + base + c, v);
    if (bias) {
      float b[V];
      mi::LoadHalvesLdg<V>(bias + c, b);
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] += b[j];
    }
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = mi::Activate<A>(v[j]);
    if (residual) {
      float res[V];
      mi::LoadHalves<V>(residual + base + c, res);
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] += res[j];
    }
    mi::StoreHalves<V>(out + base + c, v);
  }
}

template <engine::Activation A>
void LaunchBiasActAddAs(bool vec, unsigned blocks, cudaStream_t st, const __half* x,
                        const __half* bias, const __half* residual, __half* out, int64_t rows,
                        int64_t cols, int tpr_log2) {
  if (vec)
    BiasActAddKernel<A, mi::kVecHalves>
        <<<blocks, kThreads, 0, st>>>(x, bias, residual, out, rows, cols, tpr_log2);
  else
    BiasActAddKernel<A, 1><<<blocks, kThreads, 0, st>>>(x, bias, residual, out, rows, cols, tpr_log2);
}

// ---- scale ----

// Units of V halves in a grid-stride loop; on the vector path the n % 8 tail is done one half
// at a time by the first threads of the grid.
template <int V>
__global__ void __launch_bounds__(kThreads)
    ScaleKernel(const __half* x, __half* out, int64_t n, float scale) {
  const int64_t units = n / V;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t u = first; u < units; u += stride) {
    float v[V];
    mi::LoadHalves<V>(x + u * V, v);
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] *= scale;
    mi::StoreHalves<V>(out + u * V, v);
  }
  if constexpr (V > 1) {
    const int64_t i = units * V + first;
    if (i < n) out[i] = __float2half_rn(__half2float(x[i]) * scale);
  }
}

// ---- mask ----

// Row r of x/out is query i = r % L; masked elements become fp16 -inf. Bits are moved, not
// converted, so attended elements are copied exactly.
template <int V>
__global__ void __launch_bounds__(kThreads)
    ApplyMaskKernel(const uint16_t* x, const uint64_t* __restrict__ mask, uint16_t* out,
                    int64_t rows, int64_t L, int64_t words_per_row, int tpr_log2) {
  const RowLane r = ThisRow(tpr_log2);
  if (r.row >= rows) return;
  const int64_t base = r.row * L;
  const uint64_t* words = mask + (r.row % L) * words_per_row;
  for (int64_t c = static_cast<int64_t>(r.lane) * V; c < L; c += static_cast<int64_t>(r.tpr) * V) {
    const unsigned bits =
        static_cast<unsigned>(__ldg(words + (c >> 6)) >> (c & 63)) & ((1u << V) - 1u);
    if constexpr (V == mi::kVecHalves) {
      uint4 raw = make_uint4(0u, 0u, 0u, 0u);
      if (bits != 0) raw = *reinterpret_cast<const uint4*>(x + base + c);  // else: no read
      uint16_t* h = reinterpret_cast<uint16_t*>(&raw);
#pragma unroll
      for (int j = 0; j < V; ++j)
        if (!((bits >> j) & 1u)) h[j] = kHalfMinusInf;
      *reinterpret_cast<uint4*>(out + base + c) = raw;
    } else {
      out[base + c] = bits ? x[base + c] : kHalfMinusInf;
    }
  }
}

// ---- split / merge heads ----

// Row r = (b, l) of the token-major side (src of a split, dst of a merge): element
// row_base + u V, u over the row's H d / V units, is head h = u / (d / V), offset t of
// [B, H, L, d] row ((b H + h) L + l). kSplit copies token-major -> head-major, else back.
template <int V, bool kSplit>
__global__ void __launch_bounds__(kThreads)
    HeadsKernel(const uint16_t* src, uint16_t* dst, int64_t rows, int64_t L, int heads,
                int head_units, int64_t row_stride, int64_t col_offset, int64_t head_dim,
                int tpr_log2) {
  const RowLane r = ThisRow(tpr_log2);
  if (r.row >= rows) return;
  const int64_t b = r.row / L, l = r.row - b * L;
  const int64_t token_base = r.row * row_stride + col_offset;
  const int row_units = heads * head_units;
  for (int u = r.lane; u < row_units; u += r.tpr) {
    const int h = u / head_units;
    const int t = u - h * head_units;
    const int64_t token = token_base + static_cast<int64_t>(u) * V;
    const int64_t head = ((b * heads + h) * L + l) * head_dim + static_cast<int64_t>(t) * V;
    const int64_t from = kSplit ? token : head, to = kSplit ? head : token;
    if constexpr (V == mi::kVecHalves)
      *reinterpret_cast<uint4*>(dst + to) = *reinterpret_cast<const uint4*>(src + from);
    else
      dst[to] = src[from];
  }
}

engine::Status CheckHeadDims(const char* op, int64_t batch, int64_t seq_len, int64_t heads,
                             int64_t head_dim) {
  STOF_RETURN_IF_ERROR(mi::InRange(op, "batch", batch, 0));
  STOF_RETURN_IF_ERROR(mi::InRange(op, "seq_len", seq_len, 1));
  STOF_RETURN_IF_ERROR(mi::InRange(op, "heads", heads, 1));
  STOF_RETURN_IF_ERROR(mi::InRange(op, "head_dim", head_dim, 1));
  // A row's H d units are counted in int.
  STOF_RETURN_IF_ERROR(mi::InRange(op, "heads * head_dim", mi::CheckedMul(heads, head_dim), 1,
                                   std::numeric_limits<int>::max()));
  const int64_t rows = mi::CheckedMul(batch, seq_len);
  STOF_RETURN_IF_ERROR(mi::SizeFits(op, "batch * seq_len * heads * head_dim",
                                    mi::CheckedMul(rows, heads * head_dim)));
  return engine::Status::Ok();
}

engine::Status LaunchHeads(const char* op, bool split, int64_t batch, int64_t seq_len,
                           int64_t heads, int64_t head_dim, const void* src, int64_t row_stride,
                           int64_t col_offset, void* dst, void* stream) {
  const int64_t rows = batch * seq_len;
  if (rows == 0) return engine::Status::Ok();
  const bool vec = head_dim % mi::kVecHalves == 0 && row_stride % mi::kVecHalves == 0 &&
                   col_offset % mi::kVecHalves == 0 && mi::Aligned16(src) && mi::Aligned16(dst);
  const int unit = vec ? mi::kVecHalves : 1;
  const int head_units = static_cast<int>(head_dim / unit);
  const int tpr_log2 = RowThreadsLog2(heads * head_units);
  auto blocks = RowBlocks(op, rows, tpr_log2);
  if (!blocks.IsOk()) return blocks.ToStatus();
  const auto* s = static_cast<const uint16_t*>(src);
  auto* d = static_cast<uint16_t*>(dst);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  const int h = static_cast<int>(heads);
  if (split) {
    if (vec)
      HeadsKernel<mi::kVecHalves, true><<<*blocks, kThreads, 0, st>>>(
          s, d, rows, seq_len, h, head_units, row_stride, col_offset, head_dim, tpr_log2);
    else
      HeadsKernel<1, true><<<*blocks, kThreads, 0, st>>>(s, d, rows, seq_len, h, head_units,
                                                         row_stride, col_offset, head_dim,
                                                         tpr_log2);
  } else {
    if (vec)
      HeadsKernel<mi::kVecHalves, false><<<*blocks, kThreads, 0, st>>>(
          s, d, rows, seq_len, h, head_units, row_stride, col_offset, head_dim, tpr_log2);
    else
      HeadsKernel<1, false><<<*blocks, kThreads, 0, st>>>(s, d, rows, seq_len, h, head_units,
                                                          row_stride, col_offset, head_dim,
                                                          tpr_log2);
  }
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace

engine::Status LaunchBiasActAdd(int64_t rows, int64_t cols, const void* x, const void* bias,
                                engine::Activation act, const void* residual, void* out,
                                void* stream) {
  constexpr const char* kOp = "bias_act_add";
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "x", x));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "out", out));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "rows", rows, 0));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "cols", cols, 1));
  STOF_RETURN_IF_ERROR(mi::SizeFits(kOp, "rows * cols", mi::CheckedMul(rows, cols)));
  if (act != engine::Activation::kNone && act != engine::Activation::kGelu &&
      act != engine::Activation::kRelu)
    return engine::MakeError(std::string(kOp) + ": act: unknown activation " +
                             mi::Str(static_cast<int>(act)));
  if (rows == 0) return engine::Status::Ok();
  const bool vec = cols % mi::kVecHalves == 0 && mi::Aligned16(x) && mi::Aligned16(out) &&
                   mi::Aligned16(bias) && mi::Aligned16(residual);  // null is aligned
  const int tpr_log2 = RowThreadsLog2(vec ? cols / mi::kVecHalves : cols);
  auto blocks = RowBlocks(kOp, rows, tpr_log2);
  if (!blocks.IsOk()) return blocks.ToStatus();
  const auto* xs = static_cast<const __half*>(x);
  const auto* bs = static_cast<const __half*>(bias);
  const auto* rs = static_cast<const __half*>(residual);
  auto* os = static_cast<__half*>(out);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  switch (act) {
    case engine::Activation::kGelu:
      LaunchBiasActAddAs<engine::Activation::kGelu>(vec, *blocks, st, xs, bs, rs, os, rows, cols,
                                                    tpr_log2);
      break;
    case engine::Activation::kRelu:
      LaunchBiasActAddAs<engine::Activation::kRelu>(vec, *blocks, st, xs, bs, rs, os, rows, cols,
                                                    tpr_log2);
      break;
    default:
      LaunchBiasActAddAs<engine::Activation::kNone>(vec, *blocks, st, xs, bs, rs, os, rows, cols,
                                                    tpr_log2);
      break;
  }
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

engine::Status LaunchScale(int64_t n, const void* x, float scale, void* out, void* stream) {
  constexpr const char* kOp = "scale";
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "x", x));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "out", out));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "n", n, 0));
  STOF_RETURN_IF_ERROR(mi::SizeFits(kOp, "n", mi::CheckedMul(n, 1)));
  if (!std::isfinite(scale))
    return engine::MakeError(std::string(kOp) + ": scale: expected a finite value, got " +
                             std::to_string(scale));
  if (n == 0) return engine::Status::Ok();
  const bool vec = mi::Aligned16(x) && mi::Aligned16(out);
  const int64_t units = vec ? std::max<int64_t>(n / mi::kVecHalves, 1) : n;  // >= 1: the tail
  const auto blocks = static_cast<unsigned>(
      std::min<int64_t>((units + kThreads - 1) / kThreads, kMaxGridStrideBlocks));
  const auto* xs = static_cast<const __half*>(x);
  auto* os = static_cast<__half*>(out);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (vec)
    ScaleKernel<mi::kVecHalves><<<blocks, kThreads, 0, st>>>(xs, os, n, scale);
  else
    ScaleKernel<1><<<blocks, kThreads, 0, st>>>(xs, os, n, scale);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

engine::Status LaunchApplyMask(int64_t bh, int64_t seq_len, const void* x, const void* mask_words,
                               void* out, void* stream) {
  constexpr const char* kOp = "apply_mask";
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "x", x));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "mask_words", mask_words));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "out", out));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "bh", bh, 0));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "seq_len", seq_len, 1, kMaxMaskLen));
  const int64_t rows = mi::CheckedMul(bh, seq_len);
  STOF_RETURN_IF_ERROR(mi::SizeFits(kOp, "bh * seq_len^2", mi::CheckedMul(rows, seq_len)));
  if (rows == 0) return engine::Status::Ok();
  const bool vec = seq_len % mi::kVecHalves == 0 && mi::Aligned16(x) && mi::Aligned16(out);
  const int tpr_log2 = RowThreadsLog2(vec ? seq_len / mi::kVecHalves : seq_len);
  auto blocks = RowBlocks(kOp, rows, tpr_log2);
  if (!blocks.IsOk()) return blocks.ToStatus();
  const int64_t words_per_row = (seq_len + 63) / 64;
  const auto* xs = static_cast<const uint16_t*>(x);
  const auto* ms = static_cast<const uint64_t*>(mask_words);
  auto* os = static_cast<uint16_t*>(out);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (vec)
    ApplyMaskKernel<mi::kVecHalves>
        <<<*blocks, kThreads, 0, st>>>(xs, ms, os, rows, seq_len, words_per_row, tpr_log2);
  else
    ApplyMaskKernel<1><<<*blocks, kThreads, 0, st>>>(xs, ms, os, rows, seq_len, words_per_row,
                                                     tpr_log2);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

engine::Status LaunchSplitHeads(int64_t batch, int64_t seq_len, int64_t heads, int64_t head_dim,
                                const void* src, int64_t src_row_stride, int64_t col_offset,
                                void* dst, void* stream) {
  constexpr const char* kOp = "split_heads";
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "src", src));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "dst", dst));
  STOF_RETURN_IF_ERROR(CheckHeadDims(kOp, batch, seq_len, heads, head_dim));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "col_offset", col_offset, 0));
  const int64_t width = heads * head_dim;
  if (col_offset > std::numeric_limits<int64_t>::max() / 4 - width ||
      src_row_stride < col_offset + width)
    return engine::MakeError(std::string(kOp) + ": src_row_stride: expected >= col_offset + "
                             "heads * head_dim = " + mi::Str(col_offset) + " + " +
                             mi::Str(width) + ", got " + mi::Str(src_row_stride));
  STOF_RETURN_IF_ERROR(mi::SizeFits(kOp, "batch * seq_len * src_row_stride",
                                    mi::CheckedMul(batch * seq_len, src_row_stride)));
  if (src == dst) return engine::MakeError(std::string(kOp) + ": dst: must not be src");
  return LaunchHeads(kOp, true, batch, seq_len, heads, head_dim, src, src_row_stride, col_offset,
                     dst, stream);
}

engine::Status LaunchMergeHeads(int64_t batch, int64_t seq_len, int64_t heads, int64_t head_dim,
                                const void* src, void* dst, void* stream) {
  constexpr const char* kOp = "merge_heads";
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "src", src));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "dst", dst));
  STOF_RETURN_IF_ERROR(CheckHeadDims(kOp, batch, seq_len, heads, head_dim));
  if (src == dst) return engine::MakeError(std::string(kOp) + ": dst: must not be src");
  // The token-major side is dst, rows of H d with no offset.
  return LaunchHeads(kOp, false, batch, seq_len, heads, head_dim, src, heads * head_dim, 0, dst,
                     stream);
}

}  // namespace stof::kernels
