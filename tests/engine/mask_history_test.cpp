// Tests of MaskHistory (engine/mask/mask_history.h): undo/redo restore the exact bits and the
// spec, only the changed word rectangle is stored, the bounds on entries and bytes drop the
// oldest entries, size changes are undoable, and wrong use is an error that changes nothing.
#include "engine/mask/mask_history.h"

#include <gtest/gtest.h>

#include "engine/mask/mask_edit.h"
#include "tests/engine/test_masks.h"

using stof::engine::EditOptions;
using stof::engine::Mask;
using stof::engine::MaskHistory;
using stof::engine::MaskSpec;
using stof::engine::MaskState;

namespace {

MaskState Generated(int64_t n) {
  MaskSpec spec;
  spec.pattern = "bigbird";
  spec.seq_len = n;
  return MaskState{stof::engine::testing::PatternMask("bigbird", n), spec};
}

TEST(MaskHistory, UndoRedoRestoreBitsAndSpec) {
  MaskHistory h;
  MaskState s = Generated(256);
  s.mask.SetRect(98, 103, 198, 203, false);  // so that painting there changes all 5 rows
  const MaskState original = s;
  MaskState before = s;
  ASSERT_TRUE(PaintBrush(&s.mask, 100, 200, 5, EditOptions{}).IsOk());
  s.spec.reset();  // a hand edit leaves the generator
  ASSERT_TRUE(h.Record(before, s, "brush"));
  const MaskState edited = s;
  // Rows 98..102, words 3 (cols 192..255): 5 rows x 1 word, before and after.
  EXPECT_EQ(h.Bytes(), 5 * 1 * 8 * 2);

  auto u = h.Undo(&s);
  ASSERT_TRUE(u.IsOk()) << u.Message();
  EXPECT_EQ(*u, "brush");
  EXPECT_EQ(s.mask, original.mask);
  ASSERT_TRUE(s.spec.has_value());
  EXPECT_EQ(*s.spec, *original.spec);
  EXPECT_EQ(h.UndoCount(), 0);
  EXPECT_EQ(h.RedoCount(), 1);

  ASSERT_TRUE(h.Redo(&s).IsOk());
  EXPECT_EQ(s.mask, edited.mask);
  EXPECT_FALSE(s.spec.has_value());
}

TEST(MaskHistory, NothingChangedRecordsNothing) {
  MaskHistory h;
  MaskState s = Generated(64);
  EXPECT_FALSE(h.Record(s, s, "noop"));
  EXPECT_EQ(h.UndoCount(), 0);
  auto u = h.Undo(&s);
  ASSERT_FALSE(u.IsOk());
  EXPECT_EQ(u.Message(), "undo: nothing to undo");
  EXPECT_FALSE(h.Redo(&s).IsOk());
}

TEST(MaskHistory, RecordClearsRedo) {
  MaskHistory h;
  MaskState s{std::move(Mask::Create(32, 32)).Value(), std::nullopt};
  for (int i = 0; i < 3; ++i) {
    MaskState before = s;
    ASSERT_TRUE(PaintBrush(&s.mask, i, i, 1, EditOptions{}).IsOk());
    ASSERT_TRUE(h.Record(before, s, "dot"));
  }
  ASSERT_TRUE(h.Undo(&s).IsOk());
  ASSERT_TRUE(h.Undo(&s).IsOk());
  EXPECT_EQ(s.mask.Count(), 1);
  EXPECT_EQ(h.RedoCount(), 2);
  MaskState before = s;
  ASSERT_TRUE(PaintBrush(&s.mask, 20, 20, 1, EditOptions{}).IsOk());
  ASSERT_TRUE(h.Record(before, s, "other"));
  EXPECT_EQ(h.RedoCount(), 0);
  EXPECT_EQ(h.UndoCount(), 2);
}

TEST(MaskHistory, BoundedByEntriesAndBytes) {
  MaskHistory by_count(3, int64_t{1} << 30);
  MaskState s{std::move(Mask::Create(64, 64)).Value(), std::nullopt};
  for (int i = 0; i < 5; ++i) {
    MaskState before = s;
    ASSERT_TRUE(PaintBrush(&s.mask, i, 0, 1, EditOptions{}).IsOk());
    ASSERT_TRUE(by_count.Record(before, s, "dot"));
  }
  EXPECT_EQ(by_count.UndoCount(), 3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(by_count.Undo(&s).IsOk());
  EXPECT_FALSE(by_count.Undo(&s).IsOk());
  EXPECT_EQ(s.mask.Count(), 2);  // the two oldest dots could not be undone

  // Each entry holds 1 row x 1 word twice = 16 bytes; a 40-byte budget keeps 2.
  MaskHistory by_bytes(100, 40);
  MaskState t{std::move(Mask::Create(64, 64)).Value(), std::nullopt};
  for (int i = 0; i < 4; ++i) {
    MaskState before = t;
    ASSERT_TRUE(PaintBrush(&t.mask, i, 0, 1, EditOptions{}).IsOk());
    ASSERT_TRUE(by_bytes.Record(before, t, "dot"));
  }
  EXPECT_EQ(by_bytes.UndoCount(), 2);
  EXPECT_EQ(by_bytes.Bytes(), 32);
  // One entry larger than the budget is still kept (the newest is always undoable).
  MaskHistory tiny(100, 1);
  MaskState before = t;
  ASSERT_TRUE(PaintBrush(&t.mask, 30, 30, 9, EditOptions{}).IsOk());
  ASSERT_TRUE(tiny.Record(before, t, "big"));
  EXPECT_EQ(tiny.UndoCount(), 1);
}

TEST(MaskHistory, SizeChangeAndMismatch) {
  MaskHistory h;
  MaskState s = Generated(128);
  MaskState small = Generated(64);
  ASSERT_TRUE(h.Record(s, small, "preset"));
  MaskState cur = small;
  ASSERT_TRUE(h.Undo(&cur).IsOk());
  EXPECT_EQ(cur.mask, s.mask);
  EXPECT_EQ(cur.spec->seq_len, 128);
  // Redo expects the 128 x 128 state; a 64 x 64 one is refused and nothing moves.
  MaskState wrong = small;
  auto r = h.Redo(&wrong);
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find("the mask is 64 x 64, the edit was made on 128 x 128"), std::string::npos)
      << r.Message();
  EXPECT_EQ(h.RedoCount(), 1);
  ASSERT_TRUE(h.Redo(&cur).IsOk());
  EXPECT_EQ(cur.mask, small.mask);
}

}  // namespace
