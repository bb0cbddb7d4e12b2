// LocateBlock: where one block of a BlockLayout sits in its CSR arrays: its class and
// popcount, its index in load_col_idx and in full_col_idx or part_col_idx (and so its part
// bitmap). Used by the studio's hover tooltip on the layout view; tested in
// block_lookup_test.cpp.
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "engine/layout/block_layout.h"

namespace stof::engine {

struct BlockPlace {
  BlockClass cls = BlockClass::kEmpty;
  int64_t popcount = 0;
  int64_t load_index = -1;   // position in LoadColIdx, -1 for an empty block
  int64_t class_index = -1;  // position in FullColIdx (full) or PartColIdx / bitmaps (part)
};

// Fails when (block_row, block_col) is outside the layout's block grid.
Expected<BlockPlace> LocateBlock(const BlockLayout& layout, int64_t block_row, int64_t block_col);

}  // namespace stof::engine
