// The two tensor-core GEMM kernels of SDF (softmax decomposition + fusion, recomposed_attention.h)
// as templates over the head size and the sub-vector length T, and their launchers. Included
// only by the instantiation files (recompose_gemm_d64.cu, _d128.cu); the host side sees
// recompose_variant.h. Fragment and cp.async helpers: kernels/common/mma_sync.cuh (the
// same code the block-wise kernel runs and tests/gpu/mma_fragment_test.cpp checks); quad
// reductions: kernels/common/fragment_math.cuh. Each kernel is a sequence of the __device__
// parts defined above it; the tile loads, the k-step of the warp GEMMs and the fp16 staging of
// the accumulators are shared by both.
//
// Q K^T + LS (RecomposeQkLsKernel): one thread block per valid BM x T tile of one (batch,
// head) of the mask's BlockLayout at BM x T (grid = heads * tiles; empty tiles are never
// launched). BM / 16 warps, each owning 16 query rows x T keys: S = Q K^T with mma.sync
// m16n8k16 (fp32), mask (part tiles: the mask's words, one shift per row and constant bit tests
// as in the block-wise kernel; ragged edges: padding bits are zero; full tiles: nothing), then
// the local softmax per row of the tile: m' = max (quad shuffles), x' = 2^(s * scale - m'
// * scale) with the scale folded into one FFMA, d' = sum x' in fp32. Writes x' as fp16
// (staged in shared memory, then 16-byte stores of the tile's contiguous BM x T block) and
// (m' * scale, d') per row. A row with nothing attended in the tile gets m' = -inf, d' = 0 and
// x' = 0 (the exponent subtracts 0 instead of -inf, so no -inf - -inf = NaN).
//
// GS + P V (RecomposeGsPvKernel): one thread block per BM-row block of one (batch, head)
// (grid = heads * block_rows), BM / 16 warps of 16 rows each, looping over the block row's
// valid tiles. Per tile, cp.async brings the x' tile, the V tile (rows past L zero-filled) and
// the BM factors r' into the other stage while the current one computes (double buffered, one
// commit group per tile, two barriers per tile). The prologue is the global scaling: each A
// fragment of x' is scaled in fp32 by its row's r'_k and rounded to fp16 (= P, as the
// unfused path stores it), then O += P V. A block row without valid tiles writes zeros; a row
// with nothing attended has r' = 0 on every tile, hence O = 0.
// Invariants: see recompose_variant.h; the kernels trust them (validated on the host).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/common/fragment_math.cuh"
#include "kernels/common/mma_sync.cuh"
#include "kernels/cuda_check.h"
#include "kernels/recomposition/recompose_variant.h"

namespace stof::kernels::detail {

template <int kHeadDim, int kT>
struct RecomposeTraits {
  static_assert(kHeadDim == 64 || kHeadDim == 128, "head_dim: 64 or 128");
  static_assert(kT == 64 || kT == 128, "sub_len T: 64 or 128 (whole 64-bit mask words)");
  static constexpr int kMaxThreads = 256;                        // BM = 128: 8 warps
  static constexpr int kDStride = kHeadDim + kRecomposeSmemPad;  // Q, K, V, O rows (halves)
  static constexpr int kXStride = kT + kRecomposeSmemPad;        // x' rows (halves)
  static_assert(((kDStride * 2 / 16) & 1) == 1 && ((kXStride * 2 / 16) & 1) == 1,
                "row strides must be odd numbers of 16-byte units: conflict-free ldmatrix");
  static constexpr int kDChunks = kHeadDim / 8;  // 16-byte chunks per Q/K/V/O row
  static constexpr int kXChunks = kT / 8;        // 16-byte chunks per x' row
  static constexpr int kQkSteps = kHeadDim / 16; // k-steps of Q K^T
  static constexpr int kSTiles = kT / 8;         // n-tiles of S (16 x 8 each)
  static constexpr int kPvSteps = kT / 16;       // k-steps of P V
  static constexpr int kOTiles = kHeadDim / 8;   // n-tiles of O
  static constexpr int kMaskWords = kT / 64;     // mask words per row of a tile
};

// Parts of both kernels.

// The calling thread's place in the block and in the mma.sync fragments.
struct RecomposeLane {
  int tid, nthreads, warp, lane;  // thread, threads per block, warp, lane in the warp
  int g, t;                       // groupID, threadID_in_group of the mma fragments
};

// The RecomposeLane of the calling thread.
__device__ __forceinline__ RecomposeLane ThisRecomposeLane() {
  RecomposeLane th;
  th.tid = static_cast<int>(threadIdx.x);
  th.nthreads = static_cast<int>(blockDim.x);
  th.warp = th.tid >> 5;
  th.lane = th.tid & 31;
  th.g = th.lane >> 2;
  th.t = th.lane & 3;
  return th;
}

// cp.async of rows row0 .. row0 + rows - 1 of a [L][kHeadDim] head (Q, K or V) into the tile
// at smem + dst_off, kStride halves per row, by every thread of the block. Rows past L are
// zero-filled and read nothing. (Base and offset apart: one pointer made of them in the caller
// reorders the address sums of the generated code.)
template <int kHeadDim, int kStride>
__device__ __forceinline__ void LoadHeadRowsAsync(__half* smem, int dst_off, const __half* head,
                                                  int row0, int rows, int L,
                                                  const RecomposeLane& th) {
  constexpr int kChunks = kHeadDim / 8;
  for (int c = th.tid; c < rows * kChunks; c += th.nthreads) {
    const int r = c / kChunks;
    const int col = (c % kChunks) * 8;
    const bool ok = row0 + r < L;
    mma::CpAsync16(smem + dst_off + r * kStride + col,
                   head + (ok ? static_cast<size_t>(row0 + r) * kHeadDim + col : 0), ok);
  }
}

// acc += k-step kk: the A fragment `a` times the matching 16 x 8 kNTiles block of the tile
// `b` (`stride` halves per row), B stored [n][k] (K, for S = Q K^T) or, kBFromKN, [k][n] (V).
template <int kNTiles, bool kBFromKN>
__device__ __forceinline__ void WarpMmaKStep(float (&acc)[kNTiles][4], const uint32_t (&a)[4],
                                             const __half* b, int stride, int kk, int lane) {
#pragma unroll
  for (int jj = 0; jj < kNTiles / 2; ++jj) {
    uint32_t bf[4];
    if constexpr (kBFromKN) {
      mma::LoadBFromKN(bf, b + kk * 16 * stride + jj * 16, stride, lane);
    } else {
      mma::LoadBFromNK(bf, b + jj * 16 * stride + kk * 16, stride, lane);
    }
    mma::Mma16816(acc[2 * jj], a, bf[0], bf[1]);
    mma::Mma16816(acc[2 * jj + 1], a, bf[2], bf[3]);
  }
}

// Rounds the warp's accumulators to fp16 and stores them as rows wrow .. wrow + 15 of the
// staging tile at `smem` (kStride halves per row).
template <int kNTiles, int kStride>
__device__ __forceinline__ void StageAccum(__half* smem, int wrow,
                                           const float (&acc)[kNTiles][4], int g, int t) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int j = 0; j < kNTiles; ++j)
      *reinterpret_cast<__half2*>(smem + wrow * kStride + (g + 8 * h) * kStride + 8 * j +
                                  2 * t) =
          __floats2half2_rn(acc[j][2 * h], acc[j][2 * h + 1]);
  }
}

// Parts of Q K^T + LS.

// acc += S = Q K^T of the warp: rows wrow .. wrow + 15 of the Q tile `q` times the K tile `k`.
template <int kHeadDim, int kT>
__device__ __forceinline__ void WarpQkT(float (&acc)[RecomposeTraits<kHeadDim, kT>::kSTiles][4],
                                        const __half* q, const __half* k, int wrow, int lane) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
#pragma unroll
  for (int kk = 0; kk < Tr::kQkSteps; ++kk) {
    uint32_t a[4];
    mma::LoadA(a, q + wrow * Tr::kDStride + kk * 16, Tr::kDStride, lane);
    WarpMmaKStep<Tr::kSTiles, false>(acc, a, k, Tr::kDStride, kk, lane);
  }
}

// Sets the warp's scores whose mask bit is clear to -inf; row_g: the head row of fragment row g,
// word0: the tile's first mask word.
// Element (j, c) is row g + 8 (c >> 1) of the warp, column 8 j + 2 t + (c & 1) of the tile:
// in mask word j / 8 of the tile's row (T is a multiple of 64, so the tile starts on a word),
// bit (8 j mod 64) + 2 t + (c & 1); one shift by 2 t per row, then constant bit tests. Rows
// past L and words past the row's end count as empty; columns past L are padding bits, always
// zero.
template <int kHeadDim, int kT>
__device__ __forceinline__ void MaskScores(
    float (&acc)[RecomposeTraits<kHeadDim, kT>::kSTiles][4], const RecomposeGemmParams& p,
    int row_g, int word0, int t) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
  const int L = p.seq_len;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row_g + 8 * h;
    uint64_t bits[Tr::kMaskWords];
#pragma unroll
    for (int w = 0; w < Tr::kMaskWords; ++w) {
      const bool ok = row < L && word0 + w < p.words_per_row;
      bits[w] = ok ? __ldg(p.mask + static_cast<size_t>(row) * p.words_per_row + word0 + w) >>
                         (2 * t)
                   : 0;
    }
#pragma unroll
    for (int j = 0; j < Tr::kSTiles; ++j) {
#pragma unroll
      for (int lo = 0; lo < 2; ++lo) {
        const bool in = (bits[(8 * j) >> 6] >> ((8 * j + lo) & 63)) & 1u;
        if (!in) acc[j][2 * h + lo] = common::NegInf();
      }
    }
  }
}

// Local softmax per row of the tile (the 4 lanes of a quad share rows g and g + 8): x' =
// 2^(s * scale - m' * scale) in place, and (m' * scale, d') to stats[g], stats[g + 8].
template <int kNTiles>
__device__ __forceinline__ void LocalSoftmax(float (&acc)[kNTiles][4], float scale,
                                             float2* stats, int g, int t) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = common::NegInf();
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) mx = fmaxf(mx, fmaxf(acc[j][2 * h], acc[j][2 * h + 1]));
    mx = common::QuadMax(mx);
    // Nothing attended in this row of the tile: subtract 0, so every x' is 2^-inf = 0.
    const float m_use = mx == common::NegInf() ? 0.f : mx * scale;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      acc[j][2 * h] = mma::FastExp2(fmaf(acc[j][2 * h], scale, -m_use));
      acc[j][2 * h + 1] = mma::FastExp2(fmaf(acc[j][2 * h + 1], scale, -m_use));
      sum += acc[j][2 * h] + acc[j][2 * h + 1];
    }
    sum = common::QuadSum(sum);
    // scale > 0, so an empty row's m' stays -inf.
    if (t == 0) stats[g + 8 * h] = make_float2(mx * scale, sum);
  }
}

// Copies the warp's 16 staged x' rows (rows wrow .. of the staging tile at `smem`) to rows
// x_row0 + wrow .. of `x` (T halves per row; x_row0: the tile's first), as 16-byte chunks.
template <int kHeadDim, int kT>
__device__ __forceinline__ void StoreXRows(__half* x, size_t x_row0, const __half* smem,
                                           int wrow, int lane) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
  for (int c = lane; c < 16 * Tr::kXChunks; c += 32) {
    const int r = c / Tr::kXChunks;
    const int col = (c % Tr::kXChunks) * 8;
    *reinterpret_cast<uint4*>(x + (x_row0 + wrow) * kT + r * kT + col) =
        *reinterpret_cast<const uint4*>(smem + wrow * Tr::kXStride + r * Tr::kXStride + col);
  }
}

// Parts of GS + P V.

// Two fp16 of an A fragment register times `s` in fp32, rounded back to fp16.
__device__ __forceinline__ uint32_t ScaleHalf2(uint32_t h, float s) {
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
  return mma::PackHalf2(f.x * s, f.y * s);
}

// Stage `stage` of the GS + P V pipeline, at smem + stage * stage_bytes in shared memory:
// x' [BM][kXStride] fp16, V [T][kDStride] fp16, r' [BM] fp32.
template <int kHeadDim, int kT>
struct PvStage {
  using Tr = RecomposeTraits<kHeadDim, kT>;
  __device__ __forceinline__ PvStage(unsigned char* smem, int stage, int stage_bytes,
                                     int block_m)
      : xs(reinterpret_cast<__half*>(smem + stage * stage_bytes)),
        vs(xs + block_m * Tr::kXStride),
        rs(reinterpret_cast<float*>(vs + kT * Tr::kDStride)) {}
  __half* const xs;
  __half* const vs;
  float* const rs;
};

// cp.async of valid tile e_begin + i of the block row into `st`, by every thread of the
// block: its x' tile (from xh, the block row's first), V tile and r' (from rh, likewise).
template <int kHeadDim, int kT>
__device__ __forceinline__ void LoadPvTileAsync(const PvStage<kHeadDim, kT>& st,
                                                const RecomposeGemmParams& p,
                                                const __half* xh, const __half* vh,
                                                const float* rh, int e_begin, int i,
                                                const RecomposeLane& th) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
  const __half* const xt = xh + static_cast<size_t>(i) * p.block_m * kT;
  for (int c = th.tid; c < p.block_m * Tr::kXChunks; c += th.nthreads) {
    const int r = c / Tr::kXChunks;
    const int col = (c % Tr::kXChunks) * 8;
    mma::CpAsync16(st.xs + r * Tr::kXStride + col, xt + r * kT + col, true);
  }
  // Rows past L zero-filled: x' is 0 there, and 0 * garbage could be NaN.
  const int key0 = __ldg(p.load_col_idx + e_begin + i) * kT;
  LoadHeadRowsAsync<kHeadDim, Tr::kDStride>(st.xs, p.block_m * Tr::kXStride, vh, key0, kT,
                                            p.seq_len, th);  // into st.vs
  for (int c = th.tid; c < p.block_m / 4; c += th.nthreads)  // 4 floats per 16 bytes
    mma::CpAsync16(st.rs + 4 * c, rh + static_cast<size_t>(i) * p.block_m + 4 * c, true);
}

// acc += GS(x') V of the warp: rows wrow .. wrow + 15 of the x' tile `xs`, each A fragment
// scaled by its row's r' (r0 for row g, r1 for row g + 8), times the V tile `vs`.
template <int kHeadDim, int kT>
__device__ __forceinline__ void WarpGsPv(float (&acc)[RecomposeTraits<kHeadDim, kT>::kOTiles][4],
                                         const __half* xs, const __half* vs, int wrow, float r0,
                                         float r1, int lane) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
#pragma unroll
  for (int kk = 0; kk < Tr::kPvSteps; ++kk) {
    uint32_t a[4];
    mma::LoadA(a, xs + wrow * Tr::kXStride + kk * 16, Tr::kXStride, lane);
    // GS: a[0], a[2] hold row g, a[1], a[3] row g + 8 (kernels/common/mma_sync.cuh).
    a[0] = ScaleHalf2(a[0], r0);
    a[1] = ScaleHalf2(a[1], r1);
    a[2] = ScaleHalf2(a[2], r0);
    a[3] = ScaleHalf2(a[3], r1);
    WarpMmaKStep<Tr::kOTiles, true>(acc, a, vs, Tr::kDStride, kk, lane);
  }
}

// Zeroes rows row0 .. row0 + rows - 1 (those below L) of the [L][kHeadDim] output head, by
// every thread of the block.
template <int kHeadDim>
__device__ __forceinline__ void ZeroHeadRows(__half* head, int row0, int rows, int L,
                                             const RecomposeLane& th) {
  constexpr int kChunks = kHeadDim / 8;
  for (int c = th.tid; c < rows * kChunks; c += th.nthreads) {
    const int r = c / kChunks;
    if (row0 + r < L)
      *reinterpret_cast<uint4*>(head + static_cast<size_t>(row0 + r) * kHeadDim +
                                (c % kChunks) * 8) = make_uint4(0, 0, 0, 0);
  }
}

// Copies the warp's 16 staged O rows (rows wrow .. of the staging tile at `smem`) to the rows
// row0 + wrow .. below L of the [L][kHeadDim] output head, as 16-byte chunks.
template <int kHeadDim, int kT>
__device__ __forceinline__ void StoreORows(__half* head, int row0, const __half* smem, int wrow,
                                           int L, int lane) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
  for (int c = lane; c < 16 * Tr::kDChunks; c += 32) {
    const int r = c / Tr::kDChunks;
    const int col = (c % Tr::kDChunks) * 8;
    const int gr = row0 + wrow + r;
    if (gr < L)
      *reinterpret_cast<uint4*>(head + static_cast<size_t>(gr) * kHeadDim + col) =
          *reinterpret_cast<const uint4*>(smem + wrow * Tr::kDStride + r * Tr::kDStride + col);
  }
}

template <int kHeadDim, int kT>
__global__ void __launch_bounds__(RecomposeTraits<kHeadDim, kT>::kMaxThreads)
    RecomposeQkLsKernel(const RecomposeGemmParams p) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* const q_s = reinterpret_cast<__half*>(smem_raw);
  __half* const k_s = q_s + p.block_m * Tr::kDStride;

  const RecomposeLane th = ThisRecomposeLane();
  const int e = static_cast<int>(blockIdx.x % static_cast<unsigned>(p.tiles));
  const int64_t bh = static_cast<int64_t>(blockIdx.x / static_cast<unsigned>(p.tiles));
  const int L = p.seq_len;
  const int qb = __ldg(p.tile_row + e);
  const int key0 = __ldg(p.load_col_idx + e) * kT;
  const bool full = __ldg(p.load_part_idx + e) < 0;
  const int q_row0 = qb * p.block_m;
  const size_t head_off = static_cast<size_t>(bh) * static_cast<size_t>(L) * kHeadDim;
  const __half* const qh = static_cast<const __half*>(p.q) + head_off;
  const __half* const kh = static_cast<const __half*>(p.k) + head_off;

  // Rows past L are zero-filled, so their scores are finite (and masked below).
  LoadHeadRowsAsync<kHeadDim, Tr::kDStride>(q_s, 0, qh, q_row0, p.block_m, L, th);
  LoadHeadRowsAsync<kHeadDim, Tr::kDStride>(q_s, p.block_m * Tr::kDStride, kh, key0, kT, L,
                                            th);  // into k_s
  mma::CpAsyncCommit();
  mma::CpAsyncWait<0>();
  __syncthreads();

  const int wrow = th.warp * 16;  // the warp's first row in the tile
  float acc[Tr::kSTiles][4];
  mma::ZeroFragments(acc);
  WarpQkT<kHeadDim, kT>(acc, q_s, k_s, wrow, th.lane);

  // Full tiles inside L skip the masking (uniform branch).
  const bool ragged = q_row0 + p.block_m > L || key0 + kT > L;
  if (!full || ragged) MaskScores<kHeadDim, kT>(acc, p, q_row0 + wrow + th.g, key0 >> 6, th.t);

  float2* const stats = static_cast<float2*>(p.stats) +
                        (static_cast<size_t>(bh) * p.tiles + e) * p.block_m + wrow;
  LocalSoftmax(acc, p.scale_log2, stats, th.g, th.t);

  // x' through shared memory: each warp stages its own 16 rows (the Q and K tiles are free once
  // every warp passed this barrier), then writes them as 16-byte chunks of the tile's
  // contiguous BM x T block.
  __syncthreads();
  __half* const xs = reinterpret_cast<__half*>(smem_raw);
  StageAccum<Tr::kSTiles, Tr::kXStride>(xs, wrow, acc, th.g, th.t);
  __syncwarp();
  StoreXRows<kHeadDim, kT>(static_cast<__half*>(p.x),
                           (static_cast<size_t>(bh) * p.tiles + e) * p.block_m, xs, wrow,
                           th.lane);
}

template <int kHeadDim, int kT>
__global__ void __launch_bounds__(RecomposeTraits<kHeadDim, kT>::kMaxThreads)
    RecomposeGsPvKernel(const RecomposeGemmParams p) {
  using Tr = RecomposeTraits<kHeadDim, kT>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // Two stages (PvStage), at smem_raw and smem_raw + stage_bytes.
  const int stage_bytes = p.block_m * Tr::kXStride * 2 + kT * Tr::kDStride * 2 + p.block_m * 4;

  const RecomposeLane th = ThisRecomposeLane();
  const int qb = static_cast<int>(blockIdx.x % static_cast<unsigned>(p.block_rows));
  const int64_t bh = static_cast<int64_t>(blockIdx.x / static_cast<unsigned>(p.block_rows));
  const int L = p.seq_len;
  const size_t head_off = static_cast<size_t>(bh) * static_cast<size_t>(L) * kHeadDim;
  const __half* const vh = static_cast<const __half*>(p.v) + head_off;
  __half* const oh = static_cast<__half*>(p.o) + head_off;
  const int q_row0 = qb * p.block_m;
  const int e_begin = __ldg(p.load_row_ptr + qb);
  const int n_tiles = __ldg(p.load_row_ptr + qb + 1) - e_begin;

  if (n_tiles == 0) {
    // Nothing attended in this block row: zeros. Uniform over the block: no barrier follows.
    ZeroHeadRows<kHeadDim>(oh, q_row0, p.block_m, L, th);
    return;
  }

  const size_t tile0 = static_cast<size_t>(bh) * p.tiles + e_begin;
  const __half* const xh = static_cast<const __half*>(p.x) + tile0 * p.block_m * kT;
  const float* const rh = p.r + tile0 * p.block_m;

  const int wrow = th.warp * 16;
  // r' of rows at or past L is never written by IR: use 0 for them.
  const bool row_ok0 = q_row0 + wrow + th.g < L;
  const bool row_ok1 = q_row0 + wrow + th.g + 8 < L;
  float acc[Tr::kOTiles][4];
  mma::ZeroFragments(acc);

  LoadPvTileAsync<kHeadDim, kT>({smem_raw, 0, stage_bytes, p.block_m}, p, xh, vh, rh, e_begin, 0,
                                th);
  mma::CpAsyncCommit();
  for (int i = 0; i < n_tiles; ++i) {
    const int stage = i & 1;
    if (i + 1 < n_tiles) {
      // Stage `stage ^ 1` was released by the barrier that ended tile i - 1.
      LoadPvTileAsync<kHeadDim, kT>({smem_raw, stage ^ 1, stage_bytes, p.block_m}, p, xh, vh, rh,
                                    e_begin, i + 1, th);
      mma::CpAsyncCommit();
      mma::CpAsyncWait<1>();
    } else {
      mma::CpAsyncWait<0>();
    }
    __syncthreads();  // tile i, written by every thread's cp.async, is visible

    const PvStage<kHeadDim, kT> st(smem_raw, stage, stage_bytes, p.block_m);
    const float r0 = row_ok0 ? st.rs[wrow + th.g] : 0.f;
    const float r1 = row_ok1 ? st.rs[wrow + th.g + 8] : 0.f;
    WarpGsPv<kHeadDim, kT>(acc, st.xs, st.vs, wrow, r0, r1, th.lane);
    __syncthreads();  // every warp is done with this stage before tile i + 1 refills it
  }

  // O: each warp stages its 16 rows (the stages are free after the last barrier) and writes
  // 16-byte chunks of rows < L.
  __half* const os = reinterpret_cast<__half*>(smem_raw);
  StageAccum<Tr::kOTiles, Tr::kDStride>(os, wrow, acc, th.g, th.t);
  __syncwarp();
  StoreORows<kHeadDim, kT>(oh, q_row0, os, wrow, L, th.lane);
}

// Function attributes belong to a device, so they are set once per device (bit `device` of
// `configured`, one per kernel instantiation): the opt-in dynamic shared memory (above 48 KiB
// a kernel must opt in) and the largest shared-memory carveout, as the block-wise kernel does.
template <class Kernel>
engine::Status ConfigureRecomposeKernel(Kernel* kernel, std::atomic<uint64_t>& configured,
                                        int device, int smem_optin) {
  const uint64_t bit = device >= 0 && device < 64 ? uint64_t{1} << device : 0;
  if (bit != 0 && (configured.load(std::memory_order_acquire) & bit) != 0)
    return engine::Status::Ok();
  STOF_CUDA_TRY(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin));
  STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     static_cast<int>(cudaSharedmemCarveoutMaxShared)));
  configured.fetch_or(bit, std::memory_order_release);
  return engine::Status::Ok();
}

// Launches one of the two recomposition kernels (configured once per device) with 2 warps per
// 32 rows of block_m, `grid` CTAs and `smem` bytes of dynamic shared memory.
template <class Kernel>
engine::Status LaunchRecomposeKernel(Kernel* kernel, std::atomic<uint64_t>& configured,
                                     size_t smem, int64_t grid, const RecomposeGemmParams& p,
                                     int device, int smem_optin, void* stream) {
  STOF_RETURN_IF_ERROR(ConfigureRecomposeKernel(kernel, configured, device, smem_optin));
  kernel<<<static_cast<unsigned>(grid), static_cast<unsigned>(p.block_m * 2), smem,
           static_cast<cudaStream_t>(stream)>>>(p);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

template <int kHeadDim, int kT>
engine::Status LaunchRecomposeQk(const RecomposeGemmParams& p, int device, int smem_optin,
                                 void* stream) {
  static std::atomic<uint64_t> configured{0};
  return LaunchRecomposeKernel(&RecomposeQkLsKernel<kHeadDim, kT>, configured,
                               RecomposeQkSmemBytes(kHeadDim, kT, p.block_m),
                               static_cast<int64_t>(p.heads) * p.tiles, p, device, smem_optin,
                               stream);
}

template <int kHeadDim, int kT>
engine::Status LaunchRecomposePv(const RecomposeGemmParams& p, int device, int smem_optin,
                                 void* stream) {
  static std::atomic<uint64_t> configured{0};
  return LaunchRecomposeKernel(&RecomposeGsPvKernel<kHeadDim, kT>, configured,
                               RecomposePvSmemBytes(kHeadDim, kT, p.block_m),
                               static_cast<int64_t>(p.heads) * p.block_rows, p, device,
                               smem_optin, stream);
}

}  // namespace stof::kernels::detail
