// MaskHistory: the bounded undo/redo history of the studio's mask editor. Each entry stores
// only the rectangle of 64-bit words that changed (rows x word columns, before and after), or
// both whole masks when an edit changed the size (a new preset at another L), plus the
// generator spec before and after (a hand edit drops the spec; undo brings it back).
// Used by the GUI (Ctrl+Z / Ctrl+Y); tested in tests/engine/mask_history_test.cpp.
// Invariants: at most max_entries undo entries and max_bytes of stored words (the oldest go
// first; the newest entry is kept even when it alone is larger); Record clears the redo list;
// Undo(Redo(x)) == x.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"

namespace stof::engine {

// What the editor edits: the bits and, while they still match a generator, its spec.
struct MaskState {
  Mask mask;
  std::optional<MaskSpec> spec;
};

class MaskHistory {
 public:
  static constexpr int64_t kDefaultEntries = 100;
  static constexpr int64_t kDefaultBytes = int64_t{512} << 20;
  explicit MaskHistory(int64_t max_entries = kDefaultEntries, int64_t max_bytes = kDefaultBytes);

  // Records the change before -> after under `label` ("brush", "preset bigbird"). Returns
  // false (and records nothing) when nothing changed.
  bool Record(const MaskState& before, const MaskState& after, const std::string& label);

  // Turn *state back to the entry's "before" (Undo) or forward to its "after" (Redo) and
  // return the entry's label. Errors: nothing to undo / redo, or *state is not the size the
  // entry was recorded on (the history is then left as it was).
  Expected<std::string> Undo(MaskState* state) { return Step(false, state); }
  Expected<std::string> Redo(MaskState* state) { return Step(true, state); }

  int64_t UndoCount() const { return static_cast<int64_t>(m_undo.size()); }
  int64_t RedoCount() const { return static_cast<int64_t>(m_redo.size()); }
  int64_t Bytes() const { return m_bytes; }  // words held by both lists, in bytes
  void Clear();

 private:
  struct Entry {
    std::string label;
    int64_t rows_before = 0, cols_before = 0, rows_after = 0, cols_after = 0;
    bool whole = false;           // sizes differ: full masks below
    Mask mask_before, mask_after;
    int64_t r0 = 0, r1 = 0, w0 = 0, w1 = 0;  // changed rows and word columns (same size)
    std::vector<uint64_t> before, after;
    std::optional<MaskSpec> spec_before, spec_after;
    int64_t Bytes() const;
  };
  Expected<std::string> Step(bool forward, MaskState* state);
  static void Apply(const Entry& e, bool forward, MaskState* state);
  void Trim();

  int64_t m_max_entries, m_max_bytes;
  int64_t m_bytes = 0;
  std::deque<Entry> m_undo, m_redo;
};

}  // namespace stof::engine
