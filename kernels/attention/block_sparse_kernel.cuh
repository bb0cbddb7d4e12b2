// The block-wise BSR sparse attention kernel (STOF's block-wise MHA kernel) as a template over
// the head size and BLOCK_N, and its launcher. Included only by the two instantiation files
// (block_sparse_attention_d64.cu, _d128.cu); the host dispatch sees block_sparse_variant.h.
//
// One thread block computes BLOCK_M query rows of one (batch, head). Its warps form `split`
// groups of BLOCK_M / 16 warps; inside a group each warp owns 16 query rows, and group g
// takes valid K/V blocks g, g + split, g + 2 split, ... of the block row (the load CSR of the
// BlockLayout), so BLOCK_M and num_warps are run-time values and only (d, BLOCK_N) are
// template parameters. Per valid block a warp computes S = Q K^T (mma.sync m16n8k16, fp32),
// masks it (full blocks: only the ragged column edge; part blocks: the stored bitmap), does
// the online-softmax update in fp32 (base 2), and accumulates O += P V with P kept in
// registers. With split > 1 the groups' partial (max, sum, O) are merged through shared
// memory at the end.
// Pipeline: cp.async (16 B, zero-fill past L) loads step s + 1's K/V tiles into the other
// stage while step s computes; one commit group per step; two __syncthreads per step.
// Shared memory rows are padded by 16 bytes (kSmemPadHalves), so the 8 row addresses of
// every ldmatrix fall into distinct 16-byte bank groups.
// Invariants: see block_sparse_variant.h; the kernel trusts them (validated on the host).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/attention/block_sparse_variant.h"
#include "kernels/attention/mma_helpers.cuh"
#include "kernels/cuda_check.h"

namespace stof::kernels::detail {

template <int kHeadDim, int kBlockN>
struct BlockSparseTraits {
  static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim: 64 or 128");
  static_assert(kBlockN == 16 || kBlockN == 32 || kBlockN == 64 || kBlockN == 128,
                "BLOCK_N: 16, 32, 64 or 128");
  static constexpr int kMaxThreads = 256;                    // 8 warps
  static constexpr int kStride = kHeadDim + kSmemPadHalves;  // halves per smem row
  static_assert((kStride * 2) % 16 == 0, "smem rows must stay 16-byte aligned for ldmatrix");
  static_assert(((kStride * 2 / 16) & 1) == 1,
                "row stride must be an odd number of 16-byte units: conflict-free ldmatrix");
  static constexpr int kChunksPerRow = kHeadDim / 8;  // 16-byte chunks per row
  static constexpr int kQkSteps = kHeadDim / 16;      // k-steps of Q K^T
  static constexpr int kSTiles = kBlockN / 8;         // n-tiles of S (16 x 8 each)
  static constexpr int kPvSteps = kBlockN / 16;       // k-steps of P V
  static constexpr int kOTiles = kHeadDim / 8;        // n-tiles of O
  static constexpr int kMergeStride = kHeadDim + 8;   // floats per row of a merge partial
  static constexpr int kBitWords = kBlockN > 64 ? kBlockN / 64 : 1;  // bitmap words per row
  static constexpr int kTileHalves = kBlockN * kStride;              // one K or V tile
};

__device__ __forceinline__ float NegInf() { return __int_as_float(0xff800000u); }

template <int kHeadDim, int kBlockN>
__global__ void __launch_bounds__(BlockSparseTraits<kHeadDim, kBlockN>::kMaxThreads)
    BlockSparseAttentionKernel(const BlockSparseParams p) {
  using T = BlockSparseTraits<kHeadDim, kBlockN>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* const q_s = reinterpret_cast<__half*>(smem_raw);
  __half* const kv_s = q_s + p.block_m * T::kStride;  // [stage][group][K | V][BLOCK_N][kStride]

  const int tid = static_cast<int>(threadIdx.x);
  const int nthreads = static_cast<int>(blockDim.x);
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;  // groupID of the mma fragments
  const int t = lane & 3;   // threadID_in_group
  const int qb = static_cast<int>(blockIdx.x % static_cast<unsigned>(p.block_rows));
  const int64_t bh = static_cast<int64_t>(blockIdx.x / static_cast<unsigned>(p.block_rows));
  const int L = p.seq_len;
  const size_t head_off = static_cast<size_t>(bh) * static_cast<size_t>(L) * kHeadDim;
  const __half* const qh = static_cast<const __half*>(p.q) + head_off;
  const __half* const kh = static_cast<const __half*>(p.k) + head_off;
  const __half* const vh = static_cast<const __half*>(p.v) + head_off;
  __half* const oh = static_cast<__half*>(p.o) + head_off;
  const int q_row0 = qb * p.block_m;
  const int e_begin = p.load_row_ptr[qb];
  const int n_blocks = p.load_row_ptr[qb + 1] - e_begin;

  if (n_blocks == 0) {
    // Nothing attended in this block row: zeros (the reference's fully masked rows). The
    // condition is uniform over the block, so returning before any barrier is safe.
    for (int c = tid; c < p.block_m * T::kChunksPerRow; c += nthreads) {
      const int r = c / T::kChunksPerRow;
      if (q_row0 + r < L) {
        *reinterpret_cast<uint4*>(oh + static_cast<size_t>(q_row0 + r) * kHeadDim +
                                  (c % T::kChunksPerRow) * 8) = make_uint4(0, 0, 0, 0);
      }
    }
    return;
  }

  const int group = warp / p.warps_per_group;
  const int wrow = (warp % p.warps_per_group) * 16;  // this warp's first row in the Q tile

  // ---- cp.async producers (all threads) ----
  // Rows past L are zero-filled: Q so padded rows give finite (unused) scores, K/V so that a
  // masked column's p = 0 never meets NaN/inf garbage in 0 * V.
  auto load_q = [&]() {
    for (int c = tid; c < p.block_m * T::kChunksPerRow; c += nthreads) {
      const int r = c / T::kChunksPerRow;
      const int col = (c % T::kChunksPerRow) * 8;
      const int gr = q_row0 + r;
      const bool ok = gr < L;
      mma::CpAsync16(q_s + r * T::kStride + col,
                     qh + (ok ? static_cast<size_t>(gr) * kHeadDim + col : 0), ok);
    }
  };
  auto load_kv = [&](int step, int stage) {
    constexpr int kPerTile = kBlockN * T::kChunksPerRow;
    for (int c = tid; c < p.split * kPerTile; c += nthreads) {
      const int grp = c / kPerTile;
      const int e = step * p.split + grp;
      if (e >= n_blocks) continue;  // this group has no block at this step
      const int rem = c % kPerTile;
      const int r = rem / T::kChunksPerRow;
      const int col = (rem % T::kChunksPerRow) * 8;
      const int gr = p.load_col_idx[e_begin + e] * kBlockN + r;
      const bool ok = gr < L;
      const size_t off = ok ? static_cast<size_t>(gr) * kHeadDim + col : 0;
      __half* const k_dst =
          kv_s + (stage * p.split + grp) * 2 * T::kTileHalves + r * T::kStride + col;
      mma::CpAsync16(k_dst, kh + off, ok);
      mma::CpAsync16(k_dst + T::kTileHalves, vh + off, ok);
    }
  };

  const int steps = (n_blocks + p.split - 1) / p.split;
  load_q();
  mma::CpAsyncCommit();
  load_kv(0, 0);
  mma::CpAsyncCommit();
  mma::CpAsyncWait<1>();  // the Q group is done; step 0's K/V may still be in flight
  __syncthreads();

  uint32_t q_frag[T::kQkSteps][4];
#pragma unroll
  for (int kk = 0; kk < T::kQkSteps; ++kk)
    mma::LoadA(q_frag[kk], q_s + wrow * T::kStride + kk * 16, T::kStride, lane);

  float acc_o[T::kOTiles][4];
#pragma unroll
  for (int j = 0; j < T::kOTiles; ++j) acc_o[j][0] = acc_o[j][1] = acc_o[j][2] = acc_o[j][3] = 0.f;
  // Per thread: rows g (h = 0) and g + 8 (h = 1) of the warp's 16. m_run is the running max
  // in base-2 units (the same in the 4 lanes of a quad); l_run this thread's partial sum.
  float m_run[2] = {NegInf(), NegInf()};
  float l_run[2] = {0.f, 0.f};
  const int row_in_block[2] = {wrow + g, wrow + g + 8};

  for (int s = 0; s < steps; ++s) {
    const int stage = s & 1;
    if (s + 1 < steps) {
      load_kv(s + 1, stage ^ 1);  // that stage was released by the barrier ending step s - 1
      mma::CpAsyncCommit();
      mma::CpAsyncWait<1>();
    } else {
      mma::CpAsyncWait<0>();
    }
    __syncthreads();  // step s's tiles, written by every thread's cp.async, are visible

    const int e = s * p.split + group;
    if (e < n_blocks) {  // uniform per warp: the mma/ldmatrix/shuffles below need all lanes
      const __half* const k_s = kv_s + (stage * p.split + group) * 2 * T::kTileHalves;
      const __half* const v_s = k_s + T::kTileHalves;
      const int kb = p.load_col_idx[e_begin + e];
      const int part = p.load_part_idx[e_begin + e];

      // S = Q K^T for the warp's 16 rows x BLOCK_N columns.
      float acc_s[T::kSTiles][4];
#pragma unroll
      for (int j = 0; j < T::kSTiles; ++j)
        acc_s[j][0] = acc_s[j][1] = acc_s[j][2] = acc_s[j][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < T::kQkSteps; ++kk) {
#pragma unroll
        for (int jj = 0; jj < kBlockN / 16; ++jj) {
          uint32_t b[4];
          mma::LoadBFromNK(b, k_s + jj * 16 * T::kStride + kk * 16, T::kStride, lane);
          mma::Mma16816(acc_s[2 * jj], q_frag[kk], b[0], b[1]);
          mma::Mma16816(acc_s[2 * jj + 1], q_frag[kk], b[2], b[3]);
        }
      }

      // Mask and scale. Element (j, c) of acc_s is row g + 8 (c >> 1), column
      // 8 j + 2 t + (c & 1) of the block. Part blocks: the bitmap row (BLOCK_N bits at bit
      // row * BLOCK_N; padding bits are zero). Every block: columns at or past L (only the
      // last block column can have them, and it can be "full").
      const int key0 = kb * kBlockN;
      const bool ragged = key0 + kBlockN > L;
      uint64_t bits[2][T::kBitWords];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int w = 0; w < T::kBitWords; ++w) bits[h][w] = ~uint64_t{0};
      }
      if (part >= 0) {
        const uint64_t* const bm =
            p.part_bitmaps + static_cast<size_t>(part) * static_cast<size_t>(p.bitmap_words);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int bit0 = row_in_block[h] * kBlockN;
          if constexpr (kBlockN <= 64) {
            bits[h][0] = __ldg(bm + (bit0 >> 6)) >> (bit0 & 63);
          } else {
#pragma unroll
            for (int w = 0; w < T::kBitWords; ++w) bits[h][w] = __ldg(bm + (bit0 >> 6) + w);
          }
        }
      }
#pragma unroll
      for (int j = 0; j < T::kSTiles; ++j) {
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int h = c >> 1;
          const int col = 8 * j + 2 * t + (c & 1);
          // j is a compile-time index: the word is known statically; col & 63 < 64.
          const bool in_bitmap = (bits[h][(8 * j) >> 6] >> (col & 63)) & 1u;
          const bool ok = in_bitmap && (!ragged || key0 + col < L);
          acc_s[j][c] = ok ? acc_s[j][c] * p.scale_log2 : NegInf();
        }
      }

      // Online softmax: new row max over this block (quad shuffles: the 4 lanes of a quad
      // share rows g and g + 8), rescale the old state, exponentiate in place.
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = m_run[h];
#pragma unroll
        for (int j = 0; j < T::kSTiles; ++j)
          mx = fmaxf(mx, fmaxf(acc_s[j][2 * h], acc_s[j][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        // A row with nothing attended so far keeps max -inf; subtract 0 instead so that
        // exp2(-inf - (-inf)) = NaN never happens (every p and alpha is then 0, O and l stay 0).
        const float m_use = mx == NegInf() ? 0.f : mx;
        const float alpha = mma::FastExp2(m_run[h] - m_use);
        m_run[h] = mx;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < T::kSTiles; ++j) {
          acc_s[j][2 * h] = mma::FastExp2(acc_s[j][2 * h] - m_use);
          acc_s[j][2 * h + 1] = mma::FastExp2(acc_s[j][2 * h + 1] - m_use);
          sum += acc_s[j][2 * h] + acc_s[j][2 * h + 1];
        }
        l_run[h] = l_run[h] * alpha + sum;
#pragma unroll
        for (int j = 0; j < T::kOTiles; ++j) {
          acc_o[j][2 * h] *= alpha;
          acc_o[j][2 * h + 1] *= alpha;
        }
      }

      // O += P V, P (fp16) straight from the S accumulators.
#pragma unroll
      for (int kk = 0; kk < T::kPvSteps; ++kk) {
        uint32_t a[4];
        mma::AccumToA(a, acc_s[2 * kk], acc_s[2 * kk + 1]);
#pragma unroll
        for (int jd = 0; jd < kHeadDim / 16; ++jd) {
          uint32_t b[4];
          mma::LoadBFromKN(b, v_s + kk * 16 * T::kStride + jd * 16, T::kStride, lane);
          mma::Mma16816(acc_o[2 * jd], a, b[0], b[1]);
          mma::Mma16816(acc_o[2 * jd + 1], a, b[2], b[3]);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before step s + 1 refills it
  }

  // Full row sums: the 4 lanes of a quad hold disjoint columns of the same rows.
  float l_full[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_run[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    l_full[h] = l;
  }

  if (p.split == 1) {
    // Normalise, stage the warp's 16 rows in its own rows of the Q tile (only this warp read
    // them, into q_frag, before the loop), then write 16-byte chunks of rows < L.
    const float inv[2] = {l_full[0] > 0.f ? __frcp_rn(l_full[0]) : 0.f,
                          l_full[1] > 0.f ? __frcp_rn(l_full[1]) : 0.f};
    __half* const os = q_s + wrow * T::kStride;
#pragma unroll
    for (int j = 0; j < T::kOTiles; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        *reinterpret_cast<__half2*>(os + (g + 8 * h) * T::kStride + 8 * j + 2 * t) =
            __floats2half2_rn(acc_o[j][2 * h] * inv[h], acc_o[j][2 * h + 1] * inv[h]);
      }
    }
    __syncwarp();
    for (int c = lane; c < 16 * T::kChunksPerRow; c += 32) {
      const int r = c / T::kChunksPerRow;
      const int col = (c % T::kChunksPerRow) * 8;
      const int gr = q_row0 + wrow + r;
      if (gr < L) {
        *reinterpret_cast<uint4*>(oh + static_cast<size_t>(gr) * kHeadDim + col) =
            *reinterpret_cast<const uint4*>(os + r * T::kStride + col);
      }
    }
    return;
  }

  // split > 1: merge the groups' partials through shared memory, reusing the K/V stages (the
  // barrier ending the last step ordered every read of them; wait_group 0 left no copy in
  // flight). Layout: O partials [split][BLOCK_M][kMergeStride] fp32, then (max, sum) pairs
  // [split][BLOCK_M][2].
  float* const mo = reinterpret_cast<float*>(kv_s);
  float* const ml = mo + static_cast<size_t>(p.split) * p.block_m * T::kMergeStride;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row_in_block[h];
    float* const dst = mo + (static_cast<size_t>(group) * p.block_m + r) * T::kMergeStride;
#pragma unroll
    for (int j = 0; j < T::kOTiles; ++j)
      *reinterpret_cast<float2*>(dst + 8 * j + 2 * t) =
          make_float2(acc_o[j][2 * h], acc_o[j][2 * h + 1]);
    if (t == 0) {
      ml[(group * p.block_m + r) * 2] = m_run[h];
      ml[(group * p.block_m + r) * 2 + 1] = l_full[h];
    }
  }
  __syncthreads();
  for (int c = tid; c < p.block_m * T::kChunksPerRow; c += nthreads) {
    const int r = c / T::kChunksPerRow;
    const int col = (c % T::kChunksPerRow) * 8;
    const int gr = q_row0 + r;
    if (gr >= L) continue;
    float m_all = NegInf();
    for (int grp = 0; grp < p.split; ++grp) m_all = fmaxf(m_all, ml[(grp * p.block_m + r) * 2]);
    float out[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
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
    *reinterpret_cast<uint4*>(oh + static_cast<size_t>(gr) * kHeadDim + col) = packed;
  }
}

template <int kHeadDim, int kBlockN>
engine::Status LaunchBlockSparseVariant(const BlockSparseParams& p, size_t smem_bytes,
                                        void* stream) {
  auto* kernel = &BlockSparseAttentionKernel<kHeadDim, kBlockN>;
  // Above 48 KiB a kernel must opt in to its dynamic shared memory size.
  if (smem_bytes > 48 * 1024) {
    STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem_bytes)));
  }
  const unsigned threads = 32u * static_cast<unsigned>(p.warps_per_group * p.split);
  kernel<<<static_cast<unsigned>(p.grid_blocks), threads, smem_bytes,
           static_cast<cudaStream_t>(stream)>>>(p);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace stof::kernels::detail
