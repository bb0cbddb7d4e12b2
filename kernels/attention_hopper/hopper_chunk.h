// A contiguous chunk of a Q tile's visited blocks (part blocks first, then full blocks) when
// the tile's blocks are split over several CTAs: plain arithmetic on the two lists' ranges,
// for the kernel's HopperBlockList::Chunk (hopper_block_list.cuh) and the host tests.
// CUDA-free: host and device code under nvcc, host code elsewhere.
#pragma once

#if defined(__CUDACC__)
#define STOF_HOST_DEVICE __host__ __device__
#else
#define STOF_HOST_DEVICE
#endif

namespace stof::kernels::detail {

// Visited blocks of a tile: parts part blocks from part_begin, then fulls full blocks from
// full_begin (indices into the layout's part and full lists).
struct BlockRanges {
  int part_begin = 0, parts = 0, full_begin = 0, fulls = 0;
};

// Chunk `chunk` of `chunks` (0 <= chunk < chunks): visited blocks [n chunk / chunks,
// n (chunk + 1) / chunks) of the n = parts + fulls, so sizes differ by at most one and the
// chunks, in order, cover every block once; empty when n < chunks for some chunks.
STOF_HOST_DEVICE inline BlockRanges ChunkOfBlocks(const BlockRanges& all, int chunk,
                                                  int chunks) {
  const int n = all.parts + all.fulls;
  const int lo = n * chunk / chunks, hi = n * (chunk + 1) / chunks;
  BlockRanges c;
  const int part_hi = hi < all.parts ? hi : all.parts;
  c.part_begin = all.part_begin + (lo < all.parts ? lo : all.parts);
  c.parts = part_hi > lo ? part_hi - lo : 0;
  const int full_lo = lo > all.parts ? lo - all.parts : 0;
  c.full_begin = all.full_begin + full_lo;
  c.fulls = hi - all.parts > full_lo ? hi - all.parts - full_lo : 0;
  return c;
}

}  // namespace stof::kernels::detail

#undef STOF_HOST_DEVICE
