// Tests of the mask-editor tools (engine/mask/mask_edit.h): exact cell counts and positions
// for brush, line, rectangle and band, clipping at the edges, erase, symmetric editing, the
// returned changed rectangle, and refusal of bad input without changing the mask.
#include "engine/mask/mask_edit.h"

#include <gtest/gtest.h>

using stof::engine::CellRect;
using stof::engine::EditOptions;
using stof::engine::Mask;

namespace {

Mask Empty(int64_t n) { return std::move(Mask::Create(n, n)).Value(); }

TEST(MaskEdit, BrushCentredSquare) {
  Mask m = Empty(64);
  auto r = PaintBrush(&m, 10, 20, 3, EditOptions{});
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(m.Count(), 9);
  EXPECT_EQ(m.CountRect(9, 12, 19, 22), 9);
  EXPECT_EQ(*r, (CellRect{9, 12, 19, 22}));
  // Even sizes extend one more cell after the centre: rows [10 - 1, 10 - 1 + 4).
  Mask e = Empty(64);
  ASSERT_TRUE(PaintBrush(&e, 10, 10, 4, EditOptions{}).IsOk());
  EXPECT_EQ(e.CountRect(9, 13, 9, 13), 16);
  EXPECT_EQ(e.Count(), 16);
}

TEST(MaskEdit, BrushClipsAtTheEdge) {
  Mask m = Empty(16);
  auto r = PaintBrush(&m, 0, 15, 5, EditOptions{});
  ASSERT_TRUE(r.IsOk());
  EXPECT_EQ(m.Count(), 3 * 3);  // rows 0..2, cols 13..15
  EXPECT_EQ(*r, (CellRect{0, 3, 13, 16}));
}

TEST(MaskEdit, EraseAndSymmetric) {
  auto full = Mask::Create(32, 32);
  ASSERT_TRUE(full.IsOk());
  Mask m = Mask::Not(*full);
  EditOptions erase{false, true};
  auto r = PaintBrush(&m, 2, 20, 1, erase);
  ASSERT_TRUE(r.IsOk());
  EXPECT_FALSE(m.Get(2, 20));
  EXPECT_FALSE(m.Get(20, 2));
  EXPECT_EQ(m.Count(), 32 * 32 - 2);
  EXPECT_EQ(*r, (CellRect{2, 21, 2, 21}));  // union of both cells
  // On the diagonal the mirror is the same cell: one cell changes.
  ASSERT_TRUE(PaintBrush(&m, 5, 5, 1, erase).IsOk());
  EXPECT_EQ(m.Count(), 32 * 32 - 3);
}

TEST(MaskEdit, LineCoversEveryStep) {
  Mask m = Empty(32);
  ASSERT_TRUE(PaintLine(&m, 3, 2, 3, 12, 1, EditOptions{}).IsOk());
  EXPECT_EQ(m.Count(), 11);
  EXPECT_EQ(m.CountRow(3), 11);
  Mask d = Empty(32);  // a 45-degree line: one cell per row, on the diagonal
  ASSERT_TRUE(PaintLine(&d, 10, 10, 0, 0, 1, EditOptions{}).IsOk());
  EXPECT_EQ(d.Count(), 11);
  for (int i = 0; i <= 10; ++i) EXPECT_TRUE(d.Get(i, i)) << i;
  Mask s = Empty(32);  // steep line: one cell per row, 21 rows
  ASSERT_TRUE(PaintLine(&s, 0, 0, 20, 5, 1, EditOptions{}).IsOk());
  EXPECT_EQ(s.Count(), 21);
  for (int r = 0; r <= 20; ++r) EXPECT_EQ(s.CountRow(r), 1) << r;
}

TEST(MaskEdit, RectangleAnyCornerOrder) {
  Mask a = Empty(40), b = Empty(40);
  ASSERT_TRUE(PaintRect(&a, 5, 30, 9, 10, EditOptions{}).IsOk());
  ASSERT_TRUE(PaintRect(&b, 9, 10, 5, 30, EditOptions{}).IsOk());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Count(), 5 * 21);
  EXPECT_EQ(a.CountRect(5, 10, 10, 31), 5 * 21);
}

TEST(MaskEdit, BandThroughACell) {
  Mask m = Empty(100);
  // Through (10, 30): offset j - i = 20, width 3 -> offsets 18..22, 5 diagonals.
  auto r = PaintBand(&m, 10, 30, 3, EditOptions{});
  ASSERT_TRUE(r.IsOk());
  int64_t want = 0;
  for (int64_t k = 18; k <= 22; ++k) want += 100 - k;
  EXPECT_EQ(m.Count(), want);
  EXPECT_TRUE(m.Get(0, 22));
  EXPECT_FALSE(m.Get(0, 23));
  EXPECT_FALSE(m.Get(40, 57));
  EXPECT_EQ(r->r0, 0);
  EXPECT_EQ(r->r1, 100 - 18);
  // Symmetric adds the mirrored band j - i in -22..-18.
  ASSERT_TRUE(PaintBand(&m, 10, 30, 3, EditOptions{true, true}).IsOk());
  EXPECT_EQ(m.Count(), 2 * want);
  EXPECT_TRUE(m.Get(22, 0));
  // Width 1 on the diagonal: the diagonal.
  Mask d = Empty(50);
  ASSERT_TRUE(PaintBand(&d, 7, 7, 1, EditOptions{}).IsOk());
  EXPECT_EQ(d.Count(), 50);
}

TEST(MaskEdit, BadInputChangesNothing) {
  Mask m = Empty(16);
  auto out = PaintBrush(&m, 16, 0, 1, EditOptions{});
  ASSERT_FALSE(out.IsOk());
  EXPECT_NE(out.Message().find("(16, 0) is outside the 16 x 16 mask"), std::string::npos) << out.Message();
  auto size = PaintBrush(&m, 1, 1, 0, EditOptions{});
  ASSERT_FALSE(size.IsOk());
  EXPECT_NE(size.Message().find("size must be in 1..16, got 0"), std::string::npos) << size.Message();
  EXPECT_FALSE(PaintLine(&m, 0, 0, 3, -1, 1, EditOptions{}).IsOk());
  EXPECT_FALSE(PaintRect(&m, 0, 0, 20, 3, EditOptions{}).IsOk());
  auto band = PaintBand(&m, 0, 0, 17, EditOptions{});
  ASSERT_FALSE(band.IsOk());
  EXPECT_NE(band.Message().find("width"), std::string::npos);
  EXPECT_EQ(m.Count(), 0);
  Mask none;
  EXPECT_FALSE(PaintBrush(&none, 0, 0, 1, EditOptions{}).IsOk());
  EXPECT_FALSE(PaintBrush(nullptr, 0, 0, 1, EditOptions{}).IsOk());
}

}  // namespace
