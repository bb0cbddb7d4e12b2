// The merge of a tile's chunks when its visited blocks are split over several CTAs
// (HopperAttentionParams::units): every chunk's consumer warpgroup leaves its partial state
// (unnormalised O, running max and partial sum per thread) in global memory and counts itself;
// the last of the chunks to arrive merges all of them, in chunk order, into its registers, as
// the online softmax merges blocks (a decode tile's few rows with all four warps' loads:
// MergeChunksByWarps), and goes on to the normal epilogue. Nobody waits for
// anybody: a chunk that is not last is done once it has arrived. Part of
// hopper_attention_kernel.cuh.
// Layout of one partial (one consumer warpgroup of one chunk): kOAcc / 4 + 1 float4 per thread,
// vector j of thread i at [j][i] (a warp's stores and loads are contiguous): O's accumulators
// in fragment order, then (max row g, max row g + 8, sum row g, sum row g + 8). The same thread
// of another chunk holds the same rows and O columns (the fragment layout does not depend on
// the keys), so partials merge thread by thread; the per-thread sums are partial over the quad
// and become full sums in FragmentSoftmax::Finish, after the merge, as without a split.
// Ordering: stores, then the warpgroup counts itself (common::ArriveLast: a barrier and one
// acquire-release atomic); the last one's loads follow its atomic and a barrier, and bypass
// L1 (ld.global.cg).
#pragma once

#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/attention_common/hopper_chunk.h"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/hopper/warpgroup.cuh"
#include "kernels/common/last_arrival.cuh"

namespace stof::kernels::detail {

template <class T>
struct SplitPartials {
  static constexpr int kVecs = T::kOAcc / 4 + 1;
  float4* base;
  int thread;  // within the warpgroup
  __device__ __forceinline__ float4* At(int64_t slot, int j) const {
    return base + (slot * kVecs + j) * hopper::kWarpgroupThreads + thread;
  }
};

// Merges chunks c0, c0 + step, ... (below `chunks`) of one thread's partials, in that order,
// into `o`, `mx` and `sum`: the rows' largest max over those chunks, then each chunk's sum and
// O scaled to it. Two passes, so no running rescale sits between one chunk's loads and the
// next (two chunks' loads at once spilled at the split kernels' register budget, ptxas). A row
// empty in every chunk keeps max -inf and subtracts 0, so no -inf - -inf arises.
template <class T, class SlotOf>
__device__ __forceinline__ void MergeChunkRange(const SplitPartials<T>& parts, const SlotOf& at,
                                                int c0, int step, int chunks, float scale,
                                                float (&o)[T::kOAcc], float (&mx)[2],
                                                float (&sum)[2]) {
  constexpr int kMl = SplitPartials<T>::kVecs - 1;  // the (max, sum) vector
  mx[0] = mx[1] = common::NegInf();
#pragma unroll 4
  for (int c = c0; c < chunks; c += step) {
    const float4 ml = __ldcg(parts.At(at(c), kMl));
    mx[0] = fmaxf(mx[0], ml.x);
    mx[1] = fmaxf(mx[1], ml.y);
  }
  float base[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) base[h] = mx[h] == common::NegInf() ? 0.f : mx[h] * scale;
  sum[0] = sum[1] = 0.f;
#pragma unroll
  for (int i = 0; i < T::kOAcc; ++i) o[i] = 0.f;
#pragma unroll 1
  for (int c = c0; c < chunks; c += step) {
    const float4 ml = __ldcg(parts.At(at(c), kMl));
    const float f0 = common::FastExp2(ml.x * scale - base[0]);
    const float f1 = common::FastExp2(ml.y * scale - base[1]);
    sum[0] += ml.z * f0;
    sum[1] += ml.w * f1;
#pragma unroll
    for (int j = 0; j < T::kOAcc / 4; ++j) {
      const float4 v = __ldcg(parts.At(at(c), j));
      o[4 * j] += v.x * f0;
      o[4 * j + 1] += v.y * f0;
      o[4 * j + 2] += v.z * f1;
      o[4 * j + 3] += v.w * f1;
    }
  }
}

// A decode tile holds a few query rows, all in warp 0 of the warpgroup: the four warps merge
// warp 0's partials together, warp w taking chunks w, w + 4, ..., so four chunks' loads are in
// flight where one was (the serial merge read one chunk per L2 round trip, which made more
// chunks cost more than they spread). Warps 1-3 then hand their merged state to warp 0 in turn
// through the warpgroup's rows of the Q slot (`stage`: its GEMMs have completed, and the
// epilogue's first barrier orders these reads before its writes), warp 0 merging in warp
// order, so every launch does the same operations. Vector j of lane l sits in panel j / 16 at
// vector (j % 16) * 32 + l: 16 vectors of 32 lanes fill one panel's 64 rows.
template <class T, class SlotOf>
__device__ __forceinline__ void MergeChunksByWarps(const float4* base, const SlotOf& at,
                                                   int chunks, float scale, int warp, int lane,
                                                   unsigned char* stage, int barrier_id,
                                                   float (&o)[T::kOAcc], float (&mx)[2],
                                                   float (&sum)[2]) {
  constexpr int kVecs = SplitPartials<T>::kVecs;
  static_assert(16 * 32 * 16 == 64 * T::kRowBytes, "16 vectors of 32 lanes fill a panel's rows");
  static_assert((kVecs + 15) / 16 <= T::kPanels, "a warp's state fits the warpgroup's rows");
  const SplitPartials<T> lane_parts{const_cast<float4*>(base), lane};  // warp 0's thread `lane`
  MergeChunkRange<T>(lane_parts, at, warp, hopper::kWarpgroupThreads / 32, chunks, scale, o, mx,
                     sum);
  const auto x = [&](int j) {
    return reinterpret_cast<float4*>(stage + (j / 16) * T::kQPanelBytes) + (j % 16) * 32 + lane;
  };
#pragma unroll 1
  for (int from = 1; from < hopper::kWarpgroupThreads / 32; ++from) {
    hopper::NamedBarrierSync(barrier_id, hopper::kWarpgroupThreads);
    if (warp == from) {
#pragma unroll
      for (int j = 0; j < T::kOAcc / 4; ++j)
        *x(j) = make_float4(o[4 * j], o[4 * j + 1], o[4 * j + 2], o[4 * j + 3]);
      *x(kVecs - 1) = make_float4(mx[0], mx[1], sum[0], sum[1]);
    }
    hopper::NamedBarrierSync(barrier_id, hopper::kWarpgroupThreads);
    if (warp == 0) {
      const float4 ml = *x(kVecs - 1);
      const float other_mx[2] = {ml.x, ml.y}, other_sum[2] = {ml.z, ml.w};
      float mine_f[2], other_f[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float m = fmaxf(mx[h], other_mx[h]);
        const float b = m == common::NegInf() ? 0.f : m * scale;
        mine_f[h] = common::FastExp2(mx[h] * scale - b);
        other_f[h] = common::FastExp2(other_mx[h] * scale - b);
        mx[h] = m;
        sum[h] = sum[h] * mine_f[h] + other_sum[h] * other_f[h];
      }
#pragma unroll
      for (int j = 0; j < T::kOAcc / 4; ++j) {
        const float4 v = *x(j);
        o[4 * j] = o[4 * j] * mine_f[0] + v.x * other_f[0];
        o[4 * j + 1] = o[4 * j + 1] * mine_f[0] + v.y * other_f[0];
        o[4 * j + 2] = o[4 * j + 2] * mine_f[1] + v.z * other_f[1];
        o[4 * j + 3] = o[4 * j + 3] * mine_f[1] + v.w * other_f[1];
      }
    }
  }
}

// Returns true when this warpgroup holds the merged state of all `chunks` chunks of its tile
// (in `o` and `softmax`) and must store the output; false when another chunk will. `tile`,
// `bh` (batch * heads + head), `chunk`, `chunks` and `slot` (this chunk's partial slot; the
// tile's chunks have slots slot - chunk .. slot - chunk + chunks - 1) come from the work item;
// `rows_here`: the query rows in this warpgroup's 64 (warps whose 16 rows hold none are not
// stored, so they leave no partials); `stage` the warpgroup's rows of the Q slot; `flag` is
// this consumer's shared flag; `barrier_id` a named barrier private to the warpgroup.
template <class T>
__device__ __forceinline__ bool CombineChunks(const HopperAttentionParams& p, float (&o)[T::kOAcc],
                                              common::FragmentSoftmax<T::kSAcc>& softmax, int tile,
                                              int bh, int chunk, int chunks, int slot, int consumer,
                                              int thread, int rows_here, unsigned char* stage,
                                              volatile int* flag, int barrier_id) {
  const int warp = thread / 32;
  const bool rows_used = rows_here > warp * 16;
  const SplitPartials<T> parts{reinterpret_cast<float4*>(p.split_partials), thread};
  constexpr int kMl = SplitPartials<T>::kVecs - 1;  // the (max, sum) vector
  const int64_t slot0 = SplitPartialIndex(bh, p.split_slots, slot - chunk);
  const int64_t mine = (slot0 + chunk) * T::kConsumers + consumer;
  if (rows_used) {
#pragma unroll
    for (int j = 0; j < T::kOAcc / 4; ++j)
      __stcg(parts.At(mine, j), make_float4(o[4 * j], o[4 * j + 1], o[4 * j + 2], o[4 * j + 3]));
    __stcg(parts.At(mine, kMl), make_float4(softmax.row_max[0], softmax.row_max[1],
                                            softmax.row_sum[0], softmax.row_sum[1]));
  }
  int32_t* const counter =
      p.split_arrivals + SplitArrivalIndex(bh, p.q_tiles, tile) * T::kConsumers + consumer;
  if (!common::ArriveLast(counter, chunks, thread, barrier_id, hopper::kWarpgroupThreads, flag))
    return false;
  // Rebuilt from the partials in chunk order, whichever chunk arrived last (its own partial is
  // read back like the others): the same floating-point operations in every launch, so a split
  // launch gives the same bits every time. Merging into the registers in arrival order did
  // not: one element of 768,000 differed between two launches (docs/kernels-hopper.md).
  const auto at = [&](int c) { return (slot0 + c) * T::kConsumers + consumer; };
  float mx[2], sum[2];
  if (rows_here <= 0) return true;  // none of this warpgroup's rows is stored
  if (rows_here <= 16) {
    MergeChunksByWarps<T>(parts.base, at, chunks, p.scale_log2, warp, thread % 32, stage,
                          barrier_id, o, mx, sum);
  } else {
    if (!rows_used) return true;
    MergeChunkRange<T>(parts, at, 0, 1, chunks, p.scale_log2, o, mx, sum);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    softmax.row_max[h] = mx[h];
    softmax.row_sum[h] = sum[h];
  }
  return true;
}

}  // namespace stof::kernels::detail
