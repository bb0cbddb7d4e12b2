// The load pipeline of the Hopper attention kernel: the shared-memory map of one CTA and the
// producer, one thread that issues every TMA copy (Q once, then K and V of each visited block
// into a ring of kStages stages) and waits only on the consumers' releases. Consumers wait on
// the *_full barriers and release a stage by arriving on *_empty once their wgmma has read it
// (one arrival per consumer warp). Part of hopper_attention_kernel.cuh.
// Phases: the i-th use of stage s = i % kStages has parity (i / kStages) & 1 on the full
// barriers; the producer waits on the empty barrier with the opposite parity, which the
// freshly initialised barrier satisfies for the first kStages uses.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/attention_hopper/hopper_block_list.cuh"
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"

namespace stof::kernels::detail {

template <class T>
struct HopperSmem {
  unsigned char* base;  // 1024-byte aligned
  __device__ __forceinline__ unsigned char* Q() const { return base; }
  __device__ __forceinline__ unsigned char* K(int stage) const {
    return base + T::kKOffset + stage * T::kKvTileBytes;
  }
  __device__ __forceinline__ unsigned char* V(int stage) const {
    return base + T::kVOffset + stage * T::kKvTileBytes;
  }
  __device__ __forceinline__ uint64_t* Bar(int i) const {
    return reinterpret_cast<uint64_t*>(base + T::kBarrierOffset) + i;
  }
  __device__ __forceinline__ uint64_t* QFull() const { return Bar(0); }
  __device__ __forceinline__ uint64_t* KFull(int s) const { return Bar(1 + s); }
  __device__ __forceinline__ uint64_t* VFull(int s) const { return Bar(1 + T::kStages + s); }
  __device__ __forceinline__ uint64_t* KEmpty(int s) const { return Bar(1 + 2 * T::kStages + s); }
  __device__ __forceinline__ uint64_t* VEmpty(int s) const { return Bar(1 + 3 * T::kStages + s); }

  // One thread: every barrier; the empty ones count one arrival per consumer warp.
  __device__ __forceinline__ void InitBarriers() const {
    hopper::BarrierInit(QFull(), 1);
    for (int s = 0; s < T::kStages; ++s) {
      hopper::BarrierInit(KFull(s), 1);
      hopper::BarrierInit(VFull(s), 1);
      hopper::BarrierInit(KEmpty(s), 4 * T::kConsumers);
      hopper::BarrierInit(VEmpty(s), 4 * T::kConsumers);
    }
    hopper::FenceBarrierInit();
  }
};

// Loads one K or V tile (all its 64-column panels) for keys key0 .. key0 + kBlockN - 1.
template <class T>
__device__ __forceinline__ void LoadKvTile(const CUtensorMap* map, unsigned char* dst,
                                           uint64_t* full, int key0, int head, int batch) {
  hopper::BarrierArriveExpectTx(full, T::kKvTileBytes);
#pragma unroll
  for (int pn = 0; pn < T::kPanels; ++pn)
    hopper::TmaLoad4d(dst + pn * T::kKvPanelBytes, map, full, 64 * pn, key0, head, batch);
}

// The producer thread's whole job for one Q tile.
template <class T>
__device__ __forceinline__ void ProduceTile(const HopperSmem<T>& sm, const CUtensorMap* q_map,
                                            const CUtensorMap* k_map, const CUtensorMap* v_map,
                                            const HopperAttentionParams& p,
                                            const HopperBlockList& list, int tile, int head,
                                            int batch) {
  hopper::BarrierArriveExpectTx(sm.QFull(), T::kQBytes);
#pragma unroll
  for (int pn = 0; pn < T::kPanels; ++pn)
    hopper::TmaLoad4d(sm.Q() + pn * T::kQPanelBytes, q_map, sm.QFull(), 64 * pn,
                      tile * T::kBlockM, head, batch);
  const int n = list.Count();
  for (int i = 0; i < n; ++i) {
    const int stage = i % T::kStages;
    const uint32_t parity = static_cast<uint32_t>(i / T::kStages) & 1u;
    const int key0 = list.Column(p, i) * T::kBlockN;
    hopper::BarrierWait(sm.KEmpty(stage), parity ^ 1u);
    LoadKvTile<T>(k_map, sm.K(stage), sm.KFull(stage), key0, head, batch);
    hopper::BarrierWait(sm.VEmpty(stage), parity ^ 1u);
    LoadKvTile<T>(v_map, sm.V(stage), sm.VFull(stage), key0, head, batch);
  }
}

}  // namespace stof::kernels::detail
