// The Hopper GEMM chain kernel (sm_90a), composed from the Hopper parts: the TMA ring
// (kernels/common/hopper/tma.cuh, mbarrier.cuh), the warpgroup GEMM steps (warpgroup_gemm.cuh),
// the accumulator-to-fragment conversion (kernels/common/fragment_softmax.cuh), the shared
// activation (kernels/common/activation.cuh) and the cluster's distributed shared memory
// (cluster.cuh). Included only by hopper_chain.cu; the host sees hopper_chain_params.h.
//
// One CTA = 64 rows and kH columns of E of one batch (blockIdx.y: row tile and E tile, .z) and
// rank r of a cluster of `cluster` CTAs in split group s (blockIdx.x): it takes the 64-column
// chunks s * cluster + r, + cluster * splits, ... of the intermediate C. A
// producer warp (one thread) loads, per chunk, A's and B's 64-wide k steps into a ring of
// kStages stages and the chunk's 64 rows of D into one of two D buffers. The consumer
// warpgroup computes the chunk C = A B (SS wgmma, B N-major), applies bias1 and the
// activation on the fp32 accumulators, rounds C to fp16 A fragments in registers (as the
// attention kernel turns S into P) and accumulates E += C D (RS wgmma) in registers. After the
// last chunk the cluster's CTAs reduce their partial E (fp32) through distributed shared memory
// (pushed or pulled: ReduceE), and CTA r adds bias2 to its kH / cluster columns and stores them;
// with several split groups (an FFN's many chunks over few row tiles) it adds them into an
// fp32 workspace instead, and the tile's last CTA to arrive stores E (FinishSplits).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/common/activation.cuh"
#include "kernels/common/fragment_math.cuh"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/hopper/cluster.cuh"
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/hopper/warpgroup.cuh"
#include "kernels/common/hopper/warpgroup_gemm.cuh"
#include "kernels/common/hopper/wgmma.cuh"
#include "kernels/common/last_arrival.cuh"
#include "kernels/cuda_check.h"
#include "kernels/gemm_chain_hopper/hopper_chain_params.h"

namespace stof::kernels::detail {

template <int kH>
struct HopperChainSmem {
  using T = HopperChainTraits<kH>;
  unsigned char* base;  // 1024-byte aligned
  __device__ __forceinline__ unsigned char* A(int s) const {
    return base + T::kRingOffset + s * T::kStageBytes;
  }
  __device__ __forceinline__ unsigned char* B(int s) const { return A(s) + T::kPanelBytes; }
  __device__ __forceinline__ unsigned char* D(int i) const {
    return base + T::kDOffset + i * T::kDBytes;
  }
  __device__ __forceinline__ float* Partial() const { return reinterpret_cast<float*>(base); }
  __device__ __forceinline__ uint64_t* Bar(int i) const {
    return reinterpret_cast<uint64_t*>(base + T::kBarrierOffset) + i;
  }
  __device__ __forceinline__ uint64_t* Full(int s) const { return Bar(s); }
  __device__ __forceinline__ uint64_t* Empty(int s) const { return Bar(T::kStages + s); }
  __device__ __forceinline__ uint64_t* DFull(int i) const { return Bar(2 * T::kStages + i); }
  __device__ __forceinline__ uint64_t* DEmpty(int i) const {
    return Bar(2 * T::kStages + T::kDBuffers + i);
  }
  __device__ __forceinline__ volatile int* LastFlag() const {
    return reinterpret_cast<volatile int*>(Bar(T::kBarriers));
  }
  // One thread; the empty barriers count one arrival per consumer warp.
  __device__ __forceinline__ void InitBarriers() const {
    for (int s = 0; s < T::kStages; ++s) {
      hopper::BarrierInit(Full(s), 1);
      hopper::BarrierInit(Empty(s), 4);
    }
    for (int i = 0; i < T::kDBuffers; ++i) {
      hopper::BarrierInit(DFull(i), 1);
      hopper::BarrierInit(DEmpty(i), 4);
    }
    hopper::FenceBarrierInit();
  }
};

// Where a CTA works: its first chunk of C and the stride to its next, its rows of A and E,
// its E tile's first column, its batch.
struct ChainTile {
  int first_chunk, chunk_step, m0, h0, batch;
};

// The producer thread: per chunk of this CTA, A's and B's k steps into the ring and, after
// the first step (so the chunk's GEMM starts first), the chunk's rows of D (the E tile's
// columns).
template <int kH>
__device__ __forceinline__ void ProduceChain(const HopperChainSmem<kH>& sm, const CUtensorMap* a,
                                             const CUtensorMap* b, const CUtensorMap* d,
                                             const HopperChainKernelParams& p,
                                             const ChainTile& at) {
  using T = HopperChainTraits<kH>;
  const int batch = at.batch, m0 = at.m0;
  const int ba = batch * p.a_batched, bb = batch * p.b_batched, bd = batch * p.d_batched;
  hopper::RingPos ring, dbuf;
  for (int chunk = at.first_chunk; chunk < p.chunks; chunk += at.chunk_step) {
    const int n0 = chunk * T::kChunk;
    for (int s = 0; s < p.k_steps; ++s, ring.Next<T::kStages>()) {
      hopper::BarrierWait(sm.Empty(ring.stage), ring.phase ^ 1u);
      hopper::BarrierArriveExpectTx(sm.Full(ring.stage), T::kStageBytes);
      hopper::TmaLoad3d(sm.A(ring.stage), a, sm.Full(ring.stage), s * T::kStep, m0, ba);
      hopper::TmaLoad3d(sm.B(ring.stage), b, sm.Full(ring.stage), n0, s * T::kStep, bb);
      if (s != 0) continue;
      hopper::BarrierWait(sm.DEmpty(dbuf.stage), dbuf.phase ^ 1u);
      hopper::BarrierArriveExpectTx(sm.DFull(dbuf.stage), T::kDBytes);
#pragma unroll
      for (int pn = 0; pn < T::kDPanels; ++pn)
        hopper::TmaLoad3d(sm.D(dbuf.stage) + pn * T::kPanelBytes, d, sm.DFull(dbuf.stage),
                          at.h0 + 64 * pn, n0, bd);
      dbuf.Next<T::kDBuffers>();
    }
  }
}

// C's chunk (columns n0 ..) from fp32 accumulators to fp16 A fragments: + bias1, then the
// activation, in fp32; columns past n (zero-filled B) stay act(0) = 0 and meet zero rows of D.
__device__ __forceinline__ void ChunkToFragments(float (&c)[32], const HopperChainKernelParams& p,
                                                 int n0, int t, uint32_t (&frag)[4][4]) {
  const __half* bias = static_cast<const __half*>(p.bias1);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int col = n0 + 8 * j + 2 * t;
    float b0 = 0.f, b1 = 0.f;
    if (bias != nullptr && col < p.n) {
      b0 = __half2float(bias[col]);
      b1 = __half2float(bias[col + 1]);
    }
    c[4 * j] = common::Activate(p.act, c[4 * j] + b0);
    c[4 * j + 1] = common::Activate(p.act, c[4 * j + 1] + b1);
    c[4 * j + 2] = common::Activate(p.act, c[4 * j + 2] + b0);
    c[4 * j + 3] = common::Activate(p.act, c[4 * j + 3] + b1);
  }
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) common::AccumToA<32>(c, kk, frag[kk]);
}

// The wgmma groups of the consumer are retired in order; these keep the registers an
// asynchronous wgmma reads or writes in place until its group is known complete (the compiler
// sees them used only when the wgmma is issued).
template <int kN>
__device__ __forceinline__ void FenceFragments(uint32_t (&frag)[4][4], float (&acc)[kN]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int i = 0; i < 4; ++i) hopper::FenceOperand(frag[kk][i]);
  hopper::FenceOperands(acc);
}

// The consumer warpgroup: every chunk of this CTA, C = A B over the k steps, then E += C D.
// The wgmmas overlap: a chunk's k steps are issued back to back (a stage is released once the
// next step is issued and it is done), and a chunk's E += C D runs while the next chunk's
// first k steps wait for their loads and multiply.
template <int kH>
__device__ __forceinline__ void ConsumeChain(const HopperChainSmem<kH>& sm,
                                             const HopperChainKernelParams& p,
                                             const ChainTile& at, int lane,
                                             float (&e)[HopperChainTraits<kH>::kEAcc]) {
  using T = HopperChainTraits<kH>;
  const int t = lane & 3;
  hopper::RingPos ring, dbuf, dprev;
  bool pending = false;  // the previous chunk's E += C D is in flight, reading D buffer dprev
  float c[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) c[i] = 0.f;
  uint32_t frag[4][4];
  const auto retire_pending = [&] {
    if (!pending) return;
    FenceFragments(frag, e);
    if (lane == 0) hopper::BarrierArrive(sm.DEmpty(dprev.stage));
    pending = false;
  };
  for (int chunk = at.first_chunk; chunk < p.chunks; chunk += at.chunk_step) {
    hopper::RingPos prev = ring;
    for (int s = 0; s < p.k_steps; ++s) {
      hopper::BarrierWait(sm.Full(ring.stage), ring.phase);
      hopper::GemmSsNMajor<64, false>(c, hopper::SmemAddr(sm.A(ring.stage)),
                                      hopper::SmemAddr(sm.B(ring.stage)), s > 0);
      hopper::FenceOperands(c);
      if (s > 0) {  // every group but step s's is complete: step s - 1, a pending E += C D
        hopper::WgmmaWait<1>();
        hopper::FenceOperands(c);
        if (lane == 0) hopper::BarrierArrive(sm.Empty(prev.stage));
        prev = ring;
        retire_pending();
      }
      ring.Next<T::kStages>();
    }
    hopper::WgmmaWait<0>();
    hopper::FenceOperands(c);
    if (lane == 0) hopper::BarrierArrive(sm.Empty(prev.stage));
    retire_pending();
    ChunkToFragments(c, p, chunk * T::kChunk, t, frag);
    hopper::BarrierWait(sm.DFull(dbuf.stage), dbuf.phase);
    hopper::FenceOperands(e);
    hopper::GemmRsNMajor<64, kH, false>(e, frag, hopper::SmemAddr(sm.D(dbuf.stage)),
                                        T::kPanelBytes);
    FenceFragments(frag, e);
    pending = true;
    dprev = dbuf;
    dbuf.Next<T::kDBuffers>();
  }
  hopper::WgmmaWait<0>();
  hopper::FenceOperands(e);  // E is read after here, whether or not a product was pending
  retire_pending();
}

// The cluster's reduction of E: each CTA ends with a partial E over its chunks; CTA r sums
// the cluster's partials of its kH / cluster columns (width) and stores them. Two forms,
// HopperChainParams::reduce (measured against each other: docs/kernels-gemm-chain.md):
//  push: after a cluster barrier (every CTA done with its ring and D, which the receive slots
//    overlay), each consumer thread stores its accumulators straight into the shared memory
//    of the CTA that owns their columns, in the sender's slot (fire-and-forget remote
//    stores); after a second barrier every CTA sums its slots locally.
//  pull: each CTA stages its own partial locally, a cluster barrier, each CTA loads its
//    columns from every peer (all peers' loads issued before the sum), a second barrier so
//    no CTA exits while a peer still reads it.

// Push: this thread's accumulators (row 16 warp + g (+ 8), columns 8 j + 2 t (+ 1), the m64nN
// fragment's layout) into the owners' slots. Lanes t and t ^ 1 swap halves first, so each
// stores four consecutive columns of one row: an even t row g, columns 8 j + 2 t ..; an odd t
// row g + 8, columns 8 j + 2 (t - 1) ...
template <int kH>
__device__ __forceinline__ void PushPartial(const HopperChainSmem<kH>& sm,
                                            const float (&e)[HopperChainTraits<kH>::kEAcc],
                                            int cluster, int rank, int warp, int lane) {
  using T = HopperChainTraits<kH>;
  const int width = kH / cluster, stride = width + T::kSlotPad;
  const int shift = __ffs(width) - 1;  // width is a power of two
  const uint32_t slot = hopper::SmemAddr(sm.Partial()) +
                        static_cast<uint32_t>(rank * T::kRows * stride) * 4u;
  const int t = lane & 3, odd = t & 1;
  const int row = warp * 16 + (lane >> 2) + 8 * odd;
#pragma unroll
  for (int j = 0; j < kH / 8; ++j) {
    const float send0 = odd ? e[4 * j] : e[4 * j + 2], send1 = odd ? e[4 * j + 1] : e[4 * j + 3];
    const float got0 = __shfl_xor_sync(0xffffffffu, send0, 1);
    const float got1 = __shfl_xor_sync(0xffffffffu, send1, 1);
    const float4 v = odd ? make_float4(got0, got1, e[4 * j + 2], e[4 * j + 3])
                         : make_float4(e[4 * j], e[4 * j + 1], got0, got1);
    const int col = 8 * j + 2 * (t - odd), owner = col >> shift, cc = col - (owner << shift);
    const uint32_t at = slot + static_cast<uint32_t>(row * stride + cc) * 4u;
    hopper::StoreSharedCluster4(hopper::MapSharedRank(at, static_cast<uint32_t>(owner)), v);
  }
}

// Push: the sum of this CTA's received slots at row r, slice column cc (four columns).
template <int kH>
__device__ __forceinline__ float4 SumSlots(const HopperChainSmem<kH>& sm, int cluster, int r,
                                           int cc) {
  using T = HopperChainTraits<kH>;
  const int stride = kH / cluster + T::kSlotPad;
  const float* part = sm.Partial();
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int q = 0; q < kHopperChainClusterSlots; ++q) {
    if (q >= cluster) break;
    const float4 x = *reinterpret_cast<const float4*>(part + (q * T::kRows + r) * stride + cc);
    sum.x += x.x, sum.y += x.y, sum.z += x.z, sum.w += x.w;
  }
  return sum;
}

// Pull: this thread's accumulators into the CTA's own partial ([64][kH + kSlotPad]).
template <int kH>
__device__ __forceinline__ void StageOwnPartial(const HopperChainSmem<kH>& sm,
                                                const float (&e)[HopperChainTraits<kH>::kEAcc],
                                                int warp, int lane) {
  using T = HopperChainTraits<kH>;
  constexpr int kStride = kH + T::kSlotPad;
  float* part = sm.Partial();
  const int r0 = warp * 16 + (lane >> 2), t = lane & 3;
#pragma unroll
  for (int j = 0; j < kH / 8; ++j) {
    const int col = 8 * j + 2 * t;
    *reinterpret_cast<float2*>(part + r0 * kStride + col) = make_float2(e[4 * j], e[4 * j + 1]);
    *reinterpret_cast<float2*>(part + (r0 + 8) * kStride + col) =
        make_float2(e[4 * j + 2], e[4 * j + 3]);
  }
}

// Pull: the sum over the cluster's partials at row r, E column col (four columns).
template <int kH>
__device__ __forceinline__ float4 PullColumns(const HopperChainSmem<kH>& sm, int cluster, int r,
                                              int col) {
  using T = HopperChainTraits<kH>;
  const uint32_t at = hopper::SmemAddr(sm.Partial()) +
                      static_cast<uint32_t>(r * (kH + T::kSlotPad) + col) * 4u;
  float4 x[kHopperChainClusterSlots];
#pragma unroll
  for (int q = 0; q < kHopperChainClusterSlots; ++q)
    if (q < cluster) x[q] = hopper::LoadSharedCluster4(hopper::MapSharedRank(at, q));
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int q = 0; q < kHopperChainClusterSlots; ++q)
    if (q < cluster) sum.x += x[q].x, sum.y += x[q].y, sum.z += x[q].z, sum.w += x[q].w;
  return sum;
}

// E's four columns `col` .. of element `index` (row * h + col) of batch `batch`: + bias2,
// rounded to fp16 and stored.
__device__ __forceinline__ void StoreE(const HopperChainKernelParams& p, int batch, int64_t index,
                                       int col, float4 sum) {
  const __half* bias = static_cast<const __half*>(p.bias2);
  if (bias != nullptr) {
    sum.x += __half2float(bias[col]), sum.y += __half2float(bias[col + 1]);
    sum.z += __half2float(bias[col + 2]), sum.w += __half2float(bias[col + 3]);
  }
  __half* e = static_cast<__half*>(p.e) + batch * p.stride_e;
  const uint2 out = make_uint2(common::PackHalf2(sum.x, sum.y), common::PackHalf2(sum.z, sum.w));
  *reinterpret_cast<uint2*>(e + index) = out;
}

// The batch's fp32 sums of E in the workspace (splits > 1).
__device__ __forceinline__ float* WorkspaceOf(const HopperChainKernelParams& p, int batch) {
  return p.workspace + static_cast<int64_t>(batch) * p.m * p.h;
}

// CTA `rank`'s columns of its E tile: `sum(r, cc, col)` (row r of the tile, column cc of the
// slice, col of the tile; four columns), stored (StoreE) or, with several split groups, added
// into the workspace (FinishSplits stores them). Rows past m, columns past h skipped.
template <int kH, class Sum>
__device__ __forceinline__ void StoreColumns(const HopperChainKernelParams& p, int rank,
                                             const ChainTile& at, int tid, const Sum& sum_of) {
  using T = HopperChainTraits<kH>;
  const int width = kH / p.cluster, vecs = width / 4;
  for (int v = tid; v < T::kRows * vecs; v += T::kConsumerThreads) {
    const int r = v / vecs, cc = (v - r * vecs) * 4, col = rank * width + cc;
    const int row = at.m0 + r, ecol = at.h0 + col;
    if (row >= p.m || ecol >= p.h) continue;
    const float4 sum = sum_of(r, cc, col);
    const int64_t index = static_cast<int64_t>(row) * p.h + ecol;
    if (p.splits > 1)
      atomicAdd(reinterpret_cast<float4*>(WorkspaceOf(p, at.batch) + index), sum);
    else
      StoreE(p, at.batch, index, ecol, sum);
  }
}

// The consumer warpgroup's reduction and store (after ConsumeChain), in either form; every
// path passes the two cluster barriers the producer warp passes.
template <int kH>
__device__ __forceinline__ void ReduceE(const HopperChainSmem<kH>& sm,
                                        const HopperChainKernelParams& p,
                                        const float (&e)[HopperChainTraits<kH>::kEAcc], int rank,
                                        const ChainTile& at, int warp, int lane) {
  using T = HopperChainTraits<kH>;
  const int tid = warp * 32 + lane;
  if (p.reduce_pull) {
    hopper::NamedBarrierSync(1, T::kConsumerThreads);  // every warp's GEMMs done with D
    StageOwnPartial<kH>(sm, e, warp, lane);
    hopper::ClusterSync();  // every partial staged
    StoreColumns<kH>(p, rank, at, tid,
                     [&](int r, int, int col) { return PullColumns<kH>(sm, p.cluster, r, col); });
    hopper::ClusterSync();  // every peer done reading this CTA's partial
  } else {
    hopper::ClusterSync();  // every CTA done with its ring and D
    PushPartial<kH>(sm, e, p.cluster, rank, warp, lane);
    hopper::ClusterSync();  // every slot arrived
    StoreColumns<kH>(p, rank, at, tid,
                     [&](int r, int cc, int) { return SumSlots<kH>(sm, p.cluster, r, cc); });
  }
}

// Several split groups: once this CTA's columns are in the workspace (ReduceE), it counts
// itself on its tile (`tile`: batch, row tile, E tile); the last of the tile's cluster *
// splits CTAs to arrive adds bias2 to the workspace's sums, stores E and zeroes the sums and
// the count for the next launch (common::ArriveLast, as the attention kernel's split merge:
// kernels/attention_hopper/hopper_split.cuh).
template <int kH>
__device__ __forceinline__ void FinishSplits(const HopperChainSmem<kH>& sm,
                                             const HopperChainKernelParams& p,
                                             const ChainTile& at, int64_t tile, int tid) {
  using T = HopperChainTraits<kH>;
  if (!common::ArriveLast(p.arrivals + tile, p.cluster * p.splits, tid, 1, T::kConsumerThreads,
                          sm.LastFlag()))
    return;
  // The sums are loaded kBatch vectors a thread at a time before any is zeroed: one L2 round
  // trip per batch (a load after a store to another vector would wait for it otherwise).
  constexpr int kVecs = kH / 4, kTotal = T::kRows * kVecs, kBatch = 8;
  float* const sums = WorkspaceOf(p, at.batch);
  for (int v0 = tid; v0 < kTotal; v0 += kBatch * T::kConsumerThreads) {
    float4 sum[kBatch];
    int64_t index[kBatch];
    int ecol[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int v = v0 + i * T::kConsumerThreads, r = v / kVecs, row = at.m0 + r;
      ecol[i] = at.h0 + (v - r * kVecs) * 4;
      index[i] = v < kTotal && row < p.m && ecol[i] < p.h ? static_cast<int64_t>(row) * p.h + ecol[i]
                                                          : -1;
      sum[i] = index[i] >= 0 ? __ldcg(reinterpret_cast<const float4*>(sums + index[i]))
                             : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      if (index[i] < 0) continue;
      __stcg(reinterpret_cast<float4*>(sums + index[i]), make_float4(0.f, 0.f, 0.f, 0.f));
      StoreE(p, at.batch, index[i], ecol[i], sum[i]);
    }
  }
}

template <int kH>
__global__ void __launch_bounds__(HopperChainTraits<kH>::kThreads,
                                  HopperChainTraits<kH>::kMinBlocks)
    HopperChainKernel(const __grid_constant__ CUtensorMap a_map,
                      const __grid_constant__ CUtensorMap b_map,
                      const __grid_constant__ CUtensorMap d_map, const HopperChainKernelParams p) {
  using T = HopperChainTraits<kH>;
  extern __shared__ unsigned char smem_raw[];
  const uintptr_t raw = reinterpret_cast<uintptr_t>(smem_raw);
  const HopperChainSmem<kH> sm{reinterpret_cast<unsigned char*>((raw + 1023) & ~uintptr_t{1023})};
  const int x = static_cast<int>(blockIdx.x), y = static_cast<int>(blockIdx.y);
  const int rank = x % p.cluster, row_tile = y % p.row_tiles, h_tile = y / p.row_tiles;
  const ChainTile at{x, p.cluster * p.splits, row_tile * T::kRows, h_tile * kH,
                     static_cast<int>(blockIdx.z)};  // x = split group * cluster + rank
  const int warp = hopper::WarpIndexUniform(), lane = static_cast<int>(threadIdx.x) % 32;
  if (threadIdx.x == 0) sm.InitBarriers();
  __syncthreads();
  if (warp == 4) {
    if (lane == 0) {
      hopper::PrefetchTensorMap(&a_map);
      hopper::PrefetchTensorMap(&b_map);
      hopper::PrefetchTensorMap(&d_map);
      ProduceChain<kH>(sm, &a_map, &b_map, &d_map, p, at);
    }
    __syncwarp();
    hopper::ClusterSync();  // the reduction's two cluster barriers (ReduceE)
    hopper::ClusterSync();
  } else {
    float e[T::kEAcc];
#pragma unroll
    for (int i = 0; i < T::kEAcc; ++i) e[i] = 0.f;
    ConsumeChain<kH>(sm, p, at, lane, e);
    ReduceE<kH>(sm, p, e, rank, at, warp, lane);
    if (p.splits > 1)
      FinishSplits<kH>(sm, p, at,
                       (static_cast<int64_t>(at.batch) * p.row_tiles + row_tile) * p.h_tiles +
                           h_tile,
                       warp * 32 + lane);
  }
}

template <int kH>
engine::Status LaunchHopperChainVariant(const CUtensorMap& a, const CUtensorMap& b,
                                        const CUtensorMap& d, const HopperChainKernelParams& p,
                                        int64_t batch, void* stream) {
  using T = HopperChainTraits<kH>;
  const auto kernel = HopperChainKernel<kH>;
  // The shared-memory opt-in, once per device (the attribute is per device context).
  static std::atomic<uint64_t> configured{0};
  int device = 0;
  STOF_CUDA_TRY(cudaGetDevice(&device));
  const uint64_t bit = device >= 0 && device < 64 ? uint64_t{1} << device : 0;
  if (bit == 0 || (configured.load(std::memory_order_acquire) & bit) == 0) {
    STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       T::kSmemBytes));
    configured.fetch_or(bit, std::memory_order_release);
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(p.cluster * p.splits),
                        static_cast<unsigned>(p.row_tiles * p.h_tiles),
                        static_cast<unsigned>(batch));
  config.blockDim = dim3(T::kThreads);
  config.dynamicSmemBytes = T::kSmemBytes;
  config.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attribute[1] = {};
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = static_cast<unsigned>(p.cluster);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  STOF_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, a, b, d, p));
  return engine::Status::Ok();
}

}  // namespace stof::kernels::detail
