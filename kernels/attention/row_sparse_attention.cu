// LaunchRowSparseAttention (row_sparse_attention.h) and its kernel, templated on the head size
// only (2 instantiations). Each warp owns one query row; a block holds kRowWarps independent
// warps (they share nothing but the block; there is no __syncthreads in the kernel).
// Per chunk of 32 attended keys: lane i scores key i (dot product of the row's q, staged once
// in shared memory and read as broadcasts, with the key's row read as 16-byte vectors),
// a warp max updates the running max (online softmax, fp32, base 2), then the warp walks the
// chunk's keys, broadcasting each p and column by shuffle, and every lane accumulates its
// d / 32 output columns from the key's V row (one coalesced 128 or 256-byte row read).
// Per-lane partial sums are reduced once at the end. Invariants: validated on the host (see
// the launch function); a row with no attended key writes zeros.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/attention_common/device_layout.h"
#include "kernels/common/mma_sync.cuh"
#include "kernels/attention/row_sparse_attention.h"
#include "kernels/cuda_check.h"

namespace stof::kernels {

namespace {

constexpr int kRowWarps = 4;  // rows (warps) per thread block
constexpr int kRowThreads = kRowWarps * 32;

struct RowSparseParams {
  const __half* q;
  const __half* k;
  const __half* v;
  __half* o;
  const int32_t* row_ptr;
  const int32_t* col_idx;
  int seq_len;
  int row_blocks;  // ceil(seq_len / kRowWarps)
  float scale_log2;
};

template <int kHeadDim>
struct RowSparseTraits {
  static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim: 64 or 128");
  static constexpr int kPerLane = kHeadDim / 32;  // output columns per lane: 2 or 4
  static constexpr int kVec = kHeadDim / 8;       // 16-byte vectors per row
};

__device__ __forceinline__ float2 HalfPairToFloat2(uint32_t w) {
  return __half22float2(__halves2half2(__ushort_as_half(static_cast<unsigned short>(w & 0xffffu)),
                                       __ushort_as_half(static_cast<unsigned short>(w >> 16))));
}

__device__ __forceinline__ float Dot8(const uint4& a, const uint4& b, float acc) {
  const uint32_t aw[4] = {a.x, a.y, a.z, a.w};
  const uint32_t bw[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = HalfPairToFloat2(aw[i]);
    const float2 fb = HalfPairToFloat2(bw[i]);
    acc = fmaf(fa.x, fb.x, acc);
    acc = fmaf(fa.y, fb.y, acc);
  }
  return acc;
}

// No __launch_bounds__: with (128) ptxas 13.0 spilled 8 bytes at 40-48 registers; without it
// the kernel uses 42 (d = 64) / 50 (d = 128) registers and no local memory (-Xptxas -v).
template <int kHeadDim>
__global__ void RowSparseAttentionKernel(const RowSparseParams p) {
  using T = RowSparseTraits<kHeadDim>;
  __shared__ __align__(16) __half q_s[kRowWarps][kHeadDim];
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int rb = static_cast<int>(blockIdx.x % static_cast<unsigned>(p.row_blocks));
  const int64_t bh = static_cast<int64_t>(blockIdx.x / static_cast<unsigned>(p.row_blocks));
  const int row = rb * kRowWarps + warp;
  if (row >= p.seq_len) return;  // whole warp; no block-wide barrier follows
  const size_t head_off = static_cast<size_t>(bh) * static_cast<size_t>(p.seq_len) * kHeadDim;
  const __half* const kh = p.k + head_off;
  const __half* const vh = p.v + head_off;

  if (lane < T::kVec) {
    reinterpret_cast<uint4*>(q_s[warp])[lane] =
        reinterpret_cast<const uint4*>(p.q + head_off + static_cast<size_t>(row) * kHeadDim)[lane];
  }
  __syncwarp();
  const uint4* const qv = reinterpret_cast<const uint4*>(q_s[warp]);

  const int e0 = p.row_ptr[row];
  const int e1 = p.row_ptr[row + 1];
  float acc[T::kPerLane];
#pragma unroll
  for (int i = 0; i < T::kPerLane; ++i) acc[i] = 0.f;
  float m = __int_as_float(0xff800000u);  // running max (base-2 units), -inf before any key
  float l = 0.f;                          // this lane's share of the running sum

  for (int base = e0; base < e1; base += 32) {  // base and e1 are warp-uniform
    const int e = base + lane;
    const bool valid = e < e1;
    const int col = valid ? p.col_idx[e] : 0;
    float x = __int_as_float(0xff800000u);
    if (valid) {
      const uint4* const kr =
          reinterpret_cast<const uint4*>(kh + static_cast<size_t>(col) * kHeadDim);
      float dot = 0.f;
#pragma unroll
      for (int i = 0; i < T::kVec; ++i) dot = Dot8(qv[i], __ldg(kr + i), dot);
      x = dot * p.scale_log2;
    }
    float cmax = x;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      cmax = fmaxf(cmax, __shfl_xor_sync(0xffffffffu, cmax, off));
    // Lane 0's key is valid (base < e1), so m_new is finite; exp2(-inf) = 0 covers the first
    // chunk's alpha and the invalid lanes' p.
    const float m_new = fmaxf(m, cmax);
    const float alpha = mma::FastExp2(m - m_new);
    const float pe = mma::FastExp2(x - m_new);
    l = l * alpha + pe;
#pragma unroll
    for (int i = 0; i < T::kPerLane; ++i) acc[i] *= alpha;
    m = m_new;

    const int count = min(32, e1 - base);
    for (int j = 0; j < count; ++j) {
      const float pj = __shfl_sync(0xffffffffu, pe, j);
      const int cj = __shfl_sync(0xffffffffu, col, j);
      const __half* const vr = vh + static_cast<size_t>(cj) * kHeadDim + lane * T::kPerLane;
      if constexpr (T::kPerLane == 2) {
        const float2 f = HalfPairToFloat2(*reinterpret_cast<const uint32_t*>(vr));
        acc[0] = fmaf(pj, f.x, acc[0]);
        acc[1] = fmaf(pj, f.y, acc[1]);
      } else {
        const uint2 w = *reinterpret_cast<const uint2*>(vr);
        const float2 f0 = HalfPairToFloat2(w.x);
        const float2 f1 = HalfPairToFloat2(w.y);
        acc[0] = fmaf(pj, f0.x, acc[0]);
        acc[1] = fmaf(pj, f0.y, acc[1]);
        acc[2] = fmaf(pj, f1.x, acc[2]);
        acc[3] = fmaf(pj, f1.y, acc[3]);
      }
    }
  }

#pragma unroll
  for (int off = 16; off > 0; off >>= 1) l += __shfl_xor_sync(0xffffffffu, l, off);
  // No attended key: zeros, as the reference. l >= 1 here, so the approximate division (2 ulp)
  // is exact enough and avoids the IEEE reciprocal's slow-path subroutine (a stack frame).
  const float inv = l > 0.f ? __fdividef(1.f, l) : 0.f;
  __half* const out = p.o + head_off + static_cast<size_t>(row) * kHeadDim + lane * T::kPerLane;
  if constexpr (T::kPerLane == 2) {
    *reinterpret_cast<uint32_t*>(out) = mma::PackHalf2(acc[0] * inv, acc[1] * inv);
  } else {
    uint2 w;
    w.x = mma::PackHalf2(acc[0] * inv, acc[1] * inv);
    w.y = mma::PackHalf2(acc[2] * inv, acc[3] * inv);
    *reinterpret_cast<uint2*>(out) = w;
  }
}

bool Aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

}  // namespace

engine::Status LaunchRowSparseAttention(const engine::Workload& w, const DeviceRowLayout& layout,
                                        const void* q, const void* k, const void* v, void* o,
                                        void* stream) {
  const std::string what = "row-wise MHA: ";
  STOF_RETURN_IF_ERROR(w.Validate("row-wise MHA: workload"));
  if (w.dtype != engine::DType::kF16) {
    return engine::MakeError(what + "workload.dtype: only f16 is supported, got " +
                             engine::DTypeName(w.dtype));
  }
  if (w.head_dim != 64 && w.head_dim != 128) {
    return engine::MakeError(what + "workload.head_dim: must be 64 or 128, got " +
                             std::to_string(w.head_dim));
  }
  if (layout.SeqLen() != w.seq_len) {
    return engine::MakeError(what + "layout: built for L = " + std::to_string(layout.SeqLen()) +
                             ", workload.seq_len is " + std::to_string(w.seq_len));
  }
  if (q == nullptr || k == nullptr || v == nullptr || o == nullptr)
    return engine::MakeError(what + "q, k, v and o must not be null");
  if (!Aligned16(q) || !Aligned16(k) || !Aligned16(v) || !Aligned16(o))
    return engine::MakeError(what + "q, k, v and o must be 16-byte aligned");
  const int64_t row_blocks = (w.seq_len + kRowWarps - 1) / kRowWarps;
  const int64_t grid = row_blocks * w.batch * w.heads;
  if (grid > int64_t{0x7fffffff}) {
    return engine::MakeError(what + "ceil(L / " + std::to_string(kRowWarps) +
                             ") * batch * heads = " + std::to_string(grid) +
                             " exceeds the grid limit 2^31 - 1");
  }
  RowSparseParams p;
  p.q = static_cast<const __half*>(q);
  p.k = static_cast<const __half*>(k);
  p.v = static_cast<const __half*>(v);
  p.o = static_cast<__half*>(o);
  p.row_ptr = layout.RowPtr();
  p.col_idx = layout.ColIdx();
  p.seq_len = static_cast<int>(w.seq_len);
  p.row_blocks = static_cast<int>(row_blocks);
  p.scale_log2 =
      static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(w.head_dim)));
  auto s = static_cast<cudaStream_t>(stream);
  if (w.head_dim == 64) {
    RowSparseAttentionKernel<64><<<static_cast<unsigned>(grid), kRowThreads, 0, s>>>(p);
  } else {
    RowSparseAttentionKernel<128><<<static_cast<unsigned>(grid), kRowThreads, 0, s>>>(p);
  }
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace stof::kernels
