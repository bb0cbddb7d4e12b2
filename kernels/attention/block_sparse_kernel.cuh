// The block-wise BSR sparse attention kernel (STOF's block-wise MHA kernel) as a template over
// the head size, BLOCK_N and the 16-row m-tiles each warp owns, and its launcher. Included
// only by the instantiation files (block_sparse_attention_d64.cu, _d64_rows32.cu, _d128.cu);
// the host dispatch sees block_sparse_variant.h. The kernel body is a sequence of inlined
// parts (load Q, the K/V pipeline steps, S = Q K^T, the masks, the softmax step, O += P V, the
// epilogues) defined in block_sparse_parts.cuh.
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

#include "kernels/attention/block_sparse_parts.cuh"
#include "kernels/attention/block_sparse_variant.h"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/cuda_check.h"

namespace stof::kernels::detail {

template <int kHeadDim_, int kBlockN_, int kMTiles_>
struct BlockSparseTraits {
  // The template arguments, for the parts (block_sparse_parts.cuh), which take the traits.
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kMTiles = kMTiles_;
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
    // The condition is uniform over the block, so returning before any barrier is safe.
    StoreBlockRowZeros<T>(p, oh, q_row0, L, tid, nthreads);
    return;
  }

  const int group = warp / p.warps_per_group;
  const int wrow = (warp % p.warps_per_group) * T::kWarpRows;  // warp's first row in the tile

  // The producers bound to this block's operands (lambdas, as the code was written: calling
  // the parts directly changes the PTX).
  auto load_q = [&]() { LoadQTile<T>(p, q_s, qh, q_row0, L, tid, nthreads); };
  auto load_kv = [&](int step, int stage) {
    LoadKvTiles<T>(p, kv_s, kh, vh, e_begin, n_blocks, step, stage, L, tid, nthreads);
  };

  const int steps = (n_blocks + p.split - 1) / p.split;
  StartPipeline(load_q, load_kv);

  uint32_t q_frag[kMTiles][T::kQkSteps][4];
  LoadQFragments<T>(q_frag, q_s, wrow, lane);
  float acc_o[kMTiles][T::kOTiles][4];
  mma::ZeroFragments(acc_o);
  // Per m-tile the online softmax of the thread's rows g and g + 8 (fragment_softmax.cuh:
  // running max of the raw scores, partial sum of 2^(scale_log2 (s - max))).
  common::FragmentSoftmax<T::kSTiles * 4> softmax[kMTiles];
  const float scale = p.scale_log2;

  for (int s = 0; s < steps; ++s) {
    const int stage = s & 1;
    AdvancePipeline(load_kv, s, steps, stage);

    const int e = s * p.split + group;
    if (e < n_blocks) {  // uniform per warp: the mma/ldmatrix/shuffles below need all lanes
      const __half* const k_s = kv_s + (stage * p.split + group) * 2 * T::kTileHalves;
      const __half* const v_s = k_s + T::kTileHalves;
      const int key0 = __ldg(p.load_col_idx + e_begin + e) * kBlockN;
      const int part = __ldg(p.load_part_idx + e_begin + e);

      // bits, alpha, a (and out below): the parts' scratch, declared here to keep the PTX.
      float acc_s[kMTiles][T::kSTiles][4];
      ComputeScores<T>(acc_s, q_frag, k_s, lane);
      // Masking: part blocks their bitmap, the last block column the ragged edge; full blocks
      // inside L skip both (uniform branches).
      uint64_t bits[T::kBitWords];
      if (part >= 0) ApplyPartMask<T>(acc_s, bits, p, part, wrow, g, t);
      if (key0 + kBlockN > L) ApplyKeyLimit<T>(acc_s, key0, L, t);
      float alpha[2];
      UpdateSoftmax<T>(softmax, acc_s, acc_o, alpha, scale);
      uint32_t a[kMTiles][4];
      AccumulatePV<T>(acc_o, acc_s, a, v_s, lane);
    }
    __syncthreads();  // every warp is done with this stage before step s + 1 refills it
  }

  // Full row sums: the 4 lanes of a quad hold disjoint columns of the same rows.
  float l_full[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) softmax[mt].RowSums(l_full[mt]);

  if (p.split == 1) {
    StoreNormalisedRows<T>(p, acc_o, l_full, q_s, oh, q_row0, wrow, L, g, t, lane);
    return;
  }

  // split > 1: merge the groups' partials through shared memory, reusing the K/V stages (the
  // barrier ending the last step ordered every read of them; wait_group 0 left no copy in
  // flight): O partials [split][BLOCK_M][kMergeStride] fp32 (mo), then (max, sum) pairs (ml).
  float* const mo = reinterpret_cast<float*>(kv_s);
  float* const ml = mo + static_cast<size_t>(p.split) * p.block_m * T::kMergeStride;
  StoreMergePartials<T>(p, acc_o, softmax, l_full, mo, ml, group, wrow, g, t, scale);
  __syncthreads();
  float out[8];
  MergePartials<T>(p, mo, ml, oh, q_row0, L, tid, nthreads, out);
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
