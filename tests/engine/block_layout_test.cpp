// Tests of BlockLayout: exact round trip (ToMask) and CSR invariants for every block-size pair
// in {16..256}^2 over random, empty, full and banded masks with ragged and exact sizes;
// per-block classes and popcounts against Mask::CountRect; a hand-computed 40 x 40 layout
// (CSR arrays, bitmaps, stats, Flex JSON); refusal of bad block sizes and empty masks.
#include "engine/layout/block_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_masks.h"

using stof::engine::BlockClass;
using stof::engine::BlockLayout;
using stof::engine::LayoutStats;
using stof::engine::Mask;
using stof::engine::testing::RandomMask;
using stof::engine::testing::StructuredMask;

namespace {

constexpr int64_t kSizes[] = {16, 32, 64, 128, 256};

void ExpectRowPtr(const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                  const BlockLayout& l, const char* name) {
  ASSERT_EQ(static_cast<int64_t>(row_ptr.size()), l.BlockRows() + 1) << name;
  EXPECT_EQ(row_ptr.front(), 0) << name;
  EXPECT_EQ(row_ptr.back(), static_cast<int32_t>(col_idx.size())) << name;
  for (int64_t br = 0; br < l.BlockRows(); ++br) {
    const size_t b = static_cast<size_t>(row_ptr[static_cast<size_t>(br)]);
    const size_t e = static_cast<size_t>(row_ptr[static_cast<size_t>(br) + 1]);
    ASSERT_LE(b, e) << name << " row " << br;
    for (size_t k = b; k < e; ++k) {
      ASSERT_GE(col_idx[k], 0) << name;
      ASSERT_LT(col_idx[k], l.BlockCols()) << name;
      if (k > b) {
        ASSERT_LT(col_idx[k - 1], col_idx[k]) << name << " row " << br;
      }
    }
  }
}

// Every invariant of block_layout.h, plus classes and popcounts against the mask itself.
void CheckLayout(const Mask& mask, const BlockLayout& l) {
  const int64_t bm = l.BlockM(), bn = l.BlockN();
  SCOPED_TRACE(std::to_string(mask.Rows()) + "x" + std::to_string(mask.Cols()) + " @ " +
               std::to_string(bm) + "x" + std::to_string(bn));
  ASSERT_EQ(l.Rows(), mask.Rows());
  ASSERT_EQ(l.Cols(), mask.Cols());
  ASSERT_EQ(l.BlockRows(), (mask.Rows() + bm - 1) / bm);
  ASSERT_EQ(l.BlockCols(), (mask.Cols() + bn - 1) / bn);
  ASSERT_TRUE(l.ToMask() == mask);

  ExpectRowPtr(l.FullRowPtr(), l.FullColIdx(), l, "full");
  ExpectRowPtr(l.PartRowPtr(), l.PartColIdx(), l, "part");
  ExpectRowPtr(l.LoadRowPtr(), l.LoadColIdx(), l, "load");
  const size_t loads = l.LoadColIdx().size();
  ASSERT_EQ(l.LoadIsFull().size(), loads);
  ASSERT_EQ(l.LoadPartIdx().size(), loads);
  ASSERT_EQ(loads, l.FullColIdx().size() + l.PartColIdx().size());
  ASSERT_EQ(l.PartPopcounts().size(), l.PartColIdx().size());
  ASSERT_EQ(static_cast<int64_t>(l.PartBitmaps().size()),
            static_cast<int64_t>(l.PartColIdx().size()) * l.BitmapWords());

  // load == sorted union of full and part, flags and part indices consistent.
  int64_t parts_seen = 0;
  for (int64_t br = 0; br < l.BlockRows(); ++br) {
    const size_t r = static_cast<size_t>(br);
    std::vector<int32_t> merged(l.FullColIdx().begin() + l.FullRowPtr()[r],
                                l.FullColIdx().begin() + l.FullRowPtr()[r + 1]);
    merged.insert(merged.end(), l.PartColIdx().begin() + l.PartRowPtr()[r],
                  l.PartColIdx().begin() + l.PartRowPtr()[r + 1]);
    std::sort(merged.begin(), merged.end());
    std::vector<int32_t> load(l.LoadColIdx().begin() + l.LoadRowPtr()[r],
                              l.LoadColIdx().begin() + l.LoadRowPtr()[r + 1]);
    ASSERT_EQ(load, merged) << "row " << br;
    for (int32_t k = l.LoadRowPtr()[r]; k < l.LoadRowPtr()[r + 1]; ++k) {
      const size_t kk = static_cast<size_t>(k);
      const int32_t p = l.LoadPartIdx()[kk];
      if (l.LoadIsFull()[kk]) {
        ASSERT_EQ(p, -1);
      } else {
        ASSERT_EQ(p, parts_seen) << "part blocks are numbered in load order";
        ASSERT_EQ(l.PartColIdx()[static_cast<size_t>(p)], l.LoadColIdx()[kk]);
        ++parts_seen;
      }
    }
  }

  // Per block: class and popcount against CountRect; part bitmaps match and pad with zeros.
  int64_t full = 0, part = 0, empty = 0, nnz = 0;
  for (int64_t br = 0; br < l.BlockRows(); ++br) {
    for (int64_t bc = 0; bc < l.BlockCols(); ++bc) {
      const int64_t r0 = br * bm, c0 = bc * bn;
      const int64_t in_range =
          (std::min(r0 + bm, mask.Rows()) - r0) * (std::min(c0 + bn, mask.Cols()) - c0);
      const int64_t n = mask.CountRect(r0, r0 + bm, c0, c0 + bn);
      const BlockClass want =
          n == 0 ? BlockClass::kEmpty : (n == in_range ? BlockClass::kFull : BlockClass::kPart);
      ASSERT_EQ(l.ClassAt(br, bc), want) << "block " << br << "," << bc;
      ASSERT_EQ(l.PopcountAt(br, bc), n) << "block " << br << "," << bc;
      const int64_t k = l.LoadIndexOf(br, bc);
      ASSERT_EQ(k >= 0, n > 0);
      nnz += n;
      if (want == BlockClass::kFull) ++full;
      if (want == BlockClass::kEmpty) ++empty;
      if (want != BlockClass::kPart) continue;
      ++part;
      const int32_t p = l.LoadPartIdx()[static_cast<size_t>(k)];
      ASSERT_EQ(l.PartPopcounts()[static_cast<size_t>(p)], n);
      const uint64_t* bits = l.PartBitmaps().data() + p * l.BitmapWords();
      int64_t ones = 0;
      for (int64_t w = 0; w < l.BitmapWords(); ++w) ones += std::popcount(bits[w]);
      ASSERT_EQ(ones, n) << "padding bits must be zero";
      for (int64_t i = 0; i < bm; ++i) {
        for (int64_t j = 0; j < bn; ++j) {
          const int64_t pos = i * bn + j;
          const bool bit = (bits[pos >> 6] >> (pos & 63)) & 1u;
          const bool want_bit =
              r0 + i < mask.Rows() && c0 + j < mask.Cols() && mask.Get(r0 + i, c0 + j);
          if (bit != want_bit) FAIL() << "bitmap of block " << br << "," << bc << " cell " << i << "," << j;
        }
      }
    }
  }

  const LayoutStats s = l.Stats();
  EXPECT_EQ(s.full_blocks, full);
  EXPECT_EQ(s.part_blocks, part);
  EXPECT_EQ(s.empty_blocks, empty);
  EXPECT_EQ(s.nnz, nnz);
  EXPECT_EQ(s.nnz, mask.Count());
  EXPECT_EQ(s.full_blocks, static_cast<int64_t>(l.FullColIdx().size()));
  EXPECT_EQ(s.part_blocks, static_cast<int64_t>(l.PartColIdx().size()));
  EXPECT_EQ(s.block_kernel_elements, (full + part) * bm * bn);
  EXPECT_EQ(s.index_bytes,
            4 * static_cast<int64_t>(3 * (l.BlockRows() + 1) + 2 * static_cast<int64_t>(loads)));
  EXPECT_EQ(s.bitmap_bytes, 8 * static_cast<int64_t>(l.PartBitmaps().size()));
  EXPECT_LE(s.min_blocks_per_row, s.max_blocks_per_row);
  EXPECT_LE(s.max_blocks_per_row, l.BlockCols());
}

void CheckAllBlockSizes(const Mask& mask) {
  for (int64_t bm : kSizes) {
    for (int64_t bn : kSizes) {
      auto l = BlockLayout::Build(mask, bm, bn);
      ASSERT_TRUE(l.IsOk()) << l.Message();
      ASSERT_NO_FATAL_FAILURE(CheckLayout(mask, *l));
    }
  }
}

}  // namespace

TEST(BlockLayout, RoundTripRandomMasksAllBlockSizes) {
  uint64_t seed = 1;
  for (int64_t len : {1, 17, 256, 1000}) {
    for (double density : {0.0, 0.02, 0.3, 0.97, 1.0}) {
      SCOPED_TRACE("L=" + std::to_string(len) + " density=" + std::to_string(density));
      ASSERT_NO_FATAL_FAILURE(CheckAllBlockSizes(RandomMask(len, len, density, seed++)));
    }
  }
}

TEST(BlockLayout, RoundTripStructuredMasksAllBlockSizes) {
  uint64_t seed = 100;
  for (int64_t len : {17, 512, 1000, 1024, 3000}) {
    SCOPED_TRACE("L=" + std::to_string(len));
    ASSERT_NO_FATAL_FAILURE(CheckAllBlockSizes(StructuredMask(len, len, seed++)));
  }
}

TEST(BlockLayout, RoundTripNonSquareAndLargeRagged) {
  ASSERT_NO_FATAL_FAILURE(CheckAllBlockSizes(StructuredMask(300, 1000, 7)));
  ASSERT_NO_FATAL_FAILURE(CheckAllBlockSizes(RandomMask(1000, 130, 0.5, 8)));
  ASSERT_NO_FATAL_FAILURE(CheckAllBlockSizes(RandomMask(3000, 3000, 0.1, 9)));
}

// The 40 x 40 mask at 16 x 16 (3 x 3 blocks; the last row and column of blocks hold 8 cells):
//   (0,0) full 16x16        (0,1) part: cell (5,20)     (0,2) empty
//   (1,0) empty             (1,1) part: all but (20,20) (1,2) full: rows 16..31 x cols 32..39
//   (2,0) part: cell (33,0) (2,1) part: cell (35,20)    (2,2) full: rows 32..39 x cols 32..39
Mask HandMask() {
  auto m = Mask::Create(40, 40);
  EXPECT_TRUE(m.IsOk());
  m->SetRect(0, 16, 0, 16);
  m->Set(5, 20);
  m->SetRect(16, 32, 16, 32);
  m->Set(20, 20, false);
  m->SetRect(16, 40, 32, 40);
  m->Set(33, 0);
  m->Set(35, 20);
  return std::move(m).Value();
}

TEST(BlockLayout, HandComputedLayout) {
  const Mask mask = HandMask();
  auto built = BlockLayout::Build(mask, 16, 16);
  ASSERT_TRUE(built.IsOk()) << built.Message();
  const BlockLayout& l = *built;
  using V = std::vector<int32_t>;
  EXPECT_EQ(l.BlockRows(), 3);
  EXPECT_EQ(l.BlockCols(), 3);
  EXPECT_EQ(l.FullRowPtr(), (V{0, 1, 2, 3}));
  EXPECT_EQ(l.FullColIdx(), (V{0, 2, 2}));
  EXPECT_EQ(l.PartRowPtr(), (V{0, 1, 2, 4}));
  EXPECT_EQ(l.PartColIdx(), (V{1, 1, 0, 1}));
  EXPECT_EQ(l.LoadRowPtr(), (V{0, 2, 4, 7}));
  EXPECT_EQ(l.LoadColIdx(), (V{0, 1, 1, 2, 0, 1, 2}));
  EXPECT_EQ(l.LoadIsFull(), (std::vector<uint8_t>{1, 0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(l.LoadPartIdx(), (V{-1, 0, 1, -1, 2, 3, -1}));
  EXPECT_EQ(l.PartPopcounts(), (V{1, 255, 1, 1}));
  ASSERT_EQ(l.BitmapWords(), 4);
  ASSERT_EQ(l.PartBitmaps().size(), 16u);
  // Part 0: cell (5, 20) -> (i, j) = (5, 4) -> bit 84 = word 1 bit 20.
  EXPECT_EQ(l.PartBitmaps()[0], 0u);
  EXPECT_EQ(l.PartBitmaps()[1], uint64_t{1} << 20);
  // Part 2: cell (33, 0) -> (1, 0) -> bit 16; part 3: cell (35, 20) -> (3, 4) -> bit 52.
  EXPECT_EQ(l.PartBitmaps()[8], uint64_t{1} << 16);
  EXPECT_EQ(l.PartBitmaps()[12], uint64_t{1} << 52);
  for (int w : {9, 10, 11, 13, 14, 15}) EXPECT_EQ(l.PartBitmaps()[static_cast<size_t>(w)], 0u);
  // Part 1: all of the 16 x 16 block but (4, 4) -> bit 68 = word 1 bit 4.
  EXPECT_EQ(l.PartBitmaps()[4], ~uint64_t{0});
  EXPECT_EQ(l.PartBitmaps()[5], ~(uint64_t{1} << 4));

  EXPECT_EQ(l.ClassAt(0, 0), BlockClass::kFull);
  EXPECT_EQ(l.ClassAt(1, 0), BlockClass::kEmpty);
  EXPECT_EQ(l.ClassAt(2, 1), BlockClass::kPart);
  EXPECT_EQ(l.ClassAt(3, 0), BlockClass::kEmpty);  // out of range
  EXPECT_EQ(l.PopcountAt(1, 2), 128);              // 16 rows x 8 in-range columns
  EXPECT_EQ(l.PopcountAt(2, 2), 64);
  EXPECT_EQ(l.PopcountAt(1, 1), 255);
  EXPECT_EQ(l.LoadIndexOf(2, 1), 5);
  EXPECT_EQ(l.LoadIndexOf(0, 2), -1);
  EXPECT_EQ(l.LoadIndexOf(-1, 0), -1);
  EXPECT_STREQ(stof::engine::BlockClassName(BlockClass::kPart), "part");
  EXPECT_STREQ(stof::engine::BlockClassName(BlockClass::kFull), "full");
  EXPECT_STREQ(stof::engine::BlockClassName(BlockClass::kEmpty), "empty");
  EXPECT_TRUE(l.ToMask() == mask);
}

TEST(BlockLayout, HandComputedStats) {
  auto l = BlockLayout::Build(HandMask(), 16, 16);
  ASSERT_TRUE(l.IsOk()) << l.Message();
  const LayoutStats s = l->Stats();
  const int64_t nnz = 256 + 1 + 255 + 128 + 1 + 1 + 64;  // 706
  EXPECT_EQ(s.block_m, 16);
  EXPECT_EQ(s.block_n, 16);
  EXPECT_EQ(s.block_rows, 3);
  EXPECT_EQ(s.block_cols, 3);
  EXPECT_EQ(s.nnz, nnz);
  EXPECT_DOUBLE_EQ(s.density, 706.0 / 1600.0);
  EXPECT_EQ(s.full_blocks, 3);
  EXPECT_EQ(s.part_blocks, 4);
  EXPECT_EQ(s.empty_blocks, 2);
  EXPECT_DOUBLE_EQ(s.valid_block_ratio, 7.0 / 9.0);
  EXPECT_EQ(s.index_bytes, 4 * (4 + 3 + 4 + 4 + 4 + 7));  // 104
  EXPECT_EQ(s.bitmap_bytes, 8 * 4 * 4);                     // 4 part blocks x 4 words
  EXPECT_EQ(s.block_kernel_elements, 7 * 256);
  EXPECT_DOUBLE_EQ(s.wasted_fraction, 1.0 - 706.0 / 1792.0);
  EXPECT_EQ(s.min_blocks_per_row, 2);
  EXPECT_EQ(s.max_blocks_per_row, 3);

  // An all-empty mask: no blocks, nothing wasted.
  auto empty_mask = Mask::Create(40, 40);
  ASSERT_TRUE(empty_mask.IsOk());
  auto e = BlockLayout::Build(*empty_mask, 32, 16);
  ASSERT_TRUE(e.IsOk()) << e.Message();
  const LayoutStats es = e->Stats();
  EXPECT_EQ(es.empty_blocks, 2 * 3);
  EXPECT_EQ(es.block_kernel_elements, 0);
  EXPECT_DOUBLE_EQ(es.wasted_fraction, 0.0);
  EXPECT_EQ(es.max_blocks_per_row, 0);
  EXPECT_EQ(es.index_bytes, 4 * 3 * 3);
}

TEST(BlockLayout, FlexJsonExact) {
  auto l = BlockLayout::Build(HandMask(), 16, 16);
  ASSERT_TRUE(l.IsOk()) << l.Message();
  const nlohmann::json want = nlohmann::json::parse(R"({
    "block_size": [16, 16], "seq_lengths": [40, 40],
    "kv_num_blocks": [1, 1, 2],
    "kv_indices": [[1, 0, 2], [1, 0, 2], [0, 1, 2]],
    "full_kv_num_blocks": [1, 1, 1],
    "full_kv_indices": [[0, 1, 2], [2, 0, 1], [2, 0, 1]]
  })");
  EXPECT_EQ(l->ToFlexJson(), want) << l->ToFlexJson().dump();
}

TEST(BlockLayout, JsonHoldsArraysAndHexBitmaps) {
  auto l = BlockLayout::Build(HandMask(), 16, 16);
  ASSERT_TRUE(l.IsOk()) << l.Message();
  const nlohmann::json j = l->ToJson();
  EXPECT_EQ(j.at("block_size"), nlohmann::json::parse("[16, 16]"));
  EXPECT_EQ(j.at("seq_lengths"), nlohmann::json::parse("[40, 40]"));
  EXPECT_EQ(j.at("load_col_idx").get<std::vector<int32_t>>(), l->LoadColIdx());
  EXPECT_EQ(j.at("load_is_full").get<std::vector<int>>(), (std::vector<int>{1, 0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(j.at("part_popcount").get<std::vector<int32_t>>(), l->PartPopcounts());
  ASSERT_EQ(j.at("part_bitmaps").size(), 4u);
  EXPECT_EQ(j.at("part_bitmaps")[0].get<std::string>(),
            "0000000000000000" "0000000000100000" "0000000000000000" "0000000000000000");
  EXPECT_EQ(j.at("part_bitmaps")[3].get<std::string>(),
            "0010000000000000" "0000000000000000" "0000000000000000" "0000000000000000");
}

TEST(BlockLayout, RefusesBadBlockSizesAndEmptyMask) {
  auto m = Mask::Create(64, 64);
  ASSERT_TRUE(m.IsOk());
  for (int64_t bad : {0, 48, 8, 512, -16, 15, 257}) {
    auto a = BlockLayout::Build(*m, bad, 64);
    ASSERT_FALSE(a.IsOk()) << bad;
    EXPECT_NE(a.Message().find("block_m"), std::string::npos) << a.Message();
    EXPECT_NE(a.Message().find("got " + std::to_string(bad)), std::string::npos) << a.Message();
    auto b = BlockLayout::Build(*m, 64, bad);
    ASSERT_FALSE(b.IsOk()) << bad;
    EXPECT_NE(b.Message().find("block_n"), std::string::npos) << b.Message();
    EXPECT_FALSE(BlockLayout::CheckBlockSize(bad, 16).IsOk());
  }
  EXPECT_EQ(BlockLayout::Build(*m, 48, 64).Message(),
            "layout: block_m: must be a power of two in 16..256, got 48");
  EXPECT_TRUE(BlockLayout::CheckBlockSize(16, 256).IsOk());

  auto e = BlockLayout::Build(Mask(), 64, 64);
  ASSERT_FALSE(e.IsOk());
  EXPECT_NE(e.Message().find("mask"), std::string::npos) << e.Message();
  EXPECT_EQ(BlockLayout().ToMask().Rows(), 0);
}
