// Tests of LocateBlock (engine/layout/block_lookup.h) against the CSR arrays of a hand-made
// layout, and refusal of blocks outside the grid.
#include "engine/layout/block_lookup.h"

#include <gtest/gtest.h>

using stof::engine::BlockClass;
using stof::engine::BlockLayout;
using stof::engine::Mask;

namespace {

TEST(BlockLookup, PlacesInTheCsrArrays) {
  // 48 x 48 at 16 x 16. Row 0: full (0,0), part (0,2). Row 1: part (1,1). Row 2: full (2,0),
  // full (2,1).
  auto m = Mask::Create(48, 48);
  ASSERT_TRUE(m.IsOk());
  m->SetRect(0, 16, 0, 16);
  m->Set(3, 40);
  m->Set(20, 20);
  m->Set(21, 21);
  m->SetRect(32, 48, 0, 32);
  auto l = BlockLayout::Build(*m, 16, 16);
  ASSERT_TRUE(l.IsOk());

  auto a = LocateBlock(*l, 0, 2);
  ASSERT_TRUE(a.IsOk());
  EXPECT_EQ(a->cls, BlockClass::kPart);
  EXPECT_EQ(a->popcount, 1);
  EXPECT_EQ(a->load_index, 1);
  EXPECT_EQ(a->class_index, 0);  // first part block
  auto b = LocateBlock(*l, 1, 1);
  ASSERT_TRUE(b.IsOk());
  EXPECT_EQ(b->cls, BlockClass::kPart);
  EXPECT_EQ(b->popcount, 2);
  EXPECT_EQ(b->load_index, 2);
  EXPECT_EQ(b->class_index, 1);
  auto c = LocateBlock(*l, 2, 1);
  ASSERT_TRUE(c.IsOk());
  EXPECT_EQ(c->cls, BlockClass::kFull);
  EXPECT_EQ(c->popcount, 256);
  EXPECT_EQ(c->load_index, 4);
  EXPECT_EQ(c->class_index, 2);  // full blocks: (0,0), (2,0), (2,1)
  auto e = LocateBlock(*l, 1, 2);
  ASSERT_TRUE(e.IsOk());
  EXPECT_EQ(e->cls, BlockClass::kEmpty);
  EXPECT_EQ(e->load_index, -1);
  EXPECT_EQ(e->class_index, -1);
  EXPECT_EQ(e->popcount, 0);

  auto out = LocateBlock(*l, 3, 0);
  ASSERT_FALSE(out.IsOk());
  EXPECT_EQ(out.Message(), "block (3, 0) is outside the 3 x 3 block grid");
  EXPECT_FALSE(LocateBlock(*l, 0, -1).IsOk());
}

}  // namespace
