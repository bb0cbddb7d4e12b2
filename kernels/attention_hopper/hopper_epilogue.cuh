// The epilogue of the Hopper attention kernel: a consumer warpgroup normalises its 64 output rows,
// converts them to fp16 (or bf16) into its own rows of its work item's Q slot (free once its
// last S = Q K^T has completed) in the 128-byte-swizzled panel layout, and one thread stores
// them with TMA, which skips rows at or past L_q (and, packed, heads past the group). That thread waits until the store has read the
// rows, so the slot may take a later item's Q once its warp has released it. Part of
// hopper_attention_kernel.cuh.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/attention_hopper/hopper_scheduler.cuh"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/hopper/warpgroup.cuh"

namespace stof::kernels::detail {

// `o` holds rows `row` and `row + 8` (within the warpgroup's 64) of the 64 x kHeadDim output,
// already normalised; `stage` is the warpgroup's 64-row slice of the Q slot's panels, stored
// at `at` of the o map (RowCoords, hopper_scheduler.cuh); `barrier_id` a named barrier private
// to the warpgroup.
template <class T>
__device__ __forceinline__ void StoreOutputRows(const float (&o)[T::kOAcc], unsigned char* stage,
                                                const CUtensorMap* o_map, int row, int t,
                                                int thread_in_wg, int barrier_id,
                                                const HopperRowCoords& at, int batch) {
  // Every warp of the warpgroup has finished reading Q (its last wgmma waited) before any
  // thread overwrites its rows.
  hopper::NamedBarrierSync(barrier_id, hopper::kWarpgroupThreads);
#pragma unroll
  for (int j = 0; j < T::kHeadDim / 8; ++j) {
    const int panel = j / 8, chunk = j % 8;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row + 8 * h;
      unsigned char* dst = stage + panel * T::kQPanelBytes + r * T::kRowBytes +
                           ((chunk ^ (r & 7)) << 4) + 4 * t;
      *reinterpret_cast<uint32_t*>(dst) =
          common::PackPair<T::kBf16>(o[4 * j + 2 * h], o[4 * j + 2 * h + 1]);
    }
  }
  hopper::FenceProxyAsyncShared();
  hopper::NamedBarrierSync(barrier_id, hopper::kWarpgroupThreads);
  if (thread_in_wg == 0) {
#pragma unroll
    for (int pn = 0; pn < T::kPanels; ++pn)
      hopper::TmaStore5d(o_map, stage + pn * T::kQPanelBytes, 64 * pn, at.row, at.group_head,
                         at.kv_head, batch);
    hopper::TmaStoreCommit();
    hopper::TmaStoreWaitRead();
  }
}

}  // namespace stof::kernels::detail
