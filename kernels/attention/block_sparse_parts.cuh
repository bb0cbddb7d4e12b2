// The parts of the block-wise kernel BlockSparseAttentionKernel (block_sparse_kernel.cuh), in
// the order it runs them: the cp.async producers and pipeline steps, the Q fragments,
// S = Q K^T, the masks (part-block bitmap, ragged edge), the online-softmax step, O += P V,
// and the two epilogues (split == 1: normalise and store; split > 1: store the group's
// partials, merge them). Included only by block_sparse_kernel.cuh; T is the variant's
// BlockSparseTraits. Every part is __forceinline__, and the split into parts is PTX-identical
// to the kernel written as one function (the PTX of the three instantiation files compared
// byte for byte). Keeping it so fixed two things: arrays a part only uses internally (`bits`,
// `alpha`, `a`, `out`) are declared by the kernel and passed in as scratch, and the kernel
// calls the producers through lambdas; declared inside a part, or called directly, they
// change the generated code (register numbering and instruction order in the PTX).
// The part-block mask is not hopper_mask.cuh's: there a bitmap row is whole words (BLOCK_N 64
// and 128 only), here rows are packed at bit row * BLOCK_N (BLOCK_N 16 and 32 share a word),
// and at BLOCK_N 64 and 128 its order of loads and bit tests gives different PTX.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/attention/block_sparse_variant.h"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/mma_sync.cuh"

namespace stof::kernels::detail {

using common::NegInf;

// An m-tile's accumulators [n-tiles][4] as the flat array the fragment helpers take (the same
// registers: element (j, c) is flat 4 j + c, the layout fragment_softmax.cuh describes).
template <int kTiles>
__device__ __forceinline__ float (&Flat(float (&acc)[kTiles][4]))[kTiles * 4] {
  return reinterpret_cast<float(&)[kTiles * 4]>(acc);
}

// Element (j, c) of an accumulator acc[mt] (S or O) is row 16 mt + g + 8 (c >> 1) of the warp,
// column 8 j + 2 t + (c & 1) of its tile (g = lane >> 2, t = lane & 3).

// Nothing attended in this block row: zeros (the reference's fully masked rows).
template <class T>
__device__ __forceinline__ void StoreBlockRowZeros(const BlockSparseParams& p, __half* oh,
                                                   int q_row0, int L, int tid, int nthreads) {
  for (int c = tid; c < p.block_m * T::kChunksPerRow; c += nthreads) {
    const int r = c / T::kChunksPerRow;
    if (q_row0 + r < L) {
      *reinterpret_cast<uint4*>(oh + static_cast<size_t>(q_row0 + r) * p.o_ld +
                                (c % T::kChunksPerRow) * 8) = make_uint4(0, 0, 0, 0);
    }
  }
}

// ---- cp.async producers (all threads) ----
// Rows past L are zero-filled: Q so padded rows give finite (unused) scores, K/V so that a
// masked column's p = 0 never meets NaN/inf garbage in 0 * V.

// The block's Q tile (BLOCK_M rows from q_row0) into q_s.
template <class T>
__device__ __forceinline__ void LoadQTile(const BlockSparseParams& p, __half* q_s, const __half* qh,
                                          int q_row0, int L, int tid, int nthreads) {
  for (int c = tid; c < p.block_m * T::kChunksPerRow; c += nthreads) {
    const int r = c / T::kChunksPerRow;
    const int col = (c % T::kChunksPerRow) * 8;
    const int gr = q_row0 + r;
    const bool ok = gr < L;
    mma::CpAsync16(q_s + r * T::kStride + col,
                   qh + (ok ? static_cast<size_t>(gr) * p.q_ld + col : 0), ok);
  }
}

// Step `step`'s K and V tiles of every group into stage `stage` of kv_s. Every thread copies
// chunks of every group's tiles; the block index is read once per tile.
template <class T>
__device__ __forceinline__ void LoadKvTiles(const BlockSparseParams& p, __half* kv_s,
                                            const __half* kh, const __half* vh, int e_begin,
                                            int n_blocks, int step, int stage, int L, int tid,
                                            int nthreads) {
  constexpr int kPerTile = T::kBlockN * T::kChunksPerRow;
  for (int grp = 0; grp < p.split; ++grp) {
    const int e = step * p.split + grp;
    if (e >= n_blocks) break;  // later groups of this step have no block either
    const int key0 = __ldg(p.load_col_idx + e_begin + e) * T::kBlockN;
    __half* const k_tile = kv_s + (stage * p.split + grp) * 2 * T::kTileHalves;
    for (int c = tid; c < kPerTile; c += nthreads) {
      const int r = c / T::kChunksPerRow;
      const int col = (c % T::kChunksPerRow) * 8;
      const int gr = key0 + r;
      const bool ok = gr < L;
      const size_t off = ok ? static_cast<size_t>(gr) * p.kv_ld + col : 0;
      __half* const dst = k_tile + r * T::kStride + col;
      mma::CpAsync16(dst, kh + off, ok);
      mma::CpAsync16(dst + T::kTileHalves, vh + off, ok);
    }
  }
}

// Pipeline prologue: the Q tile and step 0's K/V as two commit groups; returns with Q in
// shared memory (visible to all) while step 0's K/V may still be in flight.
template <class LoadQ, class LoadKv>
__device__ __forceinline__ void StartPipeline(const LoadQ& load_q, const LoadKv& load_kv) {
  load_q();
  mma::CpAsyncCommit();
  load_kv(0, 0);
  mma::CpAsyncCommit();
  mma::CpAsyncWait<1>();  // the Q group is done; step 0's K/V may still be in flight
  __syncthreads();
}

// The pipeline step at the top of step s: issue step s + 1's K/V into the other stage, then
// wait until step s's tiles are in `stage` and visible to every thread.
template <class LoadKv>
__device__ __forceinline__ void AdvancePipeline(const LoadKv& load_kv, int s, int steps,
                                                int stage) {
  if (s + 1 < steps) {
    load_kv(s + 1, stage ^ 1);  // that stage was released by the barrier ending step s - 1
    mma::CpAsyncCommit();
    mma::CpAsyncWait<1>();
  } else {
    mma::CpAsyncWait<0>();
  }
  __syncthreads();  // step s's tiles, written by every thread's cp.async, are visible
}

// The warp's Q rows as A fragments [m-tile][k-step], read once from q_s before the loop.
template <class T>
__device__ __forceinline__ void LoadQFragments(uint32_t (&q_frag)[T::kMTiles][T::kQkSteps][4],
                                               const __half* q_s, int wrow, int lane) {
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int kk = 0; kk < T::kQkSteps; ++kk)
      mma::LoadA(q_frag[mt][kk], q_s + (wrow + 16 * mt) * T::kStride + kk * 16, T::kStride, lane);
  }
}

// S = Q K^T for the warp's rows x BLOCK_N columns; each K fragment feeds every m-tile.
template <class T>
__device__ __forceinline__ void ComputeScores(float (&acc_s)[T::kMTiles][T::kSTiles][4],
                                              const uint32_t (&q_frag)[T::kMTiles][T::kQkSteps][4],
                                              const __half* k_s, int lane) {
  mma::ZeroFragments(acc_s);
#pragma unroll
  for (int kk = 0; kk < T::kQkSteps; ++kk) {
#pragma unroll
    for (int jj = 0; jj < T::kBlockN / 16; ++jj) {
      uint32_t b[4];
      mma::LoadBFromNK(b, k_s + jj * 16 * T::kStride + kk * 16, T::kStride, lane);
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
        mma::Mma16816(acc_s[mt][2 * jj], q_frag[mt][kk], b[0], b[1]);
        mma::Mma16816(acc_s[mt][2 * jj + 1], q_frag[mt][kk], b[2], b[3]);
      }
    }
  }
}

// A part block's mask: -inf where its bitmap has a 0 (scratch: `bits`, one row's words). The
// bitmap row is BLOCK_N bits at bit row * BLOCK_N (padding bits are zero), shifted once by 2 t
// so that each element tests the constant bit 8 j + (c & 1).
template <class T>
__device__ __forceinline__ void ApplyPartMask(float (&acc_s)[T::kMTiles][T::kSTiles][4],
                                              uint64_t (&bits)[T::kBitWords],
                                              const BlockSparseParams& p, int part, int wrow, int g,
                                              int t) {
  const uint64_t* const bm =
      p.part_bitmaps + static_cast<size_t>(part) * static_cast<size_t>(p.bitmap_words);
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int bit0 = (wrow + 16 * mt + g + 8 * h) * T::kBlockN;
      if constexpr (T::kBlockN <= 64) {
        bits[0] = __ldg(bm + (bit0 >> 6)) >> ((bit0 & 63) + 2 * t);
      } else {
#pragma unroll
        for (int w = 0; w < T::kBitWords; ++w) bits[w] = __ldg(bm + (bit0 >> 6) + w) >> (2 * t);
      }
#pragma unroll
      for (int j = 0; j < T::kSTiles; ++j) {
#pragma unroll
        for (int lo = 0; lo < 2; ++lo) {
          // j and lo are compile-time: a constant bit of a known word.
          const bool in = (bits[(8 * j) >> 6] >> ((8 * j + lo) & 63)) & 1u;
          if (!in) acc_s[mt][j][2 * h + lo] = NegInf();
        }
      }
    }
  }
}

// The last block column's ragged edge: -inf for keys at or past L (the block starts at key0).
template <class T>
__device__ __forceinline__ void ApplyKeyLimit(float (&acc_s)[T::kMTiles][T::kSTiles][4], int key0,
                                              int L, int t) {
  const int lim = L - key0 - 2 * t;  // element (j, c) is valid iff 8 j + (c & 1) < lim
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int j = 0; j < T::kSTiles; ++j) {
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (8 * j + (c & 1) >= lim) acc_s[mt][j][c] = NegInf();
    }
  }
}

// Online softmax (FragmentSoftmax::Update per m-tile: one FFMA and one ex2 per element,
// p = 2^(s scale - m scale)), turning S into P, then the earlier output rows rescaled by the
// change of their max (scratch: `alpha`).
template <class T>
__device__ __forceinline__ void UpdateSoftmax(
    common::FragmentSoftmax<T::kSTiles * 4> (&softmax)[T::kMTiles],
    float (&acc_s)[T::kMTiles][T::kSTiles][4], float (&acc_o)[T::kMTiles][T::kOTiles][4],
    float (&alpha)[2], float scale) {
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
    softmax[mt].Update(Flat(acc_s[mt]), scale, alpha);
    common::ScaleRows(Flat(acc_o[mt]), alpha);
  }
}

// O += P V, P (fp16) straight from the S accumulators (scratch: `a`, P's A fragments); each V
// fragment feeds every m-tile.
template <class T>
__device__ __forceinline__ void AccumulatePV(float (&acc_o)[T::kMTiles][T::kOTiles][4],
                                             const float (&acc_s)[T::kMTiles][T::kSTiles][4],
                                             uint32_t (&a)[T::kMTiles][4], const __half* v_s,
                                             int lane) {
#pragma unroll
  for (int kk = 0; kk < T::kPvSteps; ++kk) {
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt)
      mma::AccumToA(a[mt], acc_s[mt][2 * kk], acc_s[mt][2 * kk + 1]);
#pragma unroll
    for (int jd = 0; jd < T::kHeadDim / 16; ++jd) {
      uint32_t b[4];
      mma::LoadBFromKN(b, v_s + kk * 16 * T::kStride + jd * 16, T::kStride, lane);
      mma::MmaNPair(acc_o, a, b, jd);
    }
  }
}

// The epilogue with split == 1: normalise, stage the warp's rows in its own rows of the Q tile
// (only this warp read them, into q_frag, before the loop), then write 16-byte chunks of
// rows < L.
template <class T>
__device__ __forceinline__ void StoreNormalisedRows(const BlockSparseParams& p,
                                                    const float (&acc_o)[T::kMTiles][T::kOTiles][4],
                                                    const float (&l_full)[T::kMTiles][2],
                                                    __half* q_s, __half* oh, int q_row0, int wrow,
                                                    int L, int g, int t, int lane) {
  __half* const os = q_s + wrow * T::kStride;
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float inv = l_full[mt][h] > 0.f ? __frcp_rn(l_full[mt][h]) : 0.f;
#pragma unroll
      for (int j = 0; j < T::kOTiles; ++j) {
        *reinterpret_cast<__half2*>(os + (16 * mt + g + 8 * h) * T::kStride + 8 * j + 2 * t) =
            __floats2half2_rn(acc_o[mt][j][2 * h] * inv, acc_o[mt][j][2 * h + 1] * inv);
      }
    }
  }
  __syncwarp();
  for (int c = lane; c < T::kWarpRows * T::kChunksPerRow; c += 32) {
    const int r = c / T::kChunksPerRow;
    const int col = (c % T::kChunksPerRow) * 8;
    const int gr = q_row0 + wrow + r;
    if (gr < L) {
      *reinterpret_cast<uint4*>(oh + static_cast<size_t>(gr) * p.o_ld + col) =
          *reinterpret_cast<const uint4*>(os + r * T::kStride + col);
    }
  }
}

// split > 1, before the barrier: the warp's unnormalised O rows into its group's O partials,
// mo [split][BLOCK_M][kMergeStride] fp32, and each row's (max, full sum) into the pairs
// ml [split][BLOCK_M][2], the max in base-2 units (m * scale).
template <class T>
__device__ __forceinline__ void StoreMergePartials(
    const BlockSparseParams& p, const float (&acc_o)[T::kMTiles][T::kOTiles][4],
    const common::FragmentSoftmax<T::kSTiles * 4> (&softmax)[T::kMTiles],
    const float (&l_full)[T::kMTiles][2], float* mo, float* ml, int group, int wrow, int g, int t,
    float scale) {
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wrow + 16 * mt + g + 8 * h;
      float* const dst = mo + (static_cast<size_t>(group) * p.block_m + r) * T::kMergeStride;
#pragma unroll
      for (int j = 0; j < T::kOTiles; ++j)
        *reinterpret_cast<float2*>(dst + 8 * j + 2 * t) =
            make_float2(acc_o[mt][j][2 * h], acc_o[mt][j][2 * h + 1]);
      if (t == 0) {
        ml[(group * p.block_m + r) * 2] = softmax[mt].row_max[h] * scale;
        ml[(group * p.block_m + r) * 2 + 1] = l_full[mt][h];
      }
    }
  }
}

// split > 1, after the barrier: the block's threads merge 16-byte chunks of the rows < L over
// the groups' partials, normalise and write them (scratch: `out`, one chunk).
template <class T>
__device__ __forceinline__ void MergePartials(const BlockSparseParams& p, const float* mo,
                                              const float* ml, __half* oh, int q_row0, int L,
                                              int tid, int nthreads, float (&out)[8]) {
  for (int c = tid; c < p.block_m * T::kChunksPerRow; c += nthreads) {
    const int r = c / T::kChunksPerRow;
    const int col = (c % T::kChunksPerRow) * 8;
    const int gr = q_row0 + r;
    if (gr >= L) continue;
    float m_all = NegInf();
    for (int grp = 0; grp < p.split; ++grp) m_all = fmaxf(m_all, ml[(grp * p.block_m + r) * 2]);
    out[0] = out[1] = out[2] = out[3] = out[4] = out[5] = out[6] = out[7] = 0.f;
    if (m_all != NegInf()) {
      // The group holding the max has sum >= 1 (its max element contributes 2^0), so
      // l_all >= 1; groups that saw nothing for this row have max -inf and weight 0.
      float l_all = 0.f;
      for (int grp = 0; grp < p.split; ++grp) {
        const float w = mma::FastExp2(ml[(grp * p.block_m + r) * 2] - m_all);
        l_all += w * ml[(grp * p.block_m + r) * 2 + 1];
        const float* const src =
            mo + (static_cast<size_t>(grp) * p.block_m + r) * T::kMergeStride + col;
#pragma unroll
        for (int i = 0; i < 8; ++i) out[i] += w * src[i];
      }
      const float inv = __frcp_rn(l_all);
#pragma unroll
      for (int i = 0; i < 8; ++i) out[i] *= inv;
    }
    uint4 packed;
    packed.x = mma::PackHalf2(out[0], out[1]);
    packed.y = mma::PackHalf2(out[2], out[3]);
    packed.z = mma::PackHalf2(out[4], out[5]);
    packed.w = mma::PackHalf2(out[6], out[7]);
    *reinterpret_cast<uint4*>(oh + static_cast<size_t>(gr) * p.o_ld + col) = packed;
  }
}

}  // namespace stof::kernels::detail
