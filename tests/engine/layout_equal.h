// ExpectSameLayout: two BlockLayouts equal in every field (sizes, every CSR array, the load
// flags and part indices, part popcounts and bitmaps, nnz), each field reported by name
// without printing arrays of millions of entries; ExpectSameStats: two LayoutStats equal in
// every field. Used by the RowRuns tests, which hold the layout built from runs (and its
// statistics alone) to the one built from the dense mask.
#pragma once

#include <gtest/gtest.h>

#include "engine/layout/block_layout.h"

namespace stof::engine::testing {

inline void ExpectSameLayout(const BlockLayout& got, const BlockLayout& want) {
  EXPECT_EQ(got.BlockM(), want.BlockM());
  EXPECT_EQ(got.BlockN(), want.BlockN());
  EXPECT_EQ(got.Rows(), want.Rows());
  EXPECT_EQ(got.Cols(), want.Cols());
  EXPECT_EQ(got.BlockRows(), want.BlockRows());
  EXPECT_EQ(got.BlockCols(), want.BlockCols());
  EXPECT_EQ(got.Stats().nnz, want.Stats().nnz);
  EXPECT_EQ(got.Stats().full_blocks, want.Stats().full_blocks);
  EXPECT_EQ(got.Stats().part_blocks, want.Stats().part_blocks);
  EXPECT_TRUE(got.FullRowPtr() == want.FullRowPtr()) << "full_row_ptr";
  EXPECT_TRUE(got.FullColIdx() == want.FullColIdx()) << "full_col_idx";
  EXPECT_TRUE(got.PartRowPtr() == want.PartRowPtr()) << "part_row_ptr";
  EXPECT_TRUE(got.PartColIdx() == want.PartColIdx()) << "part_col_idx";
  EXPECT_TRUE(got.LoadRowPtr() == want.LoadRowPtr()) << "load_row_ptr";
  EXPECT_TRUE(got.LoadColIdx() == want.LoadColIdx()) << "load_col_idx";
  EXPECT_TRUE(got.LoadIsFull() == want.LoadIsFull()) << "load_is_full";
  EXPECT_TRUE(got.LoadPartIdx() == want.LoadPartIdx()) << "load_part_idx";
  EXPECT_TRUE(got.PartPopcounts() == want.PartPopcounts()) << "part_popcount";
  EXPECT_TRUE(got.PartBitmaps() == want.PartBitmaps()) << "part_bitmaps";
}

inline void ExpectSameStats(const LayoutStats& got, const LayoutStats& want) {
  EXPECT_EQ(got.block_m, want.block_m);
  EXPECT_EQ(got.block_n, want.block_n);
  EXPECT_EQ(got.block_rows, want.block_rows);
  EXPECT_EQ(got.block_cols, want.block_cols);
  EXPECT_EQ(got.nnz, want.nnz);
  EXPECT_EQ(got.density, want.density);
  EXPECT_EQ(got.full_blocks, want.full_blocks);
  EXPECT_EQ(got.part_blocks, want.part_blocks);
  EXPECT_EQ(got.empty_blocks, want.empty_blocks);
  EXPECT_EQ(got.valid_block_ratio, want.valid_block_ratio);
  EXPECT_EQ(got.index_bytes, want.index_bytes);
  EXPECT_EQ(got.bitmap_bytes, want.bitmap_bytes);
  EXPECT_EQ(got.block_kernel_elements, want.block_kernel_elements);
  EXPECT_EQ(got.wasted_fraction, want.wasted_fraction);
  EXPECT_EQ(got.max_blocks_per_row, want.max_blocks_per_row);
  EXPECT_EQ(got.min_blocks_per_row, want.min_blocks_per_row);
}

}  // namespace stof::engine::testing
