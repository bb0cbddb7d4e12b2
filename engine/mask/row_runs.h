// RowRuns: a rows x cols attention mask (true = attend) kept as, per row, a sorted list of
// disjoint half-open column runs [begin, end). Memory grows with the runs (8 bytes per run
// plus 8 per row), never with rows x cols, so it holds masks far past Mask::kMaxLen: a causal
// mask at L = 262144 takes 4 MiB (one run and one offset per row) where its bits take 8 GiB.
// Built from a MaskSpec without any L x L step (row_runs_spec.cpp; every generator bit for bit
// as Generate), from a Mask, or from raw runs; BlockLayout::Build(const RowRuns&, ...) makes
// a layout from it (engine/layout/block_layout_runs.cpp). Form and figures: docs/masks.md,
// "Masks without L x L bits (row runs)". Used by `stof mask` and `stof layout` past
// Mask::kMaxLen (app/cli); not yet by plans, the C API, Python or the studio.
// Invariants: 0 <= rows, cols <= kMaxLen; row_ptr has rows + 1 entries from 0 to the run
// count; within a row runs are non-empty, inside [0, cols), and separated (each begins after
// the previous one's end, never at it), so equal masks have equal runs and == is exact.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/mask/mask.h"

namespace stof::engine {

struct MaskSpec;

// Columns [begin, end) of one row. int32: columns are below kMaxLen = 2^20, and random blocks
// (one run per chosen block per row) can make the runs the bulk of the memory.
struct ColumnRun {
  int32_t begin = 0;
  int32_t end = 0;
  bool operator==(const ColumnRun&) const = default;
};

class RowRuns {
 public:
  // Largest rows or cols: 2^20 (1048576). Columns are int32 with room to spare; a layout's
  // own int32 arrays are checked where it is built (block_layout_runs.cpp).
  static constexpr int64_t kMaxLen = int64_t{1} << 20;

  RowRuns() = default;  // 0 x 0

  // Checks a size pair; the message names `what` and the field ("row runs: rows: must be in
  // 1..1048576, got 0").
  static Status CheckSize(int64_t rows, int64_t cols, const std::string& what = "row runs");
  // rows x cols with nothing attended.
  static Expected<RowRuns> Create(int64_t rows, int64_t cols,
                                  const std::string& what = "row runs");
  // From raw runs: row_ptr holds rows + 1 offsets into `runs` (0 first, runs.size() last,
  // non-decreasing); row r's runs are runs[row_ptr[r] .. row_ptr[r + 1]). Every invariant
  // above is checked; a message names the field and index ("row runs: runs[3] (row 1):
  // begin 5 is not after the previous run's end 7; runs must be sorted, disjoint and not
  // touching").
  static Expected<RowRuns> FromRuns(int64_t rows, int64_t cols, std::vector<int64_t> row_ptr,
                                    std::vector<ColumnRun> runs,
                                    const std::string& what = "row runs");
  // The exact runs of a dense mask (a 0 x 0 mask gives a 0 x 0 RowRuns).
  static RowRuns FromMask(const Mask& mask);
  // The runs FromMask(mask) would hold, counted from the mask's words without building them
  // (a run starts at each set bit whose left neighbour is clear): whether the runs are a
  // smaller form than the bits (BuildBlockSizeTable asks).
  static int64_t CountRuns(const Mask& mask);
  // Builds the spec's mask as runs, never holding L x L bits; the result equals
  // FromMask(Generate(spec)) wherever Generate works (seq_len <= Mask::kMaxLen), random
  // blocks included. seq_len may be up to kMaxLen; a random-block grid (ceil(L / block))^2
  // is limited to 2^30 blocks (one draw each, as Generate's worst case at L = 32768).
  // Defined in row_runs_spec.cpp.
  static Expected<RowRuns> FromSpec(const MaskSpec& spec);
  // Rows first_row .. first_row + rows - 1 of the spec's mask as a rows x seq_len RowRuns (row r
  // is the mask's row first_row + r), built in time proportional to those rows (and, for random
  // blocks, the block grid's draw): a KV cache's last rows of a 262144-key BigBird without its
  // whole runs. A range outside the mask is refused, the message naming `what`.
  static Expected<RowRuns> FromSpecRows(const MaskSpec& spec, int64_t first_row, int64_t rows,
                                        const std::string& what = "rows");
  // The dense mask of the spec's last `rows` rows (all seq_len columns), from those rows' runs
  // alone: FromSpecRows then LastRowsToMask, the one path of every caller (the CLI's --q-len,
  // the engine C API, a plan's last rows). Errors: the spec's (naming its field) or the row
  // count's (naming `what`).
  static Expected<Mask> LastRowsOfSpec(const MaskSpec& spec, int64_t rows,
                                       const std::string& what = "rows");

  // The dense mask; refused (naming the size and Mask's limits) when it is past them.
  Expected<Mask> ToMask() const;
  // The dense mask of the last `rows` rows (all columns): a KV cache's newest query rows of a
  // mask longer than a square Mask holds (a decode row of a 131072-key causal mask). `what`
  // names the row count in messages ("--q-len: expected 1..131072 ...").
  Expected<Mask> LastRowsToMask(int64_t rows, const std::string& what = "rows") const;

  // Element-wise composition; sizes must match (the message names both shapes).
  static Expected<RowRuns> Or(const RowRuns& a, const RowRuns& b);
  static Expected<RowRuns> And(const RowRuns& a, const RowRuns& b);
  static RowRuns Not(const RowRuns& a);

  int64_t Rows() const { return m_rows; }
  int64_t Cols() const { return m_cols; }
  bool Empty() const { return m_rows == 0 || m_cols == 0; }
  // Whether (row, col) is attended; false outside the mask.
  bool Get(int64_t row, int64_t col) const;
  std::span<const ColumnRun> Row(int64_t row) const {
    return {m_runs.data() + m_row_ptr[static_cast<size_t>(row)],
            m_runs.data() + m_row_ptr[static_cast<size_t>(row) + 1]};
  }
  const std::vector<int64_t>& RowPtr() const { return m_row_ptr; }
  const std::vector<ColumnRun>& Runs() const { return m_runs; }
  int64_t RunCount() const { return static_cast<int64_t>(m_runs.size()); }
  int64_t CountRow(int64_t row) const;  // attended cells of one row
  int64_t Count() const;                // attended cells in all
  // Bytes of the row offsets and runs (their sizes, not the vectors' capacities).
  int64_t MemoryBytes() const;

  bool operator==(const RowRuns& o) const {
    return m_rows == o.m_rows && m_cols == o.m_cols && m_row_ptr == o.m_row_ptr &&
           m_runs == o.m_runs;
  }
  bool operator!=(const RowRuns& o) const { return !(*this == o); }

 private:
  friend class RowRunsBuilder;

  int64_t m_rows = 0;
  int64_t m_cols = 0;
  std::vector<int64_t> m_row_ptr{0};
  std::vector<ColumnRun> m_runs;
};

// Appends runs row by row, for the builders of RowRuns (FromSpec, the compositions) and of
// BlockLayout::ToRowRuns: Add the current row's runs with non-decreasing begins (clipped to
// [0, cols); empty ones dropped; one that overlaps or touches the last run extends it), then
// EndRow; Finish after `rows` EndRow calls. Sizes are checked by the caller.
class RowRunsBuilder {
 public:
  RowRunsBuilder(int64_t rows, int64_t cols);
  void Add(int64_t begin, int64_t end);
  void EndRow();
  RowRuns Finish() &&;

 private:
  RowRuns m_out;
  int64_t m_row_start = 0;  // index in m_out.m_runs of the current row's first run
};

}  // namespace stof::engine
