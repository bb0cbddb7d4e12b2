// Element masks on the S accumulators of one consumer thread (rows r and r + 8 of the Q tile,
// the fragment layout of kernels/common/fragment_softmax.cuh): a part block's bitmap, and the
// key limit of a block that runs past L. Masked scores become -inf. Part of the Hopper
// attention kernel (hopper_attention_kernel.cuh). Also a batch row's kept keys (ApplyKeyBits).
// Cost: per part block a thread loads its two rows' kBlockN bits (2 x kBlockN / 64 words, from
// shared memory where the bitmap was staged with the block's V, else from L2), shifts each
// word once by 2 t, and tests compile-time bit positions; full blocks inside L do no mask work.
#pragma once

#include <cstdint>

#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/hopper/mbarrier.cuh"

namespace stof::kernels::detail {

// The words of a thread's two rows (`row`, `row` + 8 of the tile) of a kBlockM x kBlockN
// bitmap, row-major, shifted by 2 t (t = lane % 4) so the thread's columns sit at fixed bits.
// kShared: `bitmap` is in shared memory (staged with its V tile, hopper_pipeline.cuh), else
// global (through the read-only path).
template <int kBlockN, bool kShared>
struct BitmapRows {
  static constexpr int kWords = kBlockN / 64;
  uint64_t w[2][kWords];
  __device__ __forceinline__ BitmapRows(const uint64_t* bitmap, int row, int t) {
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int k = 0; k < kWords; ++k) {
        const uint64_t* at = bitmap + (row + 8 * h) * kWords + k;
        uint64_t v;
        if constexpr (kShared) {
          asm volatile("ld.shared.b64 %0, [%1];\n" : "=l"(v) : "r"(hopper::SmemAddr(at)));
        } else {
          v = __ldg(reinterpret_cast<const unsigned long long*>(at));
        }
        w[h][k] = v >> (2 * t);
      }
  }
};

// Masked scores become -inf: bit 0 in the words of the thread's two rows (`w[h]`: row
// `row` + 8 h, shifted by 2 t as BitmapRows does).
template <int kBlockN>
__device__ __forceinline__ void ApplyRowWords(float (&s)[kBlockN / 2],
                                              const uint64_t (&w)[2][kBlockN / 64]) {
#pragma unroll
  for (int j = 0; j < kBlockN / 8; ++j) {
    const int word = j / 8, bit = (j % 8) * 8;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (((w[h][word] >> bit) & 1u) == 0) s[4 * j + 2 * h] = common::NegInf();
      if (((w[h][word] >> (bit + 1)) & 1u) == 0) s[4 * j + 2 * h + 1] = common::NegInf();
    }
  }
}

// Masked scores (bit 0 in the rows above) become -inf.
template <int kBlockN, bool kShared>
__device__ __forceinline__ void ApplyBitmapMask(float (&s)[kBlockN / 2],
                                                const BitmapRows<kBlockN, kShared>& rows) {
  ApplyRowWords<kBlockN>(s, rows.w);
}

// Masks the block's columns outside [first, end) (block-relative): keys at or past L in a
// block that runs past it, and a batch row's key range (HopperAttentionParams::key_ranges).
template <int kBlockN>
__device__ __forceinline__ void ApplyKeyWindow(float (&s)[kBlockN / 2], int first, int end,
                                               int t) {
#pragma unroll
  for (int j = 0; j < kBlockN / 8; ++j) {
    const int c = 8 * j + 2 * t;
    if (c < first || c >= end) s[4 * j] = s[4 * j + 2] = common::NegInf();
    if (c + 1 < first || c + 1 >= end) s[4 * j + 1] = s[4 * j + 3] = common::NegInf();
  }
}

// Masks the block's columns whose bit is 0 in `bits` (the kBlockN / 64 words of a batch row's
// kept keys from the block's first key, HopperAttentionParams::key_bits): both rows of the
// thread alike.
template <int kBlockN>
__device__ __forceinline__ void ApplyKeyBits(float (&s)[kBlockN / 2], const uint64_t* bits,
                                             int t) {
  uint64_t w[2][kBlockN / 64];
#pragma unroll
  for (int k = 0; k < kBlockN / 64; ++k)
    w[0][k] = w[1][k] = __ldg(reinterpret_cast<const unsigned long long*>(bits + k)) >> (2 * t);
  ApplyRowWords<kBlockN>(s, w);
}

}  // namespace stof::kernels::detail
