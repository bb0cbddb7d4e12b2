// The load pipeline of the Hopper attention kernel: the shared-memory map of one CTA and the
// producer, one thread that issues every TMA copy (per work item its Q into a ring of kQSlots
// slots, then K and V of each visited block into a ring of kStages stages, a part block's
// bitmap with its V where the map has room for it) and waits only on
// the consumers' releases. Consumers wait on
// the *_full barriers and release a stage by arriving on *_empty once their wgmma has read it
// (one arrival per consumer warp). Part of hopper_attention_kernel.cuh.
// Phases: the i-th use of stage s = i % kStages (i counted over all the CTA's work items) has
// parity (i / kStages) & 1 on the full barriers (HopperRingPos steps through them); the
// producer waits on the empty barrier with the opposite parity, which the freshly initialised
// barrier satisfies for the first kStages uses. Q likewise: the j-th work item's Q takes slot
// j % kQSlots with parity (j / kQSlots) & 1 on that slot's q_full and q_empty.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/attention_hopper/hopper_block_list.cuh"
#include "kernels/attention_hopper/hopper_scheduler.cuh"
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"

namespace stof::kernels::detail {

template <class T>
struct HopperSmem {
  unsigned char* base;  // 1024-byte aligned
  // Q slot `slot`; its consumers stage their output rows there once their GEMMs are done.
  __device__ __forceinline__ unsigned char* Q(int slot) const {
    return base + slot * T::kQBytes;
  }
  __device__ __forceinline__ unsigned char* K(int stage) const {
    return base + T::kKOffset + stage * T::kKvTileBytes;
  }
  __device__ __forceinline__ unsigned char* V(int stage) const {
    return base + T::kVOffset + stage * T::kKvTileBytes;
  }
  // The bitmap of the part block in stage `stage` (T::kBitmapsInSmem), loaded with its V.
  __device__ __forceinline__ uint64_t* Bitmap(int stage) const {
    return reinterpret_cast<uint64_t*>(base + T::kBitmapOffset + stage * T::kStagedBitmapBytes);
  }
  __device__ __forceinline__ uint64_t* Bar(int i) const {
    return reinterpret_cast<uint64_t*>(base + T::kBarrierOffset) + i;
  }
  static constexpr int kQ = 2 * T::kQSlots;  // the first K/V barrier
  __device__ __forceinline__ uint64_t* QFull(int slot) const { return Bar(slot); }
  __device__ __forceinline__ uint64_t* QEmpty(int slot) const { return Bar(T::kQSlots + slot); }
  __device__ __forceinline__ uint64_t* KFull(int s) const { return Bar(kQ + s); }
  __device__ __forceinline__ uint64_t* VFull(int s) const { return Bar(kQ + T::kStages + s); }
  __device__ __forceinline__ uint64_t* KEmpty(int s) const {
    return Bar(kQ + 2 * T::kStages + s);
  }
  __device__ __forceinline__ uint64_t* VEmpty(int s) const {
    return Bar(kQ + 3 * T::kStages + s);
  }
  // The work item of Q slot `slot` (or the end), written before the slot's q_full arrival,
  // whose release the consumers' wait acquires; it stays the item's until the slot's release.
  __device__ __forceinline__ HopperWorkItem* Work(int slot) const {
    static_assert(sizeof(HopperWorkItem) == T::kWorkItemBytes, "work slot size");
    return reinterpret_cast<HopperWorkItem*>(base + T::kWorkOffset) + slot;
  }
  // A consumer's flag for the chunk merge (hopper_split.cuh), after the work items.
  __device__ __forceinline__ volatile int* SplitFlag(int consumer) const {
    return reinterpret_cast<volatile int*>(base + T::kSplitFlagOffset) + consumer;
  }

  // One thread: every barrier; the empty ones count one arrival per consumer warp.
  __device__ __forceinline__ void InitBarriers() const {
    for (int q = 0; q < T::kQSlots; ++q) {
      hopper::BarrierInit(QFull(q), 1);
      hopper::BarrierInit(QEmpty(q), 4 * T::kConsumers);
    }
    for (int s = 0; s < T::kStages; ++s) {
      hopper::BarrierInit(KFull(s), 1);
      hopper::BarrierInit(VFull(s), 1);
      hopper::BarrierInit(KEmpty(s), 4 * T::kConsumers);
      hopper::BarrierInit(VEmpty(s), 4 * T::kConsumers);
    }
    hopper::FenceBarrierInit();
  }
};

// Loads one K or V tile (all its 64-column panels) for keys key0 .. key0 + kBlockN - 1;
// `extra_bytes` more are announced on `full` for a copy the caller issues next.
template <class T>
__device__ __forceinline__ void LoadKvTile(const CUtensorMap* map, unsigned char* dst,
                                           uint64_t* full, int key0, int head, int batch,
                                           uint32_t extra_bytes = 0) {
  hopper::BarrierArriveExpectTx(full, T::kKvTileBytes + extra_bytes);
#pragma unroll
  for (int pn = 0; pn < T::kPanels; ++pn)
    hopper::TmaLoad4d(dst + pn * T::kKvPanelBytes, map, full, 64 * pn, key0, head, batch);
}

// A position in a ring (K/V stages, or Q slots): the stage of one use and its parity.
using HopperRingPos = hopper::RingPos;

// Where a CTA is in its sequence of work items: the Q slot of its next item and that slot's
// parity (each item takes one phase of its slot's q_full / q_empty) and the ring position of
// its next K/V block. Producer and consumers each keep one and advance it identically.
struct HopperPipelineState {
  HopperRingPos q;  // stepped through T::kQSlots slots, as `ring` through the stages
  HopperRingPos ring;
  __device__ __forceinline__ int QSlot() const { return q.stage; }
  __device__ __forceinline__ uint32_t QParity() const { return q.phase; }
  // After an item of `item_blocks` blocks (once per item, so the division is off the loop).
  template <class T>
  __device__ __forceinline__ void Advance(int item_blocks) {
    q.Next<T::kQSlots>();
    const int s = ring.stage + item_blocks;
    ring.stage = s % T::kStages;
    ring.phase ^= static_cast<uint32_t>(s / T::kStages) & 1u;
  }
};

// Hands work item `w` (or the end: HopperWorkItem::End) to the consumers once they have
// released its Q slot (stored the output of the slot's previous item, staged there). Returns false, after
// q_full's arrival, when there is nothing to load (the end, or an item with no visited block).
template <class T>
__device__ __forceinline__ bool AnnounceItem(const HopperSmem<T>& sm, const HopperWorkItem& w,
                                             const HopperAttentionParams& p,
                                             const HopperPipelineState& at) {
  const int slot = at.QSlot();
  hopper::BarrierWait(sm.QEmpty(slot), at.QParity() ^ 1u);
  *sm.Work(slot) = w;
  if (w.Valid(p) && w.list.Count() > 0) return true;
  hopper::BarrierArrive(sm.QFull(slot));
  return false;
}

// The producer thread's whole job for one work item (a Q tile of one head, or of a group's
// heads when packed): Q, then K and V of each visited block into the ring. An item with no visited block loads nothing and only
// completes q_full's phase, so both sides keep counting items alike.
template <class T>
__device__ __forceinline__ void ProduceTile(const HopperSmem<T>& sm, const CUtensorMap* q_map,
                                            const CUtensorMap* k_map, const CUtensorMap* v_map,
                                            const HopperAttentionParams& p,
                                            const HopperWorkItem& w,
                                            const HopperPipelineState& at) {
  if (!AnnounceItem<T>(sm, w, p, at)) return;
  const int n = w.list.Count(), batch = w.batch, slot = at.QSlot();
  const HopperRowCoords q = RowCoords<T::kBlockM>(p, w.tile, w.head, 0);
  const int head = q.kv_head;  // the K and V of every block
  hopper::BarrierArriveExpectTx(sm.QFull(slot), T::kQBytes);
#pragma unroll
  for (int pn = 0; pn < T::kPanels; ++pn)
    hopper::TmaLoad5d(sm.Q(slot) + pn * T::kQPanelBytes, q_map, sm.QFull(slot), 64 * pn, q.row,
                      q.group_head, q.kv_head, batch);
  HopperRingPos pos = at.ring;
  // Each block's column is loaded one block ahead (the first one with the item), so the
  // dependent global load is off the path from a stage's release to its next copy.
  int column = w.first_column;
  for (int i = 0; i < n; ++i, pos.Next<T::kStages>()) {
    const int key0 = column * T::kBlockN;
    if (i + 1 < n) column = w.list.Column(p, i + 1);
    hopper::BarrierWait(sm.KEmpty(pos.stage), pos.phase ^ 1u);
    LoadKvTile<T>(k_map, sm.K(pos.stage), sm.KFull(pos.stage), key0, head, batch);
    hopper::BarrierWait(sm.VEmpty(pos.stage), pos.phase ^ 1u);
    // A part block's bitmap rides with its V (the consumers release V after the mask).
    const bool bitmap = T::kBitmapsInSmem && w.list.IsPart(i);
    LoadKvTile<T>(v_map, sm.V(pos.stage), sm.VFull(pos.stage), key0, head, batch,
                  bitmap ? T::kBitmapBytes : 0u);
    if (bitmap)
      hopper::BulkLoad(sm.Bitmap(pos.stage), w.list.template Bitmap<T::kBitmapWords>(p, i),
                       T::kBitmapBytes, sm.VFull(pos.stage));
  }
}

}  // namespace stof::kernels::detail
