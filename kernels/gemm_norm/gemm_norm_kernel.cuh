// The fused GEMM + bias + residual + LayerNorm / RMSNorm kernel as a template over kBM (rows
// per block) and kWarpCols (the most columns one warp owns), and its launcher. Included only
// by the instantiation files gemm_norm_bm16.cu and gemm_norm_bm32.cu; the host dispatch
// (gemm_norm.cpp) sees gemm_norm_variant.h.
//
// One thread block owns kBM full rows of the output (all n columns); its `warps` warps split
// the n columns, warp i taking columns [i * warp_cols, (i + 1) * warp_cols), for all kBM rows.
// warp_cols = n / warps is a run-time value up to kWarpCols (the 16-column blocks past it are
// skipped by warp-uniform branches), so n, bk and stages stay run-time values and only
// (kBM, kWarpCols) are template parameters. The k loop runs a `stages`-deep cp.async pipeline
// of the A tile [kBM, bk] and the W tile [bk, n] (16-byte copies, zero-filled past m and k),
// one commit group and one __syncthreads per step; each step does mma.sync m16n8k16 (fp16 in,
// fp32 accumulators), A fragments by ldmatrix, W fragments by ldmatrix.trans (W is [k][n]).
// Every A fragment feeds warp_cols / 8 MMAs and every W fragment (one n8 tile) kBM / 16.
// The residual rows [kBM, n] go to a shared row tile: prefetched into a tile of their own with
// step 0's group when p.prefetch_residual (their latency hides behind the k loop), else
// loaded after the loop into the freed stages. Either way a block reads its residual rows
// completely before it writes any output, so `out` may alias `residual`. Epilogue, from the
// accumulators in registers: + bias + residual, the row mean (LayerNorm only), then the mean
// of squared deviations (two passes over registers, fp32; quad shuffles, then one shared
// slot per warp and row), normalise, * gamma (+ beta), fp16 into the row tile, then 16-byte
// coalesced stores of the rows < m.
// Shared memory rows are padded by 16 bytes (kGemmNormPadHalves): conflict-free ldmatrix and
// fragment stores. Invariants: gemm_norm_variant.h (validated on the host, trusted here).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/common/mma_sync.cuh"
#include "kernels/cuda_check.h"
#include "kernels/gemm_norm/gemm_norm_variant.h"

namespace stof::kernels::detail {

// Row sums over the whole block: `part` holds this thread's partial sums of rows
// 16 mt + g + 8 h; the 4 lanes of a quad hold disjoint columns of those rows (quad shuffles),
// the warps disjoint column ranges (one shared slot per warp and row in `red`, [warps][kBM],
// summed by every thread that needs the row). Contains a __syncthreads(): block-uniform calls.
template <int kMTiles, int kBM>
__device__ __forceinline__ void BlockRowSums(const float (&part)[kMTiles][2], float* red,
                                             int warp, int warps, int g, int t,
                                             float (&sum)[kMTiles][2]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float s = mma::QuadSum(part[mt][h]);
      if (t == 0) red[warp * kBM + 16 * mt + g + 8 * h] = s;
    }
  }
  __syncthreads();
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float s = 0.f;
      for (int wi = 0; wi < warps; ++wi) s += red[wi * kBM + 16 * mt + g + 8 * h];
      sum[mt][h] = s;
    }
  }
}

template <int kBM, int kWarpCols>
struct GemmNormTraits {
  static_assert(kBM == 16 || kBM == 32 || kBM == 64, "bm: 16, 32 or 64 rows per block");
  static_assert(kWarpCols >= 16 && kWarpCols % 16 == 0,
                "a warp's columns come in 16-wide blocks (one ldmatrix.x4.trans each)");
  static constexpr int kMTiles = kBM / 16;       // m16 tiles: every warp covers all kBM rows
  static constexpr int kNTiles = kWarpCols / 8;  // n8 tiles of one warp
  static constexpr int kBSteps = kWarpCols / 16;
  // Accumulators per thread: kBM * kWarpCols fp32 values over 32 lanes. At most 128 registers
  // for them leaves room for fragments and addresses under the 255-register limit; beyond
  // that nvcc spills the accumulators to local memory.
  static constexpr int kAccFloats = kMTiles * kNTiles * 4;
  static_assert(kAccFloats <= 128, "kBM * kWarpCols / 32 accumulators must fit in 128 registers");
  static constexpr int kMaxThreads = 256;  // 8 warps
  // Up to 64 accumulators: cap registers at 128 (two 8-warp blocks per SM where shared memory
  // allows, so one block's epilogue overlaps the other's k loop); above: up to 255, one block.
  static constexpr int kMinBlocks = kAccFloats <= 64 ? 2 : 1;
};

// Calls f(r, c) for each 16-byte chunk (row r, chunk c) of a rows x cpr grid that thread
// `tid` of `nthreads` owns: chunk indices tid, tid + nthreads, ... in row-major order. The
// (row, chunk) pair is stepped, not divided out per chunk (cpr is a run-time value).
template <class F>
__device__ __forceinline__ void ForEachChunk(int rows, int cpr, int tid, int nthreads, F&& f) {
  int r = tid / cpr;
  int c = tid - r * cpr;
  const int dr = nthreads / cpr;
  const int dc = nthreads - dr * cpr;
  while (r < rows) {
    f(r, c);
    r += dr;
    c += dc;
    if (c >= cpr) {
      c -= cpr;
      ++r;
    }
  }
}

// Waits until step s's group (and every older one) has landed: stages - 2 younger groups may
// stay in flight. cp.async.wait_group takes an immediate, hence the branches (uniform).
__device__ __forceinline__ void WaitForStep(int stages) {
  if (stages <= 2) {
    mma::CpAsyncWait<0>();
  } else if (stages == 3) {
    mma::CpAsyncWait<1>();
  } else {
    mma::CpAsyncWait<2>();
  }
}

// One pipeline step of a warp: acc += A tile [kBM, bk] x W tile [bk, its columns] (w_s points
// at the warp's first column). Every A fragment feeds 2 * bsteps MMAs and every W fragment
// kMTiles. kFull: bsteps == kBSteps, so no column block is skipped; otherwise blocks from
// bsteps on are skipped by warp-uniform branches (ldmatrix and mma need all 32 lanes).
template <class T, bool kFull>
__device__ __forceinline__ void MmaStep(float (&acc)[T::kMTiles][T::kNTiles][4], const __half* a_s,
                                        const __half* w_s, int a_stride, int w_stride, int bk,
                                        int bsteps, int lane) {
  for (int kk = 0; kk < bk; kk += 16) {
    uint32_t af[T::kMTiles][4];
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt)
      mma::LoadA(af[mt], a_s + mt * 16 * a_stride + kk, a_stride, lane);
#pragma unroll
    for (int jj = 0; jj < T::kBSteps; ++jj) {
      if (kFull || jj < bsteps) {
        uint32_t b[4];
        mma::LoadBFromKN(b, w_s + kk * w_stride + jj * 16, w_stride, lane);
        mma::MmaNPair(acc, af, b, jj);
      }
    }
  }
}

// What the parts of GemmNormKernel share: the sizes, the shared-memory layout and this
// thread's place in the block (GemmNormBlockOf, once at the kernel's start).
struct GemmNormBlock {
  int m, n, k, bk, stages, warps;
  int a_stride;      // halves per shared row of an A tile
  int w_stride;      // halves per shared row of a W tile and of the row tile
  int a_tile;        // halves of an A tile
  int stage_halves;  // halves of a stage: A tile, then W tile
  bool prefetch;     // p.prefetch_residual: the row tile is a tile of its own
  __half* pipe;      // the stages
  __half* rows_s;    // the row tile [kBM][w_stride]
  float* red_sum;    // [warps][kBM]
  float* red_sq;     // [warps][kBM]
  int tid, nthreads, warp, lane;
  int g;       // groupID of the mma fragments
  int t;       // threadID_in_group
  int row0;    // the block's first row
  int col0;    // the warp's first column
  int bsteps;  // this warp's 16-column blocks, <= kBSteps
};

// This thread's GemmNormBlock, the block's dynamic shared memory at smem_raw.
template <int kBM>
__device__ __forceinline__ GemmNormBlock GemmNormBlockOf(const GemmNormKernelParams& p,
                                                         unsigned char* smem_raw) {
  GemmNormBlock b;
  b.m = p.m;
  b.n = p.n;
  b.k = p.k;
  b.bk = p.bk;
  b.stages = p.stages;
  b.warps = p.warps;
  b.a_stride = b.bk + kGemmNormPadHalves;
  b.w_stride = b.n + kGemmNormPadHalves;
  b.a_tile = kBM * b.a_stride;
  b.stage_halves = b.a_tile + b.bk * b.w_stride;
  // Layout (GemmNormSmemBytesFor): [stage][A tile | W tile], the row tile when prefetching
  // the residual (else the row tile is the start of the stages, used after the k loop), the
  // statistics.
  b.prefetch = p.prefetch_residual;
  b.pipe = reinterpret_cast<__half*>(smem_raw);
  b.rows_s = b.prefetch ? b.pipe + b.stages * b.stage_halves : b.pipe;
  b.red_sum = reinterpret_cast<float*>(b.pipe + b.stages * b.stage_halves +
                                       (b.prefetch ? kBM * b.w_stride : 0));
  b.red_sq = b.red_sum + b.warps * kBM;
  b.tid = static_cast<int>(threadIdx.x);
  b.nthreads = static_cast<int>(blockDim.x);
  b.warp = b.tid >> 5;
  b.lane = b.tid & 31;
  b.g = b.lane >> 2;
  b.t = b.lane & 3;
  b.row0 = static_cast<int>(blockIdx.x) * kBM;
  b.col0 = b.warp * p.warp_cols;
  b.bsteps = p.warp_cols / 16;
  return b;
}

// cp.async of k tile kt into stage `stage`: the A tile [kBM, bk] and the W tile [bk, n] (all
// threads). Rows past m and k past the end are zero-filled (k is a multiple of 8, so a
// 16-byte chunk is wholly inside or outside), so padded rows and the k tail contribute
// nothing; no out-of-range address is formed.
template <int kBM>
__device__ __forceinline__ void LoadStep(const GemmNormBlock& blk, const __half* a, const __half* w,
                                         int kt, int stage) {
  __half* const a_s = blk.pipe + stage * blk.stage_halves;
  __half* const w_s = a_s + blk.a_tile;
  const int k0 = kt * blk.bk;
  ForEachChunk(kBM, blk.bk / 8, blk.tid, blk.nthreads, [&](int r, int c) {
    const int gr = blk.row0 + r;
    const int gk = k0 + c * 8;
    const bool ok = gr < blk.m && gk < blk.k;
    mma::CpAsync16(a_s + r * blk.a_stride + c * 8,
                   a + (ok ? static_cast<size_t>(gr) * static_cast<size_t>(blk.k) + gk : 0), ok);
  });
  ForEachChunk(blk.bk, blk.n / 8, blk.tid, blk.nthreads, [&](int r, int c) {
    const int gk = k0 + r;
    const bool ok = gk < blk.k;
    mma::CpAsync16(w_s + r * blk.w_stride + c * 8,
                   w + (ok ? static_cast<size_t>(gk) * static_cast<size_t>(blk.n) + c * 8 : 0), ok);
  });
}

// cp.async of the residual rows [kBM, n] into the row tile (zero past m; all threads).
template <int kBM>
__device__ __forceinline__ void LoadResidual(const GemmNormBlock& blk, const __half* res) {
  ForEachChunk(kBM, blk.n / 8, blk.tid, blk.nthreads, [&](int r, int c) {
    const int gr = blk.row0 + r;
    const bool ok = gr < blk.m;
    mma::CpAsync16(blk.rows_s + r * blk.w_stride + c * 8,
                   res + (ok ? static_cast<size_t>(gr) * static_cast<size_t>(blk.n) + c * 8 : 0),
                   ok);
  });
}

// The GEMM: acc = the block's A rows x this warp's W columns over all of k, through the
// `stages`-deep pipeline (copies issued before the call join step 0's commit group). Leaves
// only empty commit groups open.
template <class T, int kBM>
__device__ __forceinline__ void GemmMainLoop(float (&acc)[T::kMTiles][T::kNTiles][4],
                                             const GemmNormBlock& blk, const __half* a,
                                             const __half* w, int k_tiles) {
  for (int s = 0; s < blk.stages - 1; ++s) {
    if (s < k_tiles) LoadStep<kBM>(blk, a, w, s, s);
    mma::CpAsyncCommit();  // empty groups keep the count uniform: group s is step s
  }
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int j = 0; j < T::kNTiles; ++j)
      acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = 0.f;
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    WaitForStep(blk.stages);
    // Step kt's tiles (every thread's copies) are visible, and every warp has finished step
    // kt - 1, whose stage the prefetch below refills.
    __syncthreads();
    const int pf = kt + blk.stages - 1;
    if (pf < k_tiles) LoadStep<kBM>(blk, a, w, pf, pf % blk.stages);
    mma::CpAsyncCommit();

    const __half* const a_s = blk.pipe + (kt % blk.stages) * blk.stage_halves;
    const __half* const w_s = a_s + blk.a_tile + blk.col0;
    // One uniform branch per step: the common n (512, 768, 1024 at their widths) fills the
    // warp width and runs without a branch between a W fragment load and its MMAs.
    if (blk.bsteps == T::kBSteps) {
      MmaStep<T, true>(acc, a_s, w_s, blk.a_stride, blk.w_stride, blk.bk, blk.bsteps, blk.lane);
    } else {
      MmaStep<T, false>(acc, a_s, w_s, blk.a_stride, blk.w_stride, blk.bk, blk.bsteps, blk.lane);
    }
  }
}

// x = acc + bias + residual, in place (bias2 may be null; the residual rows are in the row
// tile when has_residual). Element (j, c) of acc[mt] is row 16 mt + g + 8 (c >> 1) of the
// block, column col0 + 8 j + 2 t + (c & 1).
template <class T>
__device__ __forceinline__ void AddBiasResidual(float (&acc)[T::kMTiles][T::kNTiles][4],
                                                const GemmNormBlock& blk, const __half2* bias2,
                                                bool has_residual) {
#pragma unroll
  for (int jj = 0; jj < T::kBSteps; ++jj) {
    if (jj >= blk.bsteps) continue;
#pragma unroll
    for (int hj = 0; hj < 2; ++hj) {
      const int j = 2 * jj + hj;
      const int col = blk.col0 + 8 * j + 2 * blk.t;
      const float2 bv =
          bias2 != nullptr ? __half22float2(__ldg(bias2 + (col >> 1))) : make_float2(0.f, 0.f);
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float2 x = bv;
          if (has_residual) {
            const float2 rv = __half22float2(*reinterpret_cast<const __half2*>(
                blk.rows_s + (16 * mt + blk.g + 8 * h) * blk.w_stride + col));
            x.x += rv.x;
            x.y += rv.y;
          }
          acc[mt][j][2 * h] += x.x;
          acc[mt][j][2 * h + 1] += x.y;
        }
      }
    }
  }
}

// LayerNorm's row means of x (in acc) over all n columns. Contains a __syncthreads():
// block-uniform calls.
template <class T, int kBM>
__device__ __forceinline__ void RowMeans(const float (&acc)[T::kMTiles][T::kNTiles][4],
                                         const GemmNormBlock& blk, float inv_n,
                                         float (&mean)[T::kMTiles][2]) {
  float part[T::kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float s = 0.f;
#pragma unroll
      for (int j = 0; j < T::kNTiles; ++j)
        if (j / 2 < blk.bsteps) s += acc[mt][j][2 * h] + acc[mt][j][2 * h + 1];
      part[mt][h] = s;
    }
  }
  BlockRowSums<T::kMTiles, kBM>(part, blk.red_sum, blk.warp, blk.warps, blk.g, blk.t, mean);
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) mean[mt][h] *= inv_n;
  }
}

// 1 / sqrt(mean squared deviation of x from `mean` + eps) per row, the deviations taken from
// the registers (a second pass: no cancellation as in E[x^2] - mean^2). Contains a
// __syncthreads(): block-uniform calls.
template <class T, int kBM>
__device__ __forceinline__ void RowRstds(const float (&acc)[T::kMTiles][T::kNTiles][4],
                                         const float (&mean)[T::kMTiles][2],
                                         const GemmNormBlock& blk, float inv_n, float eps,
                                         float (&rstd)[T::kMTiles][2]) {
  float part[T::kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float q = 0.f;
#pragma unroll
      for (int j = 0; j < T::kNTiles; ++j) {
        if (j / 2 < blk.bsteps) {
          const float d0 = acc[mt][j][2 * h] - mean[mt][h];
          const float d1 = acc[mt][j][2 * h + 1] - mean[mt][h];
          q = fmaf(d0, d0, fmaf(d1, d1, q));
        }
      }
      part[mt][h] = q;
    }
  }
  BlockRowSums<T::kMTiles, kBM>(part, blk.red_sq, blk.warp, blk.warps, blk.g, blk.t, rstd);
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) rstd[mt][h] = rsqrtf(fmaf(rstd[mt][h], inv_n, eps));
  }
}

// y = (x - mean) * rstd * gamma (+ beta), fp16 into the row tile (beta2 may be null). Each
// thread overwrites exactly the residual elements it read in AddBiasResidual, so no barrier
// is needed between the reads and these writes.
template <class T>
__device__ __forceinline__ void NormalizeIntoRows(const float (&acc)[T::kMTiles][T::kNTiles][4],
                                                  const float (&mean)[T::kMTiles][2],
                                                  const float (&rstd)[T::kMTiles][2],
                                                  const GemmNormBlock& blk, const __half2* gamma2,
                                                  const __half2* beta2) {
#pragma unroll
  for (int jj = 0; jj < T::kBSteps; ++jj) {
    if (jj >= blk.bsteps) continue;
#pragma unroll
    for (int hj = 0; hj < 2; ++hj) {
      const int j = 2 * jj + hj;
      const int col = blk.col0 + 8 * j + 2 * blk.t;
      const float2 gm = __half22float2(__ldg(gamma2 + (col >> 1)));
      const float2 bt =
          beta2 != nullptr ? __half22float2(__ldg(beta2 + (col >> 1))) : make_float2(0.f, 0.f);
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float y0 = fmaf((acc[mt][j][2 * h] - mean[mt][h]) * rstd[mt][h], gm.x, bt.x);
          const float y1 = fmaf((acc[mt][j][2 * h + 1] - mean[mt][h]) * rstd[mt][h], gm.y, bt.y);
          *reinterpret_cast<__half2*>(blk.rows_s + (16 * mt + blk.g + 8 * h) * blk.w_stride + col) =
              __floats2half2_rn(y0, y1);
        }
      }
    }
  }
}

// 16-byte coalesced stores of the row tile to the block's rows < m of `out`.
template <int kBM>
__device__ __forceinline__ void StoreRows(const GemmNormBlock& blk, __half* out) {
  const int rows_here = min(kBM, blk.m - blk.row0);
  ForEachChunk(rows_here, blk.n / 8, blk.tid, blk.nthreads, [&](int r, int c) {
    *reinterpret_cast<uint4*>(out + static_cast<size_t>(blk.row0 + r) * static_cast<size_t>(blk.n) +
                              c * 8) =
        *reinterpret_cast<const uint4*>(blk.rows_s + r * blk.w_stride + c * 8);
  });
}

template <int kBM, int kWarpCols>
__global__ void __launch_bounds__(GemmNormTraits<kBM, kWarpCols>::kMaxThreads,
                                  GemmNormTraits<kBM, kWarpCols>::kMinBlocks)
    GemmNormKernel(const GemmNormKernelParams p) {
  using T = GemmNormTraits<kBM, kWarpCols>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const GemmNormBlock blk = GemmNormBlockOf<kBM>(p, smem_raw);
  const __half* const a = static_cast<const __half*>(p.a);
  const __half* const w = static_cast<const __half*>(p.w);
  const __half* const res = static_cast<const __half*>(p.residual);
  const int k_tiles = (blk.k + blk.bk - 1) / blk.bk;

  if (blk.prefetch) LoadResidual<kBM>(blk, res);  // joins step 0's commit group
  float acc[T::kMTiles][T::kNTiles][4];
  GemmMainLoop<T, kBM>(acc, blk, a, w, k_tiles);
  // Every real copy has landed (the groups still open are empty).
  mma::CpAsyncWait<0>();
  if (p.residual != nullptr && !blk.prefetch) {
    // The row tile is the start of the stages: every warp must be done with its last MMAs
    // before the residual overwrites them. (Without a residual, the barriers of the row
    // statistics below order the first write to the row tile after every warp's MMAs.)
    __syncthreads();
    LoadResidual<kBM>(blk, res);
    mma::CpAsyncCommit();
    mma::CpAsyncWait<0>();
    __syncthreads();
  }

  // ---- Epilogue, from the accumulators in registers.
  AddBiasResidual<T>(acc, blk, static_cast<const __half2*>(p.bias), p.residual != nullptr);
  // Row statistics. The 4 lanes of a quad hold disjoint columns of rows g and g + 8, the warps
  // disjoint column ranges (BlockRowSums). LayerNorm: the mean first, then the mean squared
  // deviation from it. RMSNorm: the mean of squares, mean = 0.
  float mean[T::kMTiles][2];
  float rstd[T::kMTiles][2];
  if (p.beta != nullptr) {  // uniform over the block, so the barrier inside is safe
    RowMeans<T, kBM>(acc, blk, p.inv_n, mean);
  } else {
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt) mean[mt][0] = mean[mt][1] = 0.f;
  }
  RowRstds<T, kBM>(acc, mean, blk, p.inv_n, p.eps, rstd);
  NormalizeIntoRows<T>(acc, mean, rstd, blk, static_cast<const __half2*>(p.gamma),
                       static_cast<const __half2*>(p.beta));
  __syncthreads();  // the whole row tile is written
  StoreRows<kBM>(blk, static_cast<__half*>(p.out));
}

template <int kBM, int kWarpCols>
engine::Status LaunchGemmNormVariant(const GemmNormKernelParams& p, size_t smem_bytes, int device,
                                     int smem_optin, void* stream) {
  auto* kernel = &GemmNormKernel<kBM, kWarpCols>;
  // Function attributes belong to a device: set once per device (bit `device`), not on every
  // launch. The opt-in dynamic shared memory up to the device's per-block limit (every
  // setting above 48 KiB needs it), and the largest shared-memory carveout, so that a
  // block's registers, not a small carveout, decide how many blocks share an SM. Two threads
  // racing here set the same values.
  static std::atomic<uint64_t> configured{0};
  const uint64_t bit = device >= 0 && device < 64 ? uint64_t{1} << device : 0;
  if (bit == 0 || (configured.load(std::memory_order_acquire) & bit) == 0) {
    STOF_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin));
    STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       static_cast<int>(cudaSharedmemCarveoutMaxShared)));
    configured.fetch_or(bit, std::memory_order_release);
  }
  const unsigned blocks = static_cast<unsigned>((int64_t{p.m} + kBM - 1) / kBM);
  kernel<<<blocks, 32u * static_cast<unsigned>(p.warps), smem_bytes,
           static_cast<cudaStream_t>(stream)>>>(p);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace stof::kernels::detail
