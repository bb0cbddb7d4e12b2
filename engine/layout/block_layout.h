// BlockLayout: a Mask seen at BM x BN blocks, stored as BSR (STOF section 4.1): per block row
// the CSR arrays of full blocks, part blocks and all valid ("load") blocks, plus one bitmap
// per part block. Used by kernel selection (Eq. 1 at 16 x 16), the CUDA kernels (uploaded as
// is), the CLI (`stof layout`), the GUI's layout view, and the FlexAttention export.
// Invariants: row_ptr arrays have BlockRows()+1 entries starting at 0; column indices within a
// row are strictly increasing; load = full U part in column order; ToMask() == source mask.
// Ragged edges: the last block row/column may extend past L; those cells are padding and
// count as masked, so a block is "full" when every in-range cell is attended. Padding bits of
// part bitmaps are always zero.
// Cost: Build reads each mask word once, then copies the bits of part blocks only, so a mask
// whose blocks are all part is the worst case (measured with tests/bench/layout_bench.cpp:
// docs/benchmarks.md, "BlockLayout::Build (CPU)").
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/row_runs.h"

namespace stof::engine {

class BlockRule;

enum class BlockClass : uint8_t { kEmpty = 0, kPart = 1, kFull = 2 };
const char* BlockClassName(BlockClass c);  // "empty", "part", "full"

struct LayoutStats {
  int64_t block_m = 0, block_n = 0;
  int64_t block_rows = 0, block_cols = 0;
  int64_t nnz = 0;                     // attended elements
  double density = 0;                  // nnz / L^2
  int64_t full_blocks = 0, part_blocks = 0, empty_blocks = 0;
  double valid_block_ratio = 0;        // (full + part) / (block_rows * block_cols)
  int64_t index_bytes = 0;             // bytes of all row_ptr and col_idx arrays (int32)
  int64_t bitmap_bytes = 0;            // bytes of the part-block bitmaps
  // Multiply-adds of QK^T and PV per head-dim unit: a block kernel computes BM*BN per valid
  // block; only nnz of them are needed. FLOPs = 4 * d * these counts (2 GEMMs, 2 FLOP/FMA).
  int64_t block_kernel_elements = 0;   // (full + part) * BM * BN
  double wasted_fraction = 0;          // 1 - nnz / block_kernel_elements (0 when no blocks)
  int64_t max_blocks_per_row = 0, min_blocks_per_row = 0;  // load balance
};

class BlockLayout {
 public:
  BlockLayout() = default;

  // block_m and block_n must each be a power of two in [16, 256].
  static Status CheckBlockSize(int64_t block_m, int64_t block_n);
  static Expected<BlockLayout> Build(const Mask& mask, int64_t block_m, int64_t block_n);
  // The layout of a mask held as runs, never as L x L bits (block_layout_runs.cpp): equal
  // field by field to Build(*runs.ToMask(), block_m, block_n) wherever that mask exists, and
  // up to RowRuns::kMaxLen beyond it. Time grows with the runs, the block grid / 64 and the
  // valid blocks plus part bitmaps; memory with the result. Fails, naming the count, when the
  // valid blocks exceed the int32 CSR indices (2^31 - 1), e.g. causal at L = 2^20 at 16 x 16.
  static Expected<BlockLayout> Build(const RowRuns& runs, int64_t block_m, int64_t block_n);
  // The layout of a mask given by a per-block rule (block_rule.h; block_layout_rule.cpp): equal
  // field by field to the other builders' on the same mask. Time grows with the candidate
  // blocks of the rule's column spans times BM; memory with the result.
  static Expected<BlockLayout> Build(const BlockRule& rule, int64_t block_m, int64_t block_n);
  // The statistics of Build(runs, block_m, block_n) without the layout (block_layout_runs.cpp):
  // equal field by field to Build(...).Stats(), in the builder's first pass alone (time grows
  // with the runs and the block grid / 64; memory with one block row), so at any block size
  // and length up to RowRuns::kMaxLen, past the int32 CSR limit too. For the block-size table
  // and Eq. 1 of masks held as runs.
  static Expected<LayoutStats> StatsOf(const RowRuns& runs, int64_t block_m, int64_t block_n);

  int64_t BlockM() const { return m_block_m; }
  int64_t BlockN() const { return m_block_n; }
  int64_t Rows() const { return m_rows; }  // L_q
  int64_t Cols() const { return m_cols; }  // L_k
  int64_t BlockRows() const { return m_block_rows; }
  int64_t BlockCols() const { return m_block_cols; }

  const std::vector<int32_t>& FullRowPtr() const { return m_full_row_ptr; }
  const std::vector<int32_t>& FullColIdx() const { return m_full_col_idx; }
  const std::vector<int32_t>& PartRowPtr() const { return m_part_row_ptr; }
  const std::vector<int32_t>& PartColIdx() const { return m_part_col_idx; }
  const std::vector<int32_t>& LoadRowPtr() const { return m_load_row_ptr; }
  const std::vector<int32_t>& LoadColIdx() const { return m_load_col_idx; }
  // Per load entry: 1 if the block is full, 0 if part.
  const std::vector<uint8_t>& LoadIsFull() const { return m_load_is_full; }
  // Per load entry: the index of its part bitmap, or -1 for a full block.
  const std::vector<int32_t>& LoadPartIdx() const { return m_load_part_idx; }

  // Part-block bitmaps: BitmapWords() 64-bit words per part block, row-major BM x BN bits
  // (bit (i*BN + j) = cell (i, j) of the block); part block p starts at p * BitmapWords().
  int64_t BitmapWords() const { return (m_block_m * m_block_n + 63) / 64; }
  const std::vector<uint64_t>& PartBitmaps() const { return m_part_bitmaps; }
  // Attended cells per part block (same order as PartColIdx), each in [1, in-range cells).
  const std::vector<int32_t>& PartPopcounts() const { return m_part_popcount; }

  BlockClass ClassAt(int64_t block_row, int64_t block_col) const;
  // Attended cells in one block (0 for empty, BM*BN minus padding for full).
  int64_t PopcountAt(int64_t block_row, int64_t block_col) const;
  // Position in LoadColIdx of (block_row, block_col), or -1 when the block is empty.
  int64_t LoadIndexOf(int64_t block_row, int64_t block_col) const;

  // The exact source mask: a 0 x 0 Mask for a default-constructed layout, and for one built
  // from RowRuns longer than Mask::kMaxLen (ToRowRuns holds those).
  Mask ToMask() const;
  // The exact source mask as runs, at every length (block_layout_runs.cpp).
  RowRuns ToRowRuns() const;
  LayoutStats Stats() const;

  // FlexAttention-style block mask (one batch, one head):
  // {"block_size": [BM, BN], "seq_lengths": [Lq, Lk], "kv_num_blocks": [rows],
  //  "kv_indices": [rows][cols], "full_kv_num_blocks": [rows], "full_kv_indices": [rows][cols]}
  // where kv_* are the part blocks (mask_mod needed) and full_kv_* the full blocks, as in
  // torch.nn.attention.flex_attention.BlockMask; each indices row lists its valid columns
  // first, then the remaining columns in increasing order (padding FlexAttention ignores).
  nlohmann::json ToFlexJson() const;
  // The layout itself as JSON: block sizes, all CSR arrays, part popcounts, and per part
  // block its bitmap as one hex string: BitmapWords() words in order, each as 16 lowercase
  // hex digits, most significant first.
  nlohmann::json ToJson() const;

 private:
  // The steps both builders share (Build from bits in block_layout.cpp, from runs in
  // block_layout_runs.cpp), so that they fill every array the same way.
  // An empty layout of rows x cols at block_m x block_n (sizes checked by the caller).
  static BlockLayout Shape(int64_t rows, int64_t cols, int64_t block_m, int64_t block_n);
  // The statistics of this layout's shape holding `nnz` attended cells in `full` full and
  // `part` part blocks, `index_entries` int32 CSR entries, the given fewest and most valid
  // blocks of a block row: what Stats() and StatsOf derive alike.
  LayoutStats StatsFromCounts(int64_t nnz, int64_t full, int64_t part, int64_t index_entries,
                              int64_t min_row, int64_t max_row) const;
  // Cells of block (br, bc) inside the mask; a block is full when all of them are attended.
  int64_t CellsInRange(int64_t br, int64_t bc) const {
    const int64_t r0 = br * m_block_m, c0 = bc * m_block_n;
    return (std::min(r0 + m_block_m, m_rows) - r0) * (std::min(c0 + m_block_n, m_cols) - c0);
  }
  // Reserves every array at its exact size for n_full + n_part valid blocks (the builders
  // count first: growing the bitmaps by doubling cost more in page faults than the counting),
  // zeroes the bitmaps and starts the row pointers at 0.
  void Reserve(int64_t n_full, int64_t n_part);
  // Appends a full block, or a part block of `cells` attended cells (returning its zeroed
  // bitmap), at block column bc of the current block row; EndBlockRow closes the row.
  void AddFull(int64_t bc) {
    m_load_col_idx.push_back(static_cast<int32_t>(bc));
    m_load_is_full.push_back(1);
    m_load_part_idx.push_back(-1);
    m_full_col_idx.push_back(static_cast<int32_t>(bc));
  }
  uint64_t* AddPart(int64_t bc, int64_t cells) {
    const auto p = static_cast<int64_t>(m_part_col_idx.size());
    m_load_col_idx.push_back(static_cast<int32_t>(bc));
    m_load_is_full.push_back(0);
    m_load_part_idx.push_back(static_cast<int32_t>(p));
    m_part_col_idx.push_back(static_cast<int32_t>(bc));
    m_part_popcount.push_back(static_cast<int32_t>(cells));
    return m_part_bitmaps.data() + p * BitmapWords();
  }
  void EndBlockRow();

  int64_t m_block_m = 0, m_block_n = 0;
  int64_t m_rows = 0, m_cols = 0;
  int64_t m_block_rows = 0, m_block_cols = 0;
  int64_t m_nnz = 0;
  std::vector<int32_t> m_full_row_ptr, m_full_col_idx;
  std::vector<int32_t> m_part_row_ptr, m_part_col_idx;
  std::vector<int32_t> m_load_row_ptr, m_load_col_idx;
  std::vector<uint8_t> m_load_is_full;
  std::vector<int32_t> m_load_part_idx;
  std::vector<uint64_t> m_part_bitmaps;
  std::vector<int32_t> m_part_popcount;  // per part block
};

}  // namespace stof::engine
