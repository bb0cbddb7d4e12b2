// LocateBlock (block_lookup.h): binary searches in one block row of the CSR arrays.
#include "engine/layout/block_lookup.h"

#include <algorithm>
#include <string>

namespace stof::engine {

namespace {
// Position of col in col_idx[ptr[row], ptr[row + 1]), or -1.
int64_t FindInRow(const std::vector<int32_t>& ptr, const std::vector<int32_t>& col_idx,
                  int64_t row, int64_t col) {
  const auto begin = col_idx.begin() + ptr[static_cast<size_t>(row)];
  const auto end = col_idx.begin() + ptr[static_cast<size_t>(row) + 1];
  const auto it = std::lower_bound(begin, end, static_cast<int32_t>(col));
  return it != end && *it == col ? it - col_idx.begin() : -1;
}
}  // namespace

Expected<BlockPlace> LocateBlock(const BlockLayout& layout, int64_t block_row, int64_t block_col) {
  if (block_row < 0 || block_row >= layout.BlockRows() || block_col < 0 ||
      block_col >= layout.BlockCols())
    return MakeError("block (" + std::to_string(block_row) + ", " + std::to_string(block_col) +
                     ") is outside the " + std::to_string(layout.BlockRows()) + " x " +
                     std::to_string(layout.BlockCols()) + " block grid");
  BlockPlace p;
  p.load_index = FindInRow(layout.LoadRowPtr(), layout.LoadColIdx(), block_row, block_col);
  if (p.load_index < 0) return p;
  if (layout.LoadIsFull()[static_cast<size_t>(p.load_index)]) {
    p.cls = BlockClass::kFull;
    p.class_index = FindInRow(layout.FullRowPtr(), layout.FullColIdx(), block_row, block_col);
  } else {
    p.cls = BlockClass::kPart;
    p.class_index = FindInRow(layout.PartRowPtr(), layout.PartColIdx(), block_row, block_col);
  }
  p.popcount = layout.PopcountAt(block_row, block_col);
  return p;
}

}  // namespace stof::engine
