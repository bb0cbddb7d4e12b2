// Device copies of the sparse-attention index structures, built once per mask and reused by
// every launch: DeviceBlockLayout (a BlockLayout's load CSR, part indices, part and full CSRs
// and part bitmaps, for the block-wise kernels) and DeviceRowLayout (per-row column lists, for
// the row-wise kernel), plus DeviceLayoutCache, which CudaBackend uses to build each of them
// once per (mask hash, size, block size). CUDA-free header; device pointers are plain typed
// pointers that host code must not dereference.
// Invariants: a layout owns one device allocation for its arrays (immutable after Upload) and,
// once a split launch asked for it, one for the split's scratch, both freed by its destructor
// (on the device that was current at upload); cached layouts are shared_ptr<const ...>, so an
// entry evicted from the cache stays valid for any caller still holding it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "engine/core/status.h"
#include "engine/layout/block_layout.h"
#include "engine/mask/gqa_pack.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_set.h"

namespace stof::kernels {

// Where the time of preparing a layout went, reported separately: host_build_ms is building
// the host index arrays from the mask (BlockLayout::Build, or the per-row column lists),
// upload_ms is cudaMalloc + one host-to-device copy (synchronous).
struct LayoutPrepTiming {
  double host_build_ms = 0;
  double upload_ms = 0;
};

class DeviceBlockLayout {
 public:
  // Builds the BlockLayout of `mask` (L_q x L_k) at block_m x block_n on the host, then
  // uploads it. `split_cut`: the blocks per chunk of the Hopper kernel's split units
  // (HopperUnits); 0 picks the default rule (PlanHopperUnits), n > 0 forces n. `packing`
  // (engine/mask/gqa_pack.h; the Hopper kernel only): the layout of the packed mask, whose
  // rows are `packing.group` query heads' rows.
  // `fill_units` > 0: the Hopper split's fill rule for layouts of few tiles (PlanHopperUnits,
  // kernels/attention_common/hopper_chunk.h): resident CTAs / heads of the launches.
  static engine::Expected<std::unique_ptr<DeviceBlockLayout>> Create(
      const engine::Mask& mask, int64_t block_m, int64_t block_n, int32_t split_cut = 0,
      const engine::GqaPacking& packing = {}, double fill_units = 0);
  // Uploads an existing layout (host_build_ms stays 0). With `packing`, `layout` is the
  // packed mask's and `query_len` the query length it serves.
  static engine::Expected<std::unique_ptr<DeviceBlockLayout>> Upload(
      const engine::BlockLayout& layout, int32_t split_cut = 0,
      const engine::GqaPacking& packing = {}, int64_t query_len = 0, double fill_units = 0);
  // Masks per batch row / head (engine/mask/mask_set.h; the Hopper kernel only): one layout
  // per pattern of `set` (packed per `packing`, which needs set.GroupsShareAPattern(group)),
  // uploaded together, their block lists concatenated (pattern p's block rows are rows
  // p * (BlockRows() + 1).. of the row pointers, which index the concatenated lists), and the
  // pattern of each work item's (batch, head): set.ItemPatterns. Heavy-first order by each
  // tile's most visited blocks over the patterns; no split units.
  static engine::Expected<std::unique_ptr<DeviceBlockLayout>> CreatePatterns(
      const engine::MaskSet& set, int64_t block_m, int64_t block_n,
      const engine::GqaPacking& packing = {});
  ~DeviceBlockLayout();
  DeviceBlockLayout(const DeviceBlockLayout&) = delete;
  DeviceBlockLayout& operator=(const DeviceBlockLayout&) = delete;

  int64_t BlockM() const { return m_block_m; }
  int64_t BlockN() const { return m_block_n; }
  int64_t SeqLen() const { return m_seq_len; }  // query length L_q of the mask
  int64_t KeyLen() const { return m_key_len; }   // key length L_k
  // Unpacked (group 0), or the packing of the layout's rows (gqa_pack.h).
  const engine::GqaPacking& Packing() const { return m_packing; }
  int64_t BlockRows() const { return m_block_rows; }
  int64_t ValidBlocks() const { return m_valid_blocks; }
  int64_t PartBlocks() const { return m_part_blocks; }
  int64_t BitmapWords() const { return m_bitmap_words; }  // 64-bit words per part block
  // Patterns (CreatePatterns): how many (1 for one mask), and the device array of each work
  // item's pattern ([PatternItems()]: batch x item heads; null and 0 for one mask).
  // ValidBlocks() and PartBlocks() count every pattern's blocks; ItemValidBlocks() the blocks
  // the items visit together (one mask: ValidBlocks() per item).
  int64_t Patterns() const { return m_patterns; }
  const int32_t* ItemPatterns() const { return m_item_patterns; }
  int64_t PatternItems() const { return m_pattern_items; }
  int64_t ItemValidBlocks() const { return m_item_valid_blocks; }
  int64_t DeviceBytes() const { return static_cast<int64_t>(m_bytes); }
  const LayoutPrepTiming& Timing() const { return m_timing; }

  // Device arrays: load_row_ptr [BlockRows()+1], load_col_idx and load_part_idx
  // [ValidBlocks()] (part index, -1 for a full block), part bitmaps [PartBlocks() *
  // BitmapWords()] (row-major BM x BN bits per part block, as BlockLayout::PartBitmaps()).
  const int32_t* LoadRowPtr() const { return m_load_row_ptr; }
  const int32_t* LoadColIdx() const { return m_load_col_idx; }
  const int32_t* LoadPartIdx() const { return m_load_part_idx; }
  const uint64_t* PartBitmaps() const { return m_part_bitmaps; }
  // The same blocks as two lists per block row (the Hopper kernel visits part blocks first,
  // then full blocks): part_row_ptr / full_row_ptr [BlockRows()+1], part_col_idx (part block j
  // owns bitmap j), full_col_idx.
  const int32_t* PartRowPtr() const { return m_part_row_ptr; }
  const int32_t* PartColIdx() const { return m_part_col_idx; }
  const int32_t* FullRowPtr() const { return m_full_row_ptr; }
  const int32_t* FullColIdx() const { return m_full_col_idx; }
  // [BlockRows()]: block rows ordered by valid blocks, most first (ties by index).
  const int32_t* HeavyFirstRows() const { return m_heavy_first; }
  // [2] zeros: the Hopper kernel's persistent scheduler (next work item, CTAs done); the last
  // CTA of a launch sets both back to zero. The only device state kernels write, so launches
  // that use one layout must be ordered (one stream, or events between streams).
  int32_t* WorkCounter() const { return m_work_counter; }
  // The Hopper kernel's work units when heavy tiles are split over CTAs (PlanHopperUnits in
  // kernels/attention_common/hopper_chunk.h): [HopperUnitCount()][2] int32 (tile and the
  // packed chunk, chunks and slot: PackPiece), heavy first; HopperSplitSlots() chunks of split
  // tiles, 0 when no tile has more than HopperSplitCut() blocks (then a split launch would not
  // differ).
  const int32_t* HopperUnits() const { return m_units; }
  int64_t HopperUnitCount() const { return m_unit_count; }
  int32_t HopperSplitSlots() const { return m_split_slots; }
  int32_t HopperSplitCut() const { return m_split_cut; }
  int64_t MaxTileBlocks() const { return m_max_tile_blocks; }  // visited blocks, heaviest tile

  // Scratch of the split's merge: `counter_bytes` of arrival counters (zero between
  // launches: every launch leaves them so) and `partial_bytes` of partial results, in one
  // allocation kept with the layout. Grown when too small, but not while `stream` (a
  // cudaStream_t) is being captured into a CUDA graph: then both pointers are null and the
  // launch must not split. Growing frees the old allocation after a device synchronisation.
  // Like WorkCounter, the launches that use one layout must be ordered.
  struct SplitScratch {
    int32_t* arrivals = nullptr;
    float* partials = nullptr;
  };
  engine::Expected<SplitScratch> SplitWorkspace(size_t counter_bytes, size_t partial_bytes,
                                                void* stream) const;
  size_t SplitWorkspaceBytes() const;  // 0 before a split launch made it

 private:
  DeviceBlockLayout() = default;
  // Upload of one layout per pattern (one: Upload) with each item's pattern (empty: one mask).
  static engine::Expected<std::unique_ptr<DeviceBlockLayout>> UploadAll(
      const std::vector<const engine::BlockLayout*>& layouts,
      const std::vector<int32_t>& item_patterns, int32_t split_cut,
      const engine::GqaPacking& packing, int64_t query_len, double fill_units);
  int64_t m_block_m = 0, m_block_n = 0, m_seq_len = 0, m_key_len = 0, m_block_rows = 0;
  engine::GqaPacking m_packing;
  int64_t m_patterns = 1, m_pattern_items = 0, m_item_valid_blocks = 0;
  const int32_t* m_item_patterns = nullptr;
  int64_t m_valid_blocks = 0, m_part_blocks = 0, m_bitmap_words = 0;
  void* m_base = nullptr;
  size_t m_bytes = 0;
  const int32_t* m_load_row_ptr = nullptr;
  const int32_t* m_load_col_idx = nullptr;
  const int32_t* m_load_part_idx = nullptr;
  const uint64_t* m_part_bitmaps = nullptr;
  const int32_t* m_part_row_ptr = nullptr;
  const int32_t* m_part_col_idx = nullptr;
  const int32_t* m_full_row_ptr = nullptr;
  const int32_t* m_full_col_idx = nullptr;
  const int32_t* m_heavy_first = nullptr;
  int32_t* m_work_counter = nullptr;
  const int32_t* m_units = nullptr;
  int64_t m_unit_count = 0;
  int32_t m_split_slots = 0, m_split_cut = 0;
  int64_t m_max_tile_blocks = 0;
  LayoutPrepTiming m_timing;
  // The split's scratch (SplitWorkspace): grown on demand by const launches.
  mutable std::mutex m_split_mutex;
  mutable void* m_split_base = nullptr;
  mutable size_t m_split_counter_bytes = 0, m_split_partial_bytes = 0;
};

class DeviceRowLayout {
 public:
  // Largest number of attended elements accepted (1 GiB of column indices): the row-wise
  // kernel is for very sparse masks; a denser one is refused with a message pointing to the
  // block-wise kernel instead of allocating gigabytes.
  static constexpr int64_t kMaxNnz = int64_t{1} << 28;

  // Per-row column lists of `mask` (CSR: row_ptr [L+1], col_idx [nnz], columns increasing).
  static engine::Expected<std::unique_ptr<DeviceRowLayout>> Create(const engine::Mask& mask);
  ~DeviceRowLayout();
  DeviceRowLayout(const DeviceRowLayout&) = delete;
  DeviceRowLayout& operator=(const DeviceRowLayout&) = delete;

  int64_t SeqLen() const { return m_seq_len; }
  int64_t Nnz() const { return m_nnz; }
  int64_t DeviceBytes() const { return static_cast<int64_t>(m_bytes); }
  const LayoutPrepTiming& Timing() const { return m_timing; }
  const int32_t* RowPtr() const { return m_row_ptr; }  // device, [L + 1]
  const int32_t* ColIdx() const { return m_col_idx; }  // device, [nnz]

 private:
  DeviceRowLayout() = default;
  int64_t m_seq_len = 0, m_nnz = 0;
  void* m_base = nullptr;
  size_t m_bytes = 0;
  const int32_t* m_row_ptr = nullptr;
  const int32_t* m_col_idx = nullptr;
  LayoutPrepTiming m_timing;
};

// Layouts keyed by (Mask::Hash(), rows, cols, kind, block_m, block_n). The hash is a 64-bit
// FNV-1a of the mask bits: distinct masks colliding is possible in principle (about 2^-64 per
// pair) and is accepted, as plans do. Hashing reads the whole mask (O(L^2 / 64) words, about
// 2 ms at L = 4096): timed loops should fetch the layout once and call the Launch* functions.
// Thread-safe. Holds at most kMaxEntries layouts; beyond that the least recently used goes.
class DeviceLayoutCache {
 public:
  static constexpr size_t kMaxEntries = 32;

  engine::Expected<std::shared_ptr<const DeviceBlockLayout>> GetBlock(const engine::Mask& mask,
                                                                      int64_t block_m,
                                                                      int64_t block_n);
  engine::Expected<std::shared_ptr<const DeviceRowLayout>> GetRow(const engine::Mask& mask);

  size_t Size() const;
  int64_t Hits() const;    // lookups answered from the cache
  int64_t Misses() const;  // lookups that built and uploaded a layout
  void Clear();

 private:
  // (hash, rows, cols, block_m, block_n); block_m = block_n = 0 for a row layout.
  using Key = std::tuple<uint64_t, int64_t, int64_t, int64_t, int64_t>;
  struct Entry {
    std::shared_ptr<const DeviceBlockLayout> block;
    std::shared_ptr<const DeviceRowLayout> row;
    uint64_t last_use = 0;
  };
  void EvictIfFull();  // with m_mutex held

  mutable std::mutex m_mutex;
  std::map<Key, Entry> m_entries;
  uint64_t m_clock = 0;
  int64_t m_hits = 0, m_misses = 0;
};

}  // namespace stof::kernels
