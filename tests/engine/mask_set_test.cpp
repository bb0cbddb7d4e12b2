// Tests of MaskSet (engine/mask/mask_set.h): equal masks merge and unused ones drop, the
// indices follow; the union, the attended total, the group test packed GQA relies on and the
// per-item patterns; the hash tells index maps apart; bad input refused naming the field.
#include "engine/mask/mask_set.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using stof::engine::Mask;
using stof::engine::MaskSet;

namespace {

Mask Causal(int64_t L) {
  Mask m = *Mask::Create(L, L);
  for (int64_t r = 0; r < L; ++r) m.SetRange(r, 0, r + 1);
  return m;
}
Mask Band(int64_t L, int64_t w) {
  Mask m = *Mask::Create(L, L);
  for (int64_t r = 0; r < L; ++r) m.SetRange(r, std::max<int64_t>(0, r - w), r + 1);
  return m;
}

}  // namespace

TEST(MaskSet, MergesEqualMasksAndDropsUnusedOnes) {
  // Masks 0 and 2 are equal; mask 3 is never used.
  std::vector<Mask> masks = {Causal(70), Band(70, 5), Causal(70), Band(70, 9)};
  auto s = MaskSet::Make(masks, {2, 1, 0, 1, 1, 2}, 3, 2);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_EQ(s->Patterns(), 2);
  EXPECT_EQ(s->PatternIndices(), (std::vector<int32_t>{0, 1, 0, 1, 1, 0}));
  EXPECT_EQ(s->PatternOf(0, 0), Causal(70));
  EXPECT_EQ(s->PatternOf(2, 0), Band(70, 5));
  EXPECT_EQ(s->Rows(), 70);
  EXPECT_EQ(s->Cols(), 70);
  EXPECT_EQ(s->TotalCount(), 3 * Causal(70).Count() + 3 * Band(70, 5).Count());
  EXPECT_EQ(s->Union(), Causal(70));  // the band lies inside the causal mask
}

TEST(MaskSet, GroupsAndItemPatterns) {
  // 4 heads in groups of 2: batch 0's groups share a pattern, batch 1's second does not.
  auto s = MaskSet::Make({Causal(64), Band(64, 3)}, {0, 0, 1, 1, 1, 1, 0, 1}, 2, 4);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_TRUE(s->GroupsShareAPattern(1));
  EXPECT_FALSE(s->GroupsShareAPattern(2));
  EXPECT_FALSE(s->GroupsShareAPattern(3));  // not a divisor of the heads
  EXPECT_EQ(s->ItemPatterns(2, false), s->PatternIndices());
  auto t = MaskSet::Make({Causal(64), Band(64, 3)}, {0, 0, 1, 1, 1, 1, 0, 0}, 2, 4);
  ASSERT_TRUE(t.IsOk());
  EXPECT_TRUE(t->GroupsShareAPattern(2));
  EXPECT_FALSE(t->GroupsShareAPattern(4));
  EXPECT_EQ(t->ItemPatterns(2, true), (std::vector<int32_t>{0, 1, 1, 0}));
  EXPECT_NE(s->Hash(), t->Hash());
  auto t2 = MaskSet::Make({Causal(64), Band(64, 3)}, {0, 0, 1, 1, 1, 1, 0, 0}, 2, 4);
  EXPECT_EQ(t->Hash(), t2->Hash());
  // The same indices over other batch x heads hash apart.
  auto t3 = MaskSet::Make({Causal(64), Band(64, 3)}, {0, 0, 1, 1, 1, 1, 0, 0}, 4, 2);
  EXPECT_NE(t->Hash(), t3->Hash());
}

TEST(MaskSet, RefusesBadInputNamingTheField) {
  const auto message = [](const auto& e) { return e.IsOk() ? std::string("ok") : e.Message(); };
  EXPECT_EQ(message(MaskSet::Make({}, {}, 1, 1)), "masks: at least one mask expected, got none");
  EXPECT_EQ(message(MaskSet::Make({Causal(8)}, {0}, 0, 1)),
            "masks: batch and heads must be >= 1, got 0 and 1");
  EXPECT_EQ(message(MaskSet::Make({Causal(8)}, {0, 0, 0}, 2, 2)),
            "masks: pattern_of: expected batch x heads = 4 indices, got 3");
  EXPECT_EQ(message(MaskSet::Make({Causal(8), Causal(9)}, {0, 1}, 1, 2)),
            "masks[1]: size 9 x 9, expected 8 x 8 as masks[0]");
  EXPECT_EQ(message(MaskSet::Make({Mask()}, {0}, 1, 1, "mask set")),
            "mask set[0]: size 0 x 0, expected a non-empty mask");
  EXPECT_EQ(message(MaskSet::Make({Causal(8)}, {0, 1, 0, 0}, 2, 2)),
            "masks: pattern_of[1] (batch 0, head 1) is 1, expected 0..0");
  EXPECT_EQ(message(MaskSet::Make({Causal(8)}, {0, -1}, 1, 2)),
            "masks: pattern_of[1] (batch 0, head 1) is -1, expected 0..0");
}
