// The K/V blocks one Q tile visits, in the order producer and consumers both walk them: the
// part blocks first (element mask from their bitmaps), then the full blocks (no mask work).
// Empty blocks are in neither list and are never loaded. A chunk of a tile's blocks (a split
// over several CTAs) is again such a list. Part of the Hopper attention kernel
// (hopper_attention_kernel.cuh).
#pragma once

#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/attention_common/hopper_chunk.h"

namespace stof::kernels::detail {

struct HopperBlockList {
  int part_begin = 0, parts = 0, full_begin = 0, fulls = 0;

  __device__ __forceinline__ static HopperBlockList ForTile(const HopperAttentionParams& p,
                                                           int tile) {
    HopperBlockList l;
    l.part_begin = __ldg(p.part_row_ptr + tile);
    l.parts = __ldg(p.part_row_ptr + tile + 1) - l.part_begin;
    l.full_begin = __ldg(p.full_row_ptr + tile);
    l.fulls = __ldg(p.full_row_ptr + tile + 1) - l.full_begin;
    return l;
  }
  __device__ __forceinline__ int Count() const { return parts + fulls; }
  // Chunk `chunk` of `chunks` of these blocks in visited order (hopper_chunk.h), as a list of
  // its own: a heavy tile's blocks split over several CTAs (HopperAttentionParams::units).
  __device__ __forceinline__ HopperBlockList Chunk(int chunk, int chunks) const {
    const BlockRanges c = ChunkOfBlocks(BlockRanges{part_begin, parts, full_begin, fulls},
                                        chunk, chunks);
    HopperBlockList l;
    l.part_begin = c.part_begin, l.parts = c.parts;
    l.full_begin = c.full_begin, l.fulls = c.fulls;
    return l;
  }
  __device__ __forceinline__ bool IsPart(int i) const { return i < parts; }
  // Block column of the i-th visited block.
  __device__ __forceinline__ int Column(const HopperAttentionParams& p, int i) const {
    return i < parts ? __ldg(p.part_col_idx + part_begin + i)
                     : __ldg(p.full_col_idx + full_begin + (i - parts));
  }
  // Bitmap of the i-th visited block (a part block).
  template <int kBitmapWords>
  __device__ __forceinline__ const uint64_t* Bitmap(const HopperAttentionParams& p, int i) const {
    return p.part_bitmaps + static_cast<size_t>(part_begin + i) * kBitmapWords;
  }
};

}  // namespace stof::kernels::detail
