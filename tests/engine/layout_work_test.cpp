// Tests of ComputeLayoutWork and ValidBlocksPerRow (engine/layout/layout_work.h) on a
// hand-counted mask, and refusal of a workload that does not match the layout.
#include "engine/layout/layout_work.h"

#include <gtest/gtest.h>

using stof::engine::BlockLayout;
using stof::engine::Mask;
using stof::engine::Workload;

namespace {

TEST(LayoutWork, HandCountedFlops) {
  // 64 x 64 at 16 x 16: a 16 x 16 full block at (0, 0) and one cell in block (3, 1).
  auto m = Mask::Create(64, 64);
  ASSERT_TRUE(m.IsOk());
  m->SetRect(0, 16, 0, 16);
  m->Set(50, 20);
  auto layout = BlockLayout::Build(*m, 16, 16);
  ASSERT_TRUE(layout.IsOk());
  Workload w;
  w.batch = 2;
  w.heads = 3;
  w.head_dim = 8;
  w.seq_len = 64;
  auto work = ComputeLayoutWork(layout->Stats(), 64, w);
  ASSERT_TRUE(work.IsOk()) << work.Message();
  const double per = 4.0 * 8 * 2 * 3;  // 192 FLOPs per element
  EXPECT_DOUBLE_EQ(work->block_kernel_flops, per * 2 * 256);
  EXPECT_DOUBLE_EQ(work->valid_flops, per * 257);
  EXPECT_DOUBLE_EQ(work->wasted_flops, per * 255);
  EXPECT_DOUBLE_EQ(work->wasted_fraction, 255.0 / 512.0);

  const std::vector<int32_t> rows = ValidBlocksPerRow(*layout);
  EXPECT_EQ(rows, (std::vector<int32_t>{1, 0, 0, 1}));
}

TEST(LayoutWork, EmptyMaskWastesNothing) {
  auto m = Mask::Create(32, 32);
  ASSERT_TRUE(m.IsOk());
  auto layout = BlockLayout::Build(*m, 16, 16);
  ASSERT_TRUE(layout.IsOk());
  Workload w;
  w.seq_len = 32;
  auto work = ComputeLayoutWork(layout->Stats(), 32, w);
  ASSERT_TRUE(work.IsOk());
  EXPECT_EQ(work->block_kernel_flops, 0);
  EXPECT_EQ(work->wasted_fraction, 0);
  EXPECT_TRUE(ValidBlocksPerRow(BlockLayout{}).empty());
}

TEST(LayoutWork, RefusesMismatchedWorkload) {
  auto m = Mask::Create(32, 32);
  ASSERT_TRUE(m.IsOk());
  auto layout = BlockLayout::Build(*m, 16, 16);
  ASSERT_TRUE(layout.IsOk());
  Workload w;  // seq_len 1024
  auto bad = ComputeLayoutWork(layout->Stats(), 32, w);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("workload.seq_len: 1024 differs from the layout's L = 32"),
            std::string::npos) << bad.Message();
  w.seq_len = 32;
  w.head_dim = 0;
  auto bad_d = ComputeLayoutWork(layout->Stats(), 32, w);
  ASSERT_FALSE(bad_d.IsOk());
  EXPECT_NE(bad_d.Message().find("head_dim"), std::string::npos) << bad_d.Message();
}

}  // namespace
