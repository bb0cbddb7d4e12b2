// Tests of one-boundary scheme edits (engine/fusion/scheme_edit.h), the studio fusion view's
// click between two ops: split, join, the CI limit refused with the ops named, bad positions.
#include <gtest/gtest.h>

#include "engine/fusion/scheme_edit.h"
#include "test_graphs.h"

namespace stof::engine {
namespace {

using testing::PresetGraph;

TEST(SchemeEdit, SplitsAndJoinsAtTheBoundary) {
  const OpGraph g = PresetGraph("bert-base", 8, 512);  // 14 ops
  auto s = FusionScheme::FromCode("10000011100011", g);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_TRUE(IsBoundary(*s, 1));
  EXPECT_FALSE(IsBoundary(*s, 2));
  // Split [#2-#6] after op 4: [#2-#4] [#5-#6].
  auto split = ToggleBoundary(*s, g, 4);
  ASSERT_TRUE(split.IsOk()) << split.Message();
  EXPECT_EQ(split->Code(), "10001100011100");  // later digits flip: segments alternate
  ASSERT_EQ(split->Segments().size(), 6u);
  EXPECT_EQ(split->Segments()[1], (Segment{2, 4}));
  EXPECT_EQ(split->Segments()[2], (Segment{5, 6}));
  // Joining there again gives the original scheme back.
  auto back = ToggleBoundary(*split, g, 4);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_EQ(back->Code(), s->Code());
  // Join [#10-#12] and [#13-#14]: GEMMs #10 and #12 (two CI ops) may share a segment.
  auto join = ToggleBoundary(*s, g, 12);
  ASSERT_TRUE(join.IsOk()) << join.Message();
  EXPECT_EQ(join->Segments().size(), 4u);
  EXPECT_EQ(join->Segments()[3], (Segment{10, 14}));
  EXPECT_FALSE(ToggleBoundary(*s, g, 9).IsOk());  // #7, #10, #12: three
}

TEST(SchemeEdit, AThirdCiOpIsRefusedAndExplained) {
  const OpGraph g = PresetGraph("bert-base", 8, 512);
  auto s = FusionScheme::FromCode("10000011100011", g);
  ASSERT_TRUE(s.IsOk());
  // [#1] (GEMM) + [#2-#6] (two BatchGEMMs) = three CI ops.
  auto r = ToggleBoundary(*s, g, 1);
  ASSERT_FALSE(r.IsOk());
  EXPECT_EQ(r.Message(),
            "fusion: joining [#1] and [#2-#6] would put 3 CI ops (#1 GEMM, #2 BatchGEMM, "
            "#6 BatchGEMM) in one segment; a fused segment holds at most 2 (STOF 4.4)");
}

TEST(SchemeEdit, BadPositionsNameTheRange) {
  const OpGraph g = PresetGraph("bert-small", 1, 64);
  const FusionScheme s = FusionScheme::OpByOp(g);
  const int n = static_cast<int>(g.ops.size());
  for (int bad : {0, -1, n, n + 5}) {
    auto r = ToggleBoundary(s, g, bad);
    ASSERT_FALSE(r.IsOk()) << bad;
    EXPECT_NE(r.Message().find("the layer has ops 1.." + std::to_string(n)), std::string::npos)
        << r.Message();
    EXPECT_FALSE(IsBoundary(s, bad));
  }
  // A scheme of another graph.
  const OpGraph t5 = PresetGraph("t5-small", 1, 64, LayerPart::kDecoder);
  auto r = ToggleBoundary(s, t5, 1);
  EXPECT_FALSE(r.IsOk());
}

}  // namespace
}  // namespace stof::engine
