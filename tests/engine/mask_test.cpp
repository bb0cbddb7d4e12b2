// Tests of the Mask container: sizes, bit access, ranges, counting, hashing, composition.
#include "engine/mask/mask.h"

#include <gtest/gtest.h>

#include <random>

using stof::engine::Mask;

TEST(Mask, CreateRefusesEmptyAndHugeSizes) {
  EXPECT_FALSE(Mask::Create(0, 10).IsOk());
  EXPECT_FALSE(Mask::Create(10, -1).IsOk());
  auto huge = Mask::Create(Mask::kMaxLen + 1, Mask::kMaxLen + 1);
  ASSERT_FALSE(huge.IsOk());
  EXPECT_NE(huge.Message().find("too large"), std::string::npos) << huge.Message();
  EXPECT_TRUE(Mask::Create(1, 1).IsOk());
}

TEST(Mask, SetRangeMatchesPerBitSet) {
  std::mt19937_64 rng(7);
  for (int64_t cols : {1, 63, 64, 65, 130, 1000}) {
    auto a = Mask::Create(3, cols);
    auto b = Mask::Create(3, cols);
    ASSERT_TRUE(a.IsOk() && b.IsOk());
    for (int t = 0; t < 50; ++t) {
      int64_t c0 = static_cast<int64_t>(rng() % (cols + 1));
      int64_t c1 = static_cast<int64_t>(rng() % (cols + 1));
      bool v = rng() & 1;
      a->SetRange(1, c0, c1, v);
      for (int64_t c = c0; c < c1; ++c) b->Set(1, c, v);
      ASSERT_TRUE(*a == *b) << "cols=" << cols << " [" << c0 << "," << c1 << ")";
      EXPECT_EQ(a->CountRect(0, 3, c0, c1 > c0 ? c1 : c0), b->CountRect(0, 3, c0, c1 > c0 ? c1 : c0));
    }
  }
}

TEST(Mask, CountsDensityAndRect) {
  auto m = Mask::Create(100, 100);
  ASSERT_TRUE(m.IsOk());
  m->SetRect(10, 20, 30, 90);  // 10 x 60
  EXPECT_EQ(m->Count(), 600);
  EXPECT_EQ(m->CountRow(15), 60);
  EXPECT_EQ(m->CountRow(9), 0);
  EXPECT_EQ(m->CountRect(0, 100, 0, 64), 10 * 34);
  EXPECT_DOUBLE_EQ(m->Density(), 0.06);
  EXPECT_DOUBLE_EQ(m->Sparsity(), 0.94);
}

TEST(Mask, NotKeepsPaddingClearAndCompositionChecksShape) {
  auto m = Mask::Create(5, 70);
  ASSERT_TRUE(m.IsOk());
  Mask n = Mask::Not(*m);
  EXPECT_EQ(n.Count(), 5 * 70);
  EXPECT_EQ(Mask::Not(n).Count(), 0);
  auto other = Mask::Create(5, 71);
  auto bad = Mask::Or(*m, *other);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("5 x 70 vs 5 x 71"), std::string::npos) << bad.Message();
  auto both = Mask::And(n, n);
  ASSERT_TRUE(both.IsOk());
  EXPECT_EQ(both->Count(), 350);
}

TEST(Mask, HashDiffersOnOneBitAndOnShape) {
  auto a = Mask::Create(64, 64);
  auto b = Mask::Create(64, 64);
  auto c = Mask::Create(32, 128);  // same number of words
  ASSERT_TRUE(a.IsOk() && b.IsOk() && c.IsOk());
  EXPECT_EQ(a->Hash(), b->Hash());
  b->Set(63, 63);
  EXPECT_NE(a->Hash(), b->Hash());
  EXPECT_NE(a->Hash(), c->Hash());
  EXPECT_EQ(a->HashHex().size(), 16u);
}
