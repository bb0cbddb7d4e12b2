// Splitting heavy Q tiles' blocks over several CTAs: the work units (PlanHopperUnits: the
// tiles in heavy-first order, each heavy tile cut into chunks; built on the host by
// DeviceBlockLayout::Upload) and a chunk's blocks (ChunkOfBlocks: plain arithmetic on the
// part and full lists' ranges, for the kernel's HopperBlockList::Chunk and the host tests).
// CUDA-free: host and device code under nvcc, host code elsewhere.
#pragma once

#include <cstdint>
#include <vector>

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

// One work unit of a split launch: chunk `chunk` of `chunks` of Q tile `tile`'s visited blocks
// (chunks = 1: the whole tile); `slot` numbers the chunks of split tiles (chunks > 1) 0, 1,
// ... in unit order, so the chunks of one tile have consecutive slots (their partials, for
// the merge) and unsplit units have -1. On the device two int32: tile, then the other three
// as one "piece" (PackPiece).
struct HopperUnit {
  int32_t tile = 0, chunk = 0, chunks = 1, slot = -1;
};

// chunk in bits 0-4, chunks - 1 in bits 5-9, slot + 1 from bit 10 (so 0 is a whole tile).
// One int in the kernel's work item instead of three: the 128-row kernels' producer spilled
// 4 bytes more with three (ptxas, nvcc 13.0).
STOF_HOST_DEVICE inline int32_t PackPiece(int32_t chunk, int32_t chunks, int32_t slot) {
  return chunk | (chunks - 1) << 5 | (slot + 1) << 10;
}
STOF_HOST_DEVICE inline int32_t PieceChunk(int32_t piece) { return piece & 31; }
STOF_HOST_DEVICE inline int32_t PieceChunks(int32_t piece) { return ((piece >> 5) & 31) + 1; }
STOF_HOST_DEVICE inline int32_t PieceSlot(int32_t piece) { return (piece >> 10) - 1; }

struct HopperUnitPlan {
  std::vector<HopperUnit> units;  // in launch order: heavy first
  int32_t split_slots = 0;        // chunks of split tiles (slots 0 .. split_slots - 1)
  int32_t cut = 0;                // the blocks per chunk aimed at
};

// Where a split launch's merge keeps its state (hopper_split.cuh), per (batch, head) `bh`
// of `heads_total`: the partials of chunk slot `slot` at SplitPartialIndex ([heads_total]
// [split_slots]), the arrival counter of Q tile `tile` at SplitArrivalIndex ([heads_total]
// [q_tiles]); each entry holds one per consumer warpgroup.
STOF_HOST_DEVICE inline int64_t SplitPartialIndex(int bh, int split_slots, int slot) {
  return static_cast<int64_t>(bh) * split_slots + slot;
}
STOF_HOST_DEVICE inline int64_t SplitArrivalIndex(int bh, int q_tiles, int tile) {
  return static_cast<int64_t>(bh) * q_tiles + tile;
}

// At most this many chunks per tile (a tile of more blocks gets longer chunks; PackPiece has
// room for 32).
inline constexpr int kMaxHopperChunks = 16;

// The fewest blocks a chunk gets from the fill rule below: a chunk's merge writes and reads
// its partial state (about one K/V block's bytes at d 128), so shorter chunks cost more than
// they spread.
inline constexpr int32_t kMinChunkBlocks = 4;

// The units of a launch whose heavy tiles are split: `counts` holds each tile's visited blocks
// and `heavy_first` the tiles by count, most first. A tile with more than `cut` blocks becomes
// ceil(count / cut) chunks (at most kMaxHopperChunks) of near-equal size, listed together at
// the tile's place in heavy_first; the others stay whole. `cut` <= 0 picks
// max(4, 2 x the mean count, rounded up): global rows of Longformer or BigBird (a tile that
// visits every block while the rest visit a band) split, dense and causal masks do not.
// `fill_units` > 0 (the units per head that fill the GPU: resident CTAs / heads of the launch)
// adds the fill rule for layouts of few tiles (a decode step: one tile per head visits every
// block of the KV cache, flash-decoding): when the tiles with blocks are fewer than half of
// fill_units, the cut shrinks so that each such tile splits into about fill_units / tiles
// chunks (at most kMaxHopperChunks, at least kMinChunkBlocks blocks each).
inline HopperUnitPlan PlanHopperUnits(const std::vector<int32_t>& counts,
                                      const std::vector<int32_t>& heavy_first, int32_t cut,
                                      double fill_units = 0) {
  HopperUnitPlan plan;
  if (cut <= 0) {
    int64_t total = 0, tiles = 0;
    int32_t most = 0;
    for (int32_t c : counts) {
      total += c;
      tiles += c > 0 ? 1 : 0;
      most = c > most ? c : most;
    }
    const int64_t n = counts.empty() ? 1 : static_cast<int64_t>(counts.size());
    cut = static_cast<int32_t>((2 * total + n - 1) / n);
    if (cut < 4) cut = 4;
    if (tiles > 0 && 2.0 * static_cast<double>(tiles) < fill_units) {
      int64_t chunks = static_cast<int64_t>(fill_units / static_cast<double>(tiles) + 0.5);
      if (chunks > kMaxHopperChunks) chunks = kMaxHopperChunks;
      int32_t fill_cut = static_cast<int32_t>((most + chunks - 1) / chunks);
      if (fill_cut < kMinChunkBlocks) fill_cut = kMinChunkBlocks;
      if (fill_cut < cut) cut = fill_cut;
    }
  }
  plan.cut = cut;
  for (int32_t tile : heavy_first) {
    const int32_t count = counts[static_cast<size_t>(tile)];
    int32_t chunks = count > cut ? (count + cut - 1) / cut : 1;
    if (chunks > kMaxHopperChunks) chunks = kMaxHopperChunks;
    for (int32_t c = 0; c < chunks; ++c)
      plan.units.push_back({tile, c, chunks, chunks > 1 ? plan.split_slots++ : -1});
  }
  return plan;
}

// Whether splitting heavy tiles pays on a launch (the rule behind the default): the heaviest
// tile holds more than kSplitPaysFactor times the mean blocks per resident CTA of a whole-tile
// launch (every head's blocks over the CTAs that run at once). Below that the launch is long
// anyway, and the split kernels' two CTAs per SM (against 3-4 for the whole-tile kernels) cost
// more than the shorter tail gains (measured on longformer rows either side of the factor:
// docs/kernels-hopper.md, "Splitting heavy tiles' blocks").
inline constexpr int64_t kSplitPaysFactor = 2;
inline bool SplitPays(int64_t max_tile_blocks, int64_t blocks_per_head, int64_t heads_total,
                      int64_t resident_ctas) {
  return max_tile_blocks * resident_ctas > kSplitPaysFactor * blocks_per_head * heads_total;
}

}  // namespace stof::kernels::detail

#undef STOF_HOST_DEVICE
