// The scheduler of the Hopper attention kernel: which work item (a Q tile of one (batch,
// head)) a CTA computes next. Items are numbered in the launch order
// (HopperAttentionParams::order: tile-major, or heavy first); CTA c starts with item c, and on
// a persistent grid (fewer CTAs than items) takes the next unstarted item from an atomic
// counter until none is left, so items start in launch order, as the hardware would start the
// CTAs of a full grid, without a CTA's start-up and with the next item's loads overlapping the
// last one's output. The producer thread resolves an item (its tile, head and visited-block
// lists: dependent global loads) and hands it to the consumers through shared memory
// (hopper_pipeline.cuh), so they never wait on those loads. Part of hopper_attention_kernel.cuh.
#pragma once

#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/attention_hopper/hopper_block_list.cuh"

namespace stof::kernels::detail {

struct HopperWorkItem {
  int64_t x;  // index in the launch order; >= items: no more work
  int tile, head, batch;
  HopperBlockList list;

  // Item x, or the end when x >= items (nothing is read then).
  __device__ __forceinline__ static HopperWorkItem Make(const HopperAttentionParams& p,
                                                        int64_t x) {
    if (x >= p.items) return End(p);
    HopperWorkItem w;
    w.x = x;
    const int64_t per_rank = p.order == 1 ? p.heads_total : p.q_tiles;
    const int64_t major = x / per_rank;
    const int minor = static_cast<int>(x - major * per_rank);
    w.tile = p.order == 1 ? __ldg(p.tile_order + major) : minor;
    const int bh = p.order == 1 ? minor : static_cast<int>(major);
    w.head = bh % p.heads;
    w.batch = bh / p.heads;
    w.list = HopperBlockList::ForTile(p, w.tile);
    return w;
  }
  __device__ __forceinline__ static HopperWorkItem End(const HopperAttentionParams& p) {
    HopperWorkItem w{};
    w.x = p.items;
    return w;
  }
  __device__ __forceinline__ bool Valid(const HopperAttentionParams& p) const {
    return x < p.items;
  }
};

// The next work item of a CTA: none on a full grid (one item per CTA); on a persistent grid
// the next unstarted one. The CTA that takes the last "none" resets the counter for the next
// launch: every CTA has then taken its last item.
__device__ __forceinline__ int64_t NextWorkItem(const HopperAttentionParams& p) {
  if (p.dynamic == 0) return p.items;
  const int64_t x = static_cast<int64_t>(gridDim.x) + atomicAdd(p.work_counter, 1);
  if (x >= p.items && atomicAdd(p.work_counter + 1, 1) == static_cast<int>(gridDim.x) - 1) {
    atomicExch(p.work_counter, 0);
    atomicExch(p.work_counter + 1, 0);
  }
  return x;
}

}  // namespace stof::kernels::detail
