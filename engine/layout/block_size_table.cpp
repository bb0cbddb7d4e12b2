// BuildBlockSizeTable (block_size_table.h): one BlockLayout::Build per size; the layouts are
// dropped after their statistics are taken, so memory stays at one layout.
#include "engine/layout/block_size_table.h"

#include <string>

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
    const Mask& mask, const Workload& workload,
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
    auto layout = BlockLayout::Build(mask, m, n);
    if (!layout.IsOk()) return MakeError("block-size table: " + layout.Message());
    BlockSizeRow row;
    row.stats = layout->Stats();
    auto work = ComputeLayoutWork(row.stats, mask.Rows(), workload);
    if (!work.IsOk()) return MakeError("block-size table: " + work.Message());
    row.work = *work;
    rows.push_back(row);
    if (progress && !progress(static_cast<int64_t>(rows.size()), total))
      return MakeError("block-size table: cancelled");
  }
  return rows;
}

}  // namespace stof::engine
