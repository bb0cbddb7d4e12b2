// BuildBlockSizeTable (block_size_table.h): each size's statistics from the mask's runs
// (BlockLayout::StatsOf) where they are the smaller form, else from one BlockLayout::Build per
// size, dropped after its statistics are taken, so memory stays at one layout.
#include "engine/layout/block_size_table.h"

#include <string>

#include "engine/mask/row_runs.h"

namespace stof::engine {

const std::vector<std::pair<int64_t, int64_t>>& DefaultTableBlockSizes() {
  static const std::vector<std::pair<int64_t, int64_t>> kSizes = [] {
    std::vector<std::pair<int64_t, int64_t>> v;
    for (int64_t m : {16, 32, 64, 128})
      for (int64_t n : {16, 32, 64, 128}) v.emplace_back(m, n);
    return v;
  }();
  return kSizes;
}

Expected<std::vector<BlockSizeRow>> BuildBlockSizeTable(
    int64_t seq_len, const Workload* workload, const TableStats& stats_at,
    const std::vector<std::pair<int64_t, int64_t>>& sizes, const TableProgress& progress) {
  if (sizes.empty()) return MakeError("block-size table: no block sizes given");
  for (const auto& [m, n] : sizes) {
    Status s = BlockLayout::CheckBlockSize(m, n);
    if (!s.IsOk())
      return MakeError("block-size table: " + std::to_string(m) + "x" + std::to_string(n) + ": " +
                       s.Message());
  }
  std::vector<BlockSizeRow> rows;
  rows.reserve(sizes.size());
  const int64_t total = static_cast<int64_t>(sizes.size());
  for (const auto& [m, n] : sizes) {
    BlockSizeRow row;
    Expected<LayoutStats> stats = stats_at(m, n);
    if (!stats.IsOk()) return MakeError("block-size table: " + stats.Message());
    row.stats = *stats;
    if (workload != nullptr) {
      auto work = ComputeLayoutWork(row.stats, seq_len, *workload);
      if (!work.IsOk()) return MakeError("block-size table: " + work.Message());
      row.work = *work;
    }
    rows.push_back(row);
    if (progress && !progress(static_cast<int64_t>(rows.size()), total))
      return MakeError("block-size table: cancelled");
  }
  return rows;
}

Expected<std::vector<BlockSizeRow>> BuildBlockSizeTable(
    const Mask& mask, const Workload& workload,
    const std::vector<std::pair<int64_t, int64_t>>& sizes, const TableProgress& progress) {
  // Where the mask's runs take no more memory than its bits (generated masks, drawn shapes:
  // not noise), each size's statistics come from the runs alone (BlockLayout::StatsOf, no
  // CSR arrays or bitmaps; docs/masks.md has the times); else one layout per size.
  if (RowRuns::CountRuns(mask) * static_cast<int64_t>(sizeof(ColumnRun)) <=
      static_cast<int64_t>(mask.Words().size() * sizeof(uint64_t))) {
    const RowRuns runs = RowRuns::FromMask(mask);
    return BuildBlockSizeTable(
        mask.Rows(), &workload,
        [&](int64_t m, int64_t n) { return BlockLayout::StatsOf(runs, m, n); }, sizes, progress);
  }
  return BuildBlockSizeTable(
      mask.Rows(), &workload,
      [&](int64_t m, int64_t n) -> Expected<LayoutStats> {
        STOF_ASSIGN_OR_RETURN(const BlockLayout l, BlockLayout::Build(mask, m, n));
        return l.Stats();
      },
      sizes, progress);
}

}  // namespace stof::engine
