// The K/V blocks one Q tile visits, in the order producer and consumers both walk them: the
// part blocks first (element mask from their bitmaps), then the full blocks (no mask work).
// Empty blocks are in neither list and are never loaded. A chunk of a tile's blocks (a split
// over several CTAs) is again such a list. Part of the Hopper attention kernel
// (hopper_attention_kernel.cuh).
#pragma once

#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"

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
  // Chunk `chunk` of `chunks` of these blocks in visited order (a contiguous range, sizes
  // differing by at most one; empty when there are fewer blocks than chunks), as a list of
  // its own: a tile's blocks split over several CTAs (HopperAttentionParams::kv_splits).
  __device__ __forceinline__ HopperBlockList Chunk(int chunk, int chunks) const {
    const int n = Count();
    const int lo = n * chunk / chunks, hi = n * (chunk + 1) / chunks;
    HopperBlockList c;
    const int part_hi = hi < parts ? hi : parts;
    c.part_begin = part_begin + (lo < parts ? lo : parts);
    c.parts = part_hi > lo ? part_hi - lo : 0;
    const int full_lo = lo > parts ? lo - parts : 0;
    c.full_begin = full_begin + full_lo;
    c.fulls = hi - parts > full_lo ? hi - parts - full_lo : 0;
    return c;
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
