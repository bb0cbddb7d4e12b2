// Online softmax over MMA accumulator fragments (FlashAttention's running max and sum), for
// the fragment layout that mma.sync m16n8 and wgmma m64nN share per warp: a thread holds rows
// g and g + 8 of its warp's 16 rows (g = lane / 4), accumulator s[4 j + 0, 1] in row g and
// s[4 j + 2, 3] in row g + 8, and the 4 lanes of a quad hold the rest of those rows. Used by
// the Hopper attention kernel (kernels/attention_hopper/) and the block-wise mma.sync kernel
// (kernels/attention/block_sparse_kernel.cuh, one per 16-row m-tile).
// Scores stay raw; `scale_log2` (log2(e) times the score scale) is folded into one FFMA per
// element before ex2, so p = 2^(s scale_log2 - m scale_log2). Masked scores are -inf; a row
// that has seen only -inf keeps m = -inf and subtracts 0, so no -inf - -inf (NaN) arises, and
// its sum stays 0, which Finish turns into a zero output row.
#pragma once

#include <cstdint>

#include "kernels/common/fragment_math.cuh"

namespace stof::kernels::common {

template <int kAcc>  // fp32 S accumulators per thread (kAcc / 4 column pairs per row)
struct FragmentSoftmax {
  static_assert(kAcc % 4 == 0, "accumulators come in groups of 4 (two rows x two columns)");
  float row_max[2] = {NegInf(), NegInf()};  // running max of the raw scores (quad-uniform)
  float row_sum[2] = {0.f, 0.f};            // this thread's partial sum of p

  // Takes a block of masked scores, replaces them by p, and returns in `alpha` the factor by
  // which each row's earlier output and sum are rescaled.
  __device__ __forceinline__ void Update(float (&s)[kAcc], float scale_log2, float (&alpha)[2]) {
    float mx[2] = {row_max[0], row_max[1]};
#pragma unroll
    for (int j = 0; j < kAcc / 4; ++j) {
      mx[0] = fmaxf(mx[0], fmaxf(s[4 * j], s[4 * j + 1]));
      mx[1] = fmaxf(mx[1], fmaxf(s[4 * j + 2], s[4 * j + 3]));
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) mx[h] = QuadMax(mx[h]);
    float base[2], sum[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      base[h] = mx[h] == NegInf() ? 0.f : mx[h] * scale_log2;
      alpha[h] = FastExp2(row_max[h] * scale_log2 - base[h]);  // 0 while the row was empty
      row_max[h] = mx[h];
    }
#pragma unroll
    for (int j = 0; j < kAcc / 4; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e >> 1;
        s[4 * j + e] = FastExp2(fmaf(s[4 * j + e], scale_log2, -base[h]));
        sum[h] += s[4 * j + e];
      }
    }
    row_sum[0] = row_sum[0] * alpha[0] + sum[0];
    row_sum[1] = row_sum[1] * alpha[1] + sum[1];
  }

  // The row's full sum (over the quad) per row; 0 for a row with nothing attended.
  __device__ __forceinline__ void RowSums(float (&l)[2]) const {
    l[0] = QuadSum(row_sum[0]);
    l[1] = QuadSum(row_sum[1]);
  }

  // 1 / (the row's full sum) per row, or 0 for a row with nothing attended.
  __device__ __forceinline__ void Finish(float (&inv)[2]) const {
    float l[2];
    RowSums(l);
#pragma unroll
    for (int h = 0; h < 2; ++h) inv[h] = l[h] > 0.f ? 1.f / l[h] : 0.f;
  }
};

// Multiplies the output accumulators of row g by f[0] and of row g + 8 by f[1].
template <int kAcc>
__device__ __forceinline__ void ScaleRows(float (&o)[kAcc], const float (&f)[2]) {
#pragma unroll
  for (int j = 0; j < kAcc / 4; ++j) {
    o[4 * j] *= f[0];
    o[4 * j + 1] *= f[0];
    o[4 * j + 2] *= f[1];
    o[4 * j + 3] *= f[1];
  }
}

// The accumulators of 16 consecutive columns (k-slice `k`) as the A fragment of the next MMA,
// in fp16 or (kBf16) bf16.
template <int kAcc, bool kBf16 = false>
__device__ __forceinline__ void AccumToA(const float (&s)[kAcc], int k, uint32_t (&a)[4]) {
  a[0] = PackPair<kBf16>(s[8 * k], s[8 * k + 1]);
  a[1] = PackPair<kBf16>(s[8 * k + 2], s[8 * k + 3]);
  a[2] = PackPair<kBf16>(s[8 * k + 4], s[8 * k + 5]);
  a[3] = PackPair<kBf16>(s[8 * k + 6], s[8 * k + 7]);
}

}  // namespace stof::kernels::common
