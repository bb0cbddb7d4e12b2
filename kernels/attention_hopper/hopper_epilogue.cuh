// The epilogue of the Hopper attention kernel: a consumer warpgroup writes its 64 normalised
// output rows. Where shared memory has room for an O tile (kSeparateO), it converts them to
// fp16 into its rows of that tile in the 128-byte-swizzled panel layout and one thread stores
// them with TMA, which skips rows at or past L; that thread waits until the store has read
// the rows, so they are free again when this returns. Elsewhere (64 x 128 at d 64) each thread
// stores its rows straight from registers. Either way Q is not touched, so the producer loads
// the next item's Q while this runs. Part of hopper_attention_kernel.cuh.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/hopper/warpgroup.cuh"

namespace stof::kernels::detail {

// `o` holds rows `row` and `row + 8` (within the warpgroup's 64) of the 64 x kHeadDim output,
// already normalised; `stage` is the warpgroup's 64-row slice of the O panels; `barrier_id` a
// named barrier private to the warpgroup.
template <class T>
__device__ __forceinline__ void StoreOutputRows(const float (&o)[T::kOAcc], unsigned char* stage,
                                                const CUtensorMap* o_map, int row, int t,
                                                int thread_in_wg, int barrier_id, int row0,
                                                int head, int batch) {
  // The previous item's store has read the staging rows before any thread overwrites them.
  hopper::NamedBarrierSync(barrier_id, hopper::kWarpgroupThreads);
#pragma unroll
  for (int j = 0; j < T::kHeadDim / 8; ++j) {
    const int panel = j / 8, chunk = j % 8;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row + 8 * h;
      unsigned char* dst = stage + panel * T::kQPanelBytes + r * T::kRowBytes +
                           ((chunk ^ (r & 7)) << 4) + 4 * t;
      *reinterpret_cast<uint32_t*>(dst) = common::PackHalf2(o[4 * j + 2 * h], o[4 * j + 2 * h + 1]);
    }
  }
  hopper::FenceProxyAsyncShared();
  hopper::NamedBarrierSync(barrier_id, hopper::kWarpgroupThreads);
  if (thread_in_wg == 0) {
#pragma unroll
    for (int pn = 0; pn < T::kPanels; ++pn)
      hopper::TmaStore4d(o_map, stage + pn * T::kQPanelBytes, 64 * pn, row0, head, batch);
    hopper::TmaStoreCommit();
    hopper::TmaStoreWaitRead();
  }
}

// The same rows stored from registers (no O tile): thread (row, t) writes columns 8j + 2t,
// 8j + 2t + 1 of rows `row` and `row + 8`, four bytes each; a quad of threads covers 16
// contiguous bytes and the L2 merges the rest. Rows at or past L are skipped. The tensor
// map's rules (16-byte aligned base and strides) hold for p.o, so every store is aligned.
template <class T>
__device__ __forceinline__ void StoreOutputRowsDirect(const float (&o)[T::kOAcc],
                                                      const HopperAttentionParams& p, int row,
                                                      int t, int row0, int head, int batch) {
  __half* base = static_cast<__half*>(p.o) + batch * p.o_batch_stride + head * p.o_head_stride;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row0 + row + 8 * h;
    if (r >= p.seq_len) continue;
    __half* dst = base + static_cast<int64_t>(r) * p.o_row_stride + 2 * t;
#pragma unroll
    for (int j = 0; j < T::kHeadDim / 8; ++j)
      *reinterpret_cast<uint32_t*>(dst + 8 * j) =
          common::PackHalf2(o[4 * j + 2 * h], o[4 * j + 2 * h + 1]);
  }
}

}  // namespace stof::kernels::detail
