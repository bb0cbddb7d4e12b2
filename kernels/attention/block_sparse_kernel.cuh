// The block-wise BSR sparse attention kernel (STOF's block-wise MHA kernel) as a template over
// the head size, BLOCK_N and the 16-row m-tiles each warp owns, and its launcher. Included
// only by the instantiation files (block_sparse_attention_d64.cu, _d128.cu); the host
// dispatch sees block_sparse_variant.h.
//
// One thread block computes BLOCK_M query rows of one (batch, head). Each warp owns kMTiles
// 16-row m-tiles (16 or 32 query rows); the warps form `split` groups of
// BLOCK_M / (16 kMTiles) warps, and group g takes valid K/V blocks g, g + split, ... of the
// block row (the load CSR of the BlockLayout), so BLOCK_M and num_warps stay run-time values.
// Per valid block a warp computes S = Q K^T (mma.sync m16n8k16, fp32), masks it (part blocks:
// the stored bitmap; the last block column: the ragged edge; full blocks: nothing), does the
// online-softmax update in fp32 with the scale folded into exp2's FFMA (the shared
// FragmentSoftmax of kernels/common/fragment_softmax.cuh, one per m-tile), and accumulates
// O += P V with P kept in registers. With split > 1 the groups' partial (max, sum, O) are
// merged through shared memory at the end. With kMTiles = 2 every K/V fragment read from
// shared memory feeds two MMAs (half the ldmatrix traffic per MMA).
// Why it is written this way (ncu on an H100, sliding window L4096 B16 d64 at
// 64x64, 4 warps, the first version): 130 registers (3 blocks per SM), 0.49 instructions
// issued per scheduler cycle and 40 % of stalls on fixed-latency ALU dependencies: the
// per-element mask arithmetic (a 64-bit variable shift per element, even on full blocks) and
// per-chunk index loads fed the issue slots, not the tensor pipe. Hence: no mask work on full
// blocks, one shift per row and constant bit tests on part blocks, indices loaded once per
// tile, scale folded into the exponent.
// Pipeline: cp.async (16 B, zero-fill past L) loads step s + 1's K/V tiles into the other
// stage while step s computes; one commit group per step; two __syncthreads per step.
// Shared memory rows are padded by 16 bytes (kSmemPadHalves), so the 8 row addresses of
// every ldmatrix fall into distinct 16-byte bank groups.
// Invariants: see block_sparse_variant.h; the kernel trusts them (validated on the host).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/attention/block_sparse_variant.h"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/mma_sync.cuh"
#include "kernels/cuda_check.h"

namespace stof::kernels::detail {

template <int kHeadDim, int kBlockN, int kMTiles>
struct BlockSparseTraits {
  static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim: 64 or 128");
  static_assert(kBlockN == 16 || kBlockN == 32 || kBlockN == 64 || kBlockN == 128,
                "BLOCK_N: 16, 32, 64 or 128");
  static_assert(kMTiles == 1 || kMTiles == 2, "a warp owns 16 or 32 query rows");
  static constexpr int kMaxThreads = 256;                    // 8 warps
  // Register budget: 128 per thread (4 blocks of 128 threads per SM) where the accumulators
  // fit in it without spills (d = 64, 16 rows per warp, BLOCK_N <= 64: 96-128 registers with
  // nvcc 13 for sm_90); the rest get up to 255 (147-242).
  static constexpr int kMinBlocks = (kHeadDim == 64 && kMTiles == 1 && kBlockN <= 64) ? 2 : 1;
  static constexpr int kWarpRows = 16 * kMTiles;
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

using common::NegInf;

// An m-tile's accumulators [n-tiles][4] as the flat array the fragment helpers take (the same
// registers: element (j, c) is flat 4 j + c, the layout fragment_softmax.cuh describes).
template <int kTiles>
__device__ __forceinline__ float (&Flat(float (&acc)[kTiles][4]))[kTiles * 4] {
  return reinterpret_cast<float(&)[kTiles * 4]>(acc);
}

template <int kHeadDim, int kBlockN, int kMTiles>
__global__ void __launch_bounds__(BlockSparseTraits<kHeadDim, kBlockN, kMTiles>::kMaxThreads,
                                  BlockSparseTraits<kHeadDim, kBlockN, kMTiles>::kMinBlocks)
    BlockSparseAttentionKernel(const BlockSparseParams p) {
  using T = BlockSparseTraits<kHeadDim, kBlockN, kMTiles>;
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
  const int64_t b_idx = bh / p.heads, h_idx = bh % p.heads;
  const __half* const qh = static_cast<const __half*>(p.q) + b_idx * p.q_sb + h_idx * p.q_sh;
  const __half* const kh = static_cast<const __half*>(p.k) + b_idx * p.kv_sb + h_idx * p.kv_sh;
  const __half* const vh = static_cast<const __half*>(p.v) + b_idx * p.kv_sb + h_idx * p.kv_sh;
  __half* const oh = static_cast<__half*>(p.o) + b_idx * p.o_sb + h_idx * p.o_sh;
  const int q_row0 = qb * p.block_m;
  const int e_begin = __ldg(p.load_row_ptr + qb);
  const int n_blocks = __ldg(p.load_row_ptr + qb + 1) - e_begin;

  if (n_blocks == 0) {
    // Nothing attended in this block row: zeros (the reference's fully masked rows). The
    // condition is uniform over the block, so returning before any barrier is safe.
    for (int c = tid; c < p.block_m * T::kChunksPerRow; c += nthreads) {
      const int r = c / T::kChunksPerRow;
      if (q_row0 + r < L) {
        *reinterpret_cast<uint4*>(oh + static_cast<size_t>(q_row0 + r) * p.o_ld +
                                  (c % T::kChunksPerRow) * 8) = make_uint4(0, 0, 0, 0);
      }
    }
    return;
  }

  const int group = warp / p.warps_per_group;
  const int wrow = (warp % p.warps_per_group) * T::kWarpRows;  // warp's first row in the tile

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
                     qh + (ok ? static_cast<size_t>(gr) * p.q_ld + col : 0), ok);
    }
  };
  // Every thread copies chunks of every group's tiles; the block index is read once per tile.
  auto load_kv = [&](int step, int stage) {
    constexpr int kPerTile = kBlockN * T::kChunksPerRow;
    for (int grp = 0; grp < p.split; ++grp) {
      const int e = step * p.split + grp;
      if (e >= n_blocks) break;  // later groups of this step have no block either
      const int key0 = __ldg(p.load_col_idx + e_begin + e) * kBlockN;
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
  };

  const int steps = (n_blocks + p.split - 1) / p.split;
  load_q();
  mma::CpAsyncCommit();
  load_kv(0, 0);
  mma::CpAsyncCommit();
  mma::CpAsyncWait<1>();  // the Q group is done; step 0's K/V may still be in flight
  __syncthreads();

  uint32_t q_frag[kMTiles][T::kQkSteps][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int kk = 0; kk < T::kQkSteps; ++kk)
      mma::LoadA(q_frag[mt][kk], q_s + (wrow + 16 * mt) * T::kStride + kk * 16, T::kStride,
                 lane);
  }

  float acc_o[kMTiles][T::kOTiles][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int j = 0; j < T::kOTiles; ++j)
      acc_o[mt][j][0] = acc_o[mt][j][1] = acc_o[mt][j][2] = acc_o[mt][j][3] = 0.f;
  }
  // Per m-tile the online softmax of the thread's rows g and g + 8 (fragment_softmax.cuh:
  // running max of the raw scores, partial sum of 2^(scale_log2 (s - max))).
  common::FragmentSoftmax<T::kSTiles * 4> softmax[kMTiles];
  const float scale = p.scale_log2;

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
      const int key0 = __ldg(p.load_col_idx + e_begin + e) * kBlockN;
      const int part = __ldg(p.load_part_idx + e_begin + e);

      // S = Q K^T for the warp's rows x BLOCK_N columns; each K fragment feeds every m-tile.
      float acc_s[kMTiles][T::kSTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int j = 0; j < T::kSTiles; ++j)
          acc_s[mt][j][0] = acc_s[mt][j][1] = acc_s[mt][j][2] = acc_s[mt][j][3] = 0.f;
      }
#pragma unroll
      for (int kk = 0; kk < T::kQkSteps; ++kk) {
#pragma unroll
        for (int jj = 0; jj < kBlockN / 16; ++jj) {
          uint32_t b[4];
          mma::LoadBFromNK(b, k_s + jj * 16 * T::kStride + kk * 16, T::kStride, lane);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            mma::Mma16816(acc_s[mt][2 * jj], q_frag[mt][kk], b[0], b[1]);
            mma::Mma16816(acc_s[mt][2 * jj + 1], q_frag[mt][kk], b[2], b[3]);
          }
        }
      }

      // Masking. Element (j, c) of acc_s[mt] is row 16 mt + g + 8 (c >> 1) of the warp,
      // column 8 j + 2 t + (c & 1) of the block. Part blocks: the bitmap row (BLOCK_N bits at
      // bit row * BLOCK_N; padding bits are zero), shifted once by 2 t so that each element
      // tests the constant bit 8 j + (c & 1). The last block column: keys at or past L.
      // Full blocks inside L skip both (uniform branches).
      if (part >= 0) {
        const uint64_t* const bm =
            p.part_bitmaps + static_cast<size_t>(part) * static_cast<size_t>(p.bitmap_words);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int bit0 = (wrow + 16 * mt + g + 8 * h) * kBlockN;
            uint64_t bits[T::kBitWords];
            if constexpr (kBlockN <= 64) {
              bits[0] = __ldg(bm + (bit0 >> 6)) >> ((bit0 & 63) + 2 * t);
            } else {
#pragma unroll
              for (int w = 0; w < T::kBitWords; ++w)
                bits[w] = __ldg(bm + (bit0 >> 6) + w) >> (2 * t);
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
      if (key0 + kBlockN > L) {
        const int lim = L - key0 - 2 * t;  // element (j, c) is valid iff 8 j + (c & 1) < lim
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
          for (int j = 0; j < T::kSTiles; ++j) {
#pragma unroll
            for (int c = 0; c < 4; ++c)
              if (8 * j + (c & 1) >= lim) acc_s[mt][j][c] = NegInf();
          }
        }
      }

      // Online softmax (one FFMA and one ex2 per element: p = 2^(s scale - m scale)), then the
      // earlier output rows rescaled by the change of their max.
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        float alpha[2];
        softmax[mt].Update(Flat(acc_s[mt]), scale, alpha);
        common::ScaleRows(Flat(acc_o[mt]), alpha);
      }

      // O += P V, P (fp16) straight from the S accumulators; each V fragment feeds every
      // m-tile.
#pragma unroll
      for (int kk = 0; kk < T::kPvSteps; ++kk) {
        uint32_t a[kMTiles][4];
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
          mma::AccumToA(a[mt], acc_s[mt][2 * kk], acc_s[mt][2 * kk + 1]);
#pragma unroll
        for (int jd = 0; jd < kHeadDim / 16; ++jd) {
          uint32_t b[4];
          mma::LoadBFromKN(b, v_s + kk * 16 * T::kStride + jd * 16, T::kStride, lane);
          mma::MmaNPair(acc_o, a, b, jd);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before step s + 1 refills it
  }

  // Full row sums: the 4 lanes of a quad hold disjoint columns of the same rows.
  float l_full[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) softmax[mt].RowSums(l_full[mt]);

  if (p.split == 1) {
    // Normalise, stage the warp's rows in its own rows of the Q tile (only this warp read
    // them, into q_frag, before the loop), then write 16-byte chunks of rows < L.
    __half* const os = q_s + wrow * T::kStride;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
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
    return;
  }

  // split > 1: merge the groups' partials through shared memory, reusing the K/V stages (the
  // barrier ending the last step ordered every read of them; wait_group 0 left no copy in
  // flight). Layout: O partials [split][BLOCK_M][kMergeStride] fp32, then (max, sum) pairs
  // [split][BLOCK_M][2], the max in base-2 units (m * scale).
  float* const mo = reinterpret_cast<float*>(kv_s);
  float* const ml = mo + static_cast<size_t>(p.split) * p.block_m * T::kMergeStride;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
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
    *reinterpret_cast<uint4*>(oh + static_cast<size_t>(gr) * p.o_ld + col) = packed;
  }
}

template <int kHeadDim, int kBlockN, int kMTiles>
engine::Status LaunchBlockSparseVariant(const BlockSparseParams& p, size_t smem_bytes,
                                        int device, int smem_optin, void* stream) {
  auto* kernel = &BlockSparseAttentionKernel<kHeadDim, kBlockN, kMTiles>;
  // Function attributes belong to a device, so they are set once per device (bit `device` of
  // `configured`), not on every launch: the opt-in dynamic shared memory up to the device's
  // per-block limit (above 48 KiB a kernel must opt in), and the largest shared-memory share
  // of L1 as carveout, so that registers, not a smaller carveout picked by the driver, decide
  // how many blocks share an SM (ncu reported both limits at 3 blocks per SM for the first
  // version's 46 KB, 130-register blocks). Two threads racing here set the same values.
  static std::atomic<uint64_t> configured{0};
  const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
  if (bit == 0 || (configured.load(std::memory_order_acquire) & bit) == 0) {
    STOF_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin));
    STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       static_cast<int>(cudaSharedmemCarveoutMaxShared)));
    configured.fetch_or(bit, std::memory_order_release);
  }
  const unsigned threads = 32u * static_cast<unsigned>(p.warps_per_group * p.split);
  kernel<<<static_cast<unsigned>(p.grid_blocks), threads, smem_bytes,
           static_cast<cudaStream_t>(stream)>>>(p);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace stof::kernels::detail
