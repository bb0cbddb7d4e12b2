// The scheduler of the Hopper attention kernel: which work item (a Q tile of one (batch,
// head)) a CTA computes next. Items are numbered in the launch order
// (HopperAttentionParams::order: tile-major, or heavy first; in a split launch the layout's
// work units, heavy tiles cut into chunks, heavy first); CTA c starts with item c, and on
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
  // Split launches (HopperAttentionParams::units): which chunk of the tile's visited blocks,
  // of how many, and its partial slot, packed (PackPiece in hopper_chunk.h; 0: the whole
  // tile).
  int piece;
  HopperBlockList list;
  int first_column = 0;  // block column of the first visited block

  // Item x, or the end when x >= items (nothing is read then). kUnits: the kernel may run a
  // split launch (p.units); the other kernels compile without that path.
  template <bool kUnits>
  __device__ __forceinline__ static HopperWorkItem Make(const HopperAttentionParams& p, int64_t x) {
    if (x >= p.items) return End(p);
    HopperWorkItem w;
    w.x = x;
    w.piece = 0;
    // x < items < 2^31 (checked at launch): 32-bit division, not the 64-bit routine.
    const unsigned ux = static_cast<unsigned>(x);
    const bool split = kUnits && p.units != nullptr;
    const bool heavy_first = p.order == 1 || split;
    const unsigned per_rank = static_cast<unsigned>(heavy_first ? p.heads_total : p.q_tiles);
    const unsigned major = ux / per_rank;
    const int minor = static_cast<int>(ux - major * per_rank);
    if (split) {
      w.tile = __ldg(p.units + 2 * major);
      w.piece = __ldg(p.units + 2 * major + 1);
    } else {
      w.tile = heavy_first ? __ldg(p.tile_order + major) : minor;
    }
    const int bh = heavy_first ? minor : static_cast<int>(major);
    w.head = bh % p.heads;
    w.batch = bh / p.heads;
    // Masks per batch row / head: the item's pattern's block row.
    const int pattern = p.pattern_of != nullptr ? __ldg(p.pattern_of + bh) : 0;
    w.list = HopperBlockList::ForTile(p, w.tile + pattern * (p.q_tiles + 1));
    if (w.piece != 0) w.list = w.list.Chunk(PieceChunk(w.piece), PieceChunks(w.piece));
    w.first_column = w.list.Count() > 0 ? w.list.Column(p, 0) : 0;
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

  // The item as every lane of the warp sees it, from lane 0 (whole warp). A consumer reads
  // the item from shared memory, and the compiler cannot tell that such a value is the same
  // in every lane: the ring stage derived from the block count, hence every wgmma descriptor
  // and barrier address, was computed in per-thread registers and moved to uniform ones
  // before each wgmma (R2UR): more instructions and a slower kernel at batch 1 (measured:
  // docs/kernels-hopper.md, "Warp-uniform work items"). A shuffle from a fixed lane is
  // uniform.
  __device__ __forceinline__ HopperWorkItem WarpUniform() const {
    HopperWorkItem w;
    w.x = __shfl_sync(0xffffffffu, x, 0);
    w.tile = __shfl_sync(0xffffffffu, tile, 0);
    w.head = __shfl_sync(0xffffffffu, head, 0);
    w.batch = __shfl_sync(0xffffffffu, batch, 0);
    w.piece = __shfl_sync(0xffffffffu, piece, 0);
    w.list.part_begin = __shfl_sync(0xffffffffu, list.part_begin, 0);
    w.list.parts = __shfl_sync(0xffffffffu, list.parts, 0);
    w.list.full_begin = __shfl_sync(0xffffffffu, list.full_begin, 0);
    w.list.fulls = __shfl_sync(0xffffffffu, list.fulls, 0);
    w.first_column = __shfl_sync(0xffffffffu, first_column, 0);
    return w;
  }
};

// Where a work item's rows live in the 5-D q / o views ([B][H_kv][group][L_q][d]; the
// HopperAttentionParams comment): the row, the query head within its group and the key/value
// head of the rows `offset`.. of the item's tile. Unpacked: one query head's rows; packed:
// rows of kBlockM / Lp heads of the group, from query row 0.
struct HopperRowCoords {
  int row, group_head, kv_head;
};
template <int kBlockM>
__device__ __forceinline__ HopperRowCoords RowCoords(const HopperAttentionParams& p, int tile,
                                                     int head, int offset) {
  const int m = tile * kBlockM + offset;
  if (p.pack_rows == 0) return {m, head % p.kv_group, head / p.kv_group};
  return {0, m / p.pack_rows, head};
}
// The rows of tile `tile` that hold query rows, from its first: unpacked the rows before L_q,
// packed the rows of the group's heads (their padding rows past L_q included).
template <int kBlockM>
__device__ __forceinline__ int QueryRowsOfTile(const HopperAttentionParams& p, int tile) {
  const int rows = p.pack_rows == 0 ? p.q_len : p.kv_group * p.pack_rows;
  return rows - tile * kBlockM;
}
// The key/value head of a work item's head (see RowCoords).
__device__ __forceinline__ int KvHeadOf(const HopperAttentionParams& p, int head) {
  return p.pack_rows == 0 ? head / p.kv_group : head;
}

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
