// The softmax-decomposition (SD) kernels of RecomposedMha and the inter-sub-vector reduction
// (IR) both variants share: LS (local softmax of a tile's sub-vectors), GS (global scale, in
// place) and IR (merge of the per-tile statistics into each row's scale), with their
// parameter blocks. What they compute and the memory layout of the statistics: the header of
// recomposed_attention.cu. Included only by recomposed_attention.cu, which launches them.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/fragment_math.cuh"

namespace stof::kernels::recompose_sd {

constexpr int kSdThreads = 256;
constexpr int kSdWarps = kSdThreads / 32;
constexpr int kIrThreads = 256;
constexpr int kMaxBlockM = 128;  // static shared memory of the SD kernels

// Parameters of the SD kernels (LS, GS).
struct SdParams {
  __half* s = nullptr;             // S / x' / P: [heads, L, L] fp16
  float2* stats = nullptr;         // (m', d'): [heads][block_rows * subs][block_m]
  const float* r = nullptr;        // r': same layout
  const uint64_t* mask = nullptr;  // [L][words_per_row]
  int seq_len = 0, words_per_row = 0, block_m = 0, block_rows = 0, subs = 0;
  float scale_log2 = 0;
  bool vec = false;  // L % (T / 32) == 0: each lane moves its T / 32 halves in one access
};

// Parameters of IR.
struct IrParams {
  const float2* stats = nullptr;
  float* r = nullptr;
  const int32_t* row_ptr = nullptr;  // SDF: tiles of block row qb are [row_ptr[qb], row_ptr[qb+1])
  int subs = 0;                      // SD (row_ptr null): tiles qb * subs .. + subs - 1
  int seq_len = 0, block_m = 0;
  int64_t tiles = 0;  // per head
  int64_t rows = 0;   // heads * L
};

// The V = T / 32 halves of one lane at `p` into fp32; `valid` of them lie inside the row (all
// or none on the vectorised path).
template <int V>
__device__ __forceinline__ void LoadLane(const __half* p, float (&x)[V], bool vec, int valid) {
  if (vec) {
    if constexpr (V == 2) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(p));
      x[0] = f.x;
      x[1] = f.y;
    } else {
      static_assert(V == 4, "T / 32 halves per lane: 2 or 4");
      const uint2 raw = *reinterpret_cast<const uint2*>(p);
      const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
      const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&raw.y));
      x[0] = lo.x;
      x[1] = lo.y;
      x[2] = hi.x;
      x[3] = hi.y;
    }
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = j < valid ? __half2float(p[j]) : 0.f;
  }
}

template <int V>
__device__ __forceinline__ void StoreLane(__half* p, const float (&x)[V], bool vec, int valid) {
  if (vec) {
    if constexpr (V == 2) {
      *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x[0], x[1]);
    } else {
      uint2 raw;
      *reinterpret_cast<__half2*>(&raw.x) = __floats2half2_rn(x[0], x[1]);
      *reinterpret_cast<__half2*>(&raw.y) = __floats2half2_rn(x[2], x[3]);
      *reinterpret_cast<uint2*>(p) = raw;
    }
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (j < valid) p[j] = __float2half_rn(x[j]);
  }
}

// Where one SD block works: tile (bh, qb, kb) = blockIdx.x, and this lane's columns.
struct SdTile {
  int64_t bh;
  int qb, kb, q_row0, col0, valid;
};

template <int kT>
__device__ __forceinline__ SdTile DecodeSdTile(const SdParams& p) {
  constexpr int V = kT / 32;
  SdTile s;
  const int64_t flat = blockIdx.x;
  s.kb = static_cast<int>(flat % p.subs);
  const int64_t rest = flat / p.subs;
  s.qb = static_cast<int>(rest % p.block_rows);
  s.bh = rest / p.block_rows;
  s.q_row0 = s.qb * p.block_m;
  s.col0 = s.kb * kT + (static_cast<int>(threadIdx.x) & 31) * V;
  s.valid = min(max(p.seq_len - s.col0, 0), V);
  return s;
}

template <int kT>
__global__ void __launch_bounds__(kSdThreads) LocalSoftmaxKernel(const SdParams p) {
  constexpr int V = kT / 32;
  __shared__ float2 tile_stats[kMaxBlockM];
  const SdTile s = DecodeSdTile<kT>(p);
  const int L = p.seq_len;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  // The lane's V columns lie in one mask word (V divides 64 and col0 is a multiple of V).
  const int word = s.col0 >> 6;
  const bool word_ok = word < p.words_per_row;
  const float scale = p.scale_log2;
  __half* const sh = p.s + static_cast<size_t>(s.bh) * L * L;

  for (int r = warp; r < p.block_m; r += kSdWarps) {
    const int i = s.q_row0 + r;
    if (i >= L) {  // padding row of the last block row (uniform per warp)
      if (lane == 0) tile_stats[r] = make_float2(common::NegInf(), 0.f);
      continue;
    }
    const unsigned bits =
        word_ok ? static_cast<unsigned>(__ldg(p.mask + static_cast<size_t>(i) * p.words_per_row +
                                              word) >> (s.col0 & 63)) & ((1u << V) - 1u)
                : 0u;
    if (!__any_sync(0xffffffffu, bits != 0)) {  // nothing attended: S stays unread
      if (lane == 0) tile_stats[r] = make_float2(common::NegInf(), 0.f);
      continue;
    }
    __half* const row = sh + static_cast<size_t>(i) * L + s.col0;
    float x[V];
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = 0.f;
    if (bits != 0) LoadLane<V>(row, x, p.vec, s.valid);
    float mx = common::NegInf();
#pragma unroll
    for (int j = 0; j < V; ++j)
      if ((bits >> j) & 1u) mx = fmaxf(mx, x[j]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    const float m2 = mx * scale;  // finite: some lane has an attended element
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      x[j] = ((bits >> j) & 1u) ? exp2f(fmaf(x[j], scale, -m2)) : 0.f;
      sum += x[j];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (s.valid > 0) StoreLane<V>(row, x, p.vec, s.valid);
    if (lane == 0) tile_stats[r] = make_float2(m2, sum);
  }
  __syncthreads();
  float2* const out = p.stats + static_cast<size_t>(blockIdx.x) * p.block_m;
  for (int r = static_cast<int>(threadIdx.x); r < p.block_m; r += kSdThreads)
    out[r] = tile_stats[r];
}

template <int kT>
__global__ void __launch_bounds__(kSdThreads) GlobalScaleKernel(const SdParams p) {
  constexpr int V = kT / 32;
  __shared__ float tile_r[kMaxBlockM];
  const SdTile s = DecodeSdTile<kT>(p);
  const int L = p.seq_len;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const float* const rr = p.r + static_cast<size_t>(blockIdx.x) * p.block_m;
  for (int r = static_cast<int>(threadIdx.x); r < p.block_m; r += kSdThreads)
    tile_r[r] = s.q_row0 + r < L ? rr[r] : 0.f;  // rows past L: IR never wrote them
  __syncthreads();
  if (s.valid == 0) return;  // this lane's columns lie past L (no barrier follows)
  __half* const sh = p.s + static_cast<size_t>(s.bh) * L * L;
  for (int r = warp; r < p.block_m && s.q_row0 + r < L; r += kSdWarps) {
    const float f = tile_r[r];
    __half* const row = sh + static_cast<size_t>(s.q_row0 + r) * L + s.col0;
    float x[V];
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = 0.f;
    if (f != 0.f) {  // r' = 0: masked sub-vector or empty row; x' may still hold S there
      LoadLane<V>(row, x, p.vec, s.valid);
#pragma unroll
      for (int j = 0; j < V; ++j) x[j] *= f;
    }
    StoreLane<V>(row, x, p.vec, s.valid);
  }
}

// Merges a partial (max m2, sum s2 of 2^(x - m2)) into (m, s); m = -inf means "nothing
// attended yet" (s = 0) and never produces -inf - -inf.
__device__ __forceinline__ void MergeStat(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == common::NegInf()) return;
  s = s * exp2f(m - mn) + s2 * exp2f(m2 - mn);
  m = mn;
}

__global__ void __launch_bounds__(kIrThreads) InterSubVectorReduceKernel(const IrParams p) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * kIrThreads + threadIdx.x;
  if (idx >= p.rows) return;
  const int64_t bh = idx / p.seq_len;
  const int i = static_cast<int>(idx % p.seq_len);
  const int qb = i / p.block_m;
  const int e0 = p.row_ptr ? __ldg(p.row_ptr + qb) : qb * p.subs;
  const int e1 = p.row_ptr ? __ldg(p.row_ptr + qb + 1) : e0 + p.subs;
  const size_t base = static_cast<size_t>(bh) * p.tiles * p.block_m + (i - qb * p.block_m);
  float m = common::NegInf(), d = 0.f;
  for (int e = e0; e < e1; ++e) {
    const float2 st = p.stats[base + static_cast<size_t>(e) * p.block_m];
    MergeStat(m, d, st.x, st.y);
  }
  // d >= 1 when m is finite: the sub-vector holding the max contributes 2^0 to it.
  const bool empty = m == common::NegInf();
  const float inv = empty ? 0.f : 1.f / d;
  for (int e = e0; e < e1; ++e) {
    const size_t at = base + static_cast<size_t>(e) * p.block_m;
    p.r[at] = empty ? 0.f : exp2f(p.stats[at].x - m) * inv;
  }
}

}  // namespace stof::kernels::recompose_sd
