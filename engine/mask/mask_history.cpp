// MaskHistory (mask_history.h): diff a rectangle of words on Record, copy it back on Undo/Redo.
// Record compares the two word arrays once (O(L^2 / 64): 4 Mi words at L = 16384), which the
// editor does once per stroke, never per frame.
#include "engine/mask/mask_history.h"

#include <algorithm>

namespace stof::engine {

MaskHistory::MaskHistory(int64_t max_entries, int64_t max_bytes)
    : m_max_entries(std::max<int64_t>(1, max_entries)), m_max_bytes(std::max<int64_t>(0, max_bytes)) {}

int64_t MaskHistory::Entry::Bytes() const {
  const int64_t words = whole ? static_cast<int64_t>(mask_before.Words().size() + mask_after.Words().size())
                              : static_cast<int64_t>(before.size() + after.size());
  return words * 8;
}

bool MaskHistory::Record(const MaskState& before, const MaskState& after, const std::string& label) {
  Entry e;
  e.label = label;
  e.rows_before = before.mask.Rows();
  e.cols_before = before.mask.Cols();
  e.rows_after = after.mask.Rows();
  e.cols_after = after.mask.Cols();
  e.spec_before = before.spec;
  e.spec_after = after.spec;
  if (e.rows_before != e.rows_after || e.cols_before != e.cols_after) {
    e.whole = true;
    e.mask_before = before.mask;
    e.mask_after = after.mask;
  } else {
    const int64_t wpr = before.mask.WordsPerRow();
    int64_t r0 = -1, r1 = -1, w0 = wpr, w1 = 0;
    for (int64_t r = 0; r < before.mask.Rows(); ++r) {
      const uint64_t* a = before.mask.RowWords(r);
      const uint64_t* b = after.mask.RowWords(r);
      if (std::equal(a, a + wpr, b)) continue;
      if (r0 < 0) r0 = r;
      r1 = r + 1;
      for (int64_t w = 0; w < wpr; ++w) {
        if (a[w] != b[w]) {
          w0 = std::min(w0, w);
          w1 = std::max(w1, w + 1);
        }
      }
    }
    if (r0 < 0 && before.spec == after.spec) return false;
    if (r0 < 0) r0 = r1 = w0 = w1 = 0;  // only the spec changed
    e.r0 = r0;
    e.r1 = r1;
    e.w0 = w0;
    e.w1 = w1;
    for (int64_t r = r0; r < r1; ++r) {
      e.before.insert(e.before.end(), before.mask.RowWords(r) + w0, before.mask.RowWords(r) + w1);
      e.after.insert(e.after.end(), after.mask.RowWords(r) + w0, after.mask.RowWords(r) + w1);
    }
  }
  for (const Entry& r : m_redo) m_bytes -= r.Bytes();
  m_redo.clear();
  m_bytes += e.Bytes();
  m_undo.push_back(std::move(e));
  Trim();
  return true;
}

void MaskHistory::Trim() {
  while (m_undo.size() > 1 &&
         (static_cast<int64_t>(m_undo.size()) > m_max_entries || m_bytes > m_max_bytes)) {
    m_bytes -= m_undo.front().Bytes();
    m_undo.pop_front();
  }
}

void MaskHistory::Apply(const Entry& e, bool forward, MaskState* state) {
  state->spec = forward ? e.spec_after : e.spec_before;
  if (e.whole) {
    state->mask = forward ? e.mask_after : e.mask_before;
    return;
  }
  const std::vector<uint64_t>& src = forward ? e.after : e.before;
  const int64_t n = e.w1 - e.w0;
  for (int64_t r = e.r0; r < e.r1; ++r)
    std::copy_n(src.begin() + (r - e.r0) * n, n, state->mask.RowWords(r) + e.w0);
}

Expected<std::string> MaskHistory::Step(bool forward, MaskState* state) {
  std::deque<Entry>& from = forward ? m_redo : m_undo;
  std::deque<Entry>& to = forward ? m_undo : m_redo;
  const char* what = forward ? "redo" : "undo";
  if (from.empty()) return MakeError(std::string(what) + ": nothing to " + what);
  const Entry& e = from.back();
  // The state must be the size the entry leaves it at (undo) or found it at (redo).
  const int64_t rows = forward ? e.rows_before : e.rows_after;
  const int64_t cols = forward ? e.cols_before : e.cols_after;
  if (state->mask.Rows() != rows || state->mask.Cols() != cols)
    return MakeError(std::string(what) + ": the mask is " + std::to_string(state->mask.Rows()) +
                     " x " + std::to_string(state->mask.Cols()) +
                     (forward ? ", the edit was made on " : ", the last edit left it ") +
                     std::to_string(rows) + " x " + std::to_string(cols));
  Apply(e, forward, state);
  std::string label = e.label;
  to.push_back(std::move(from.back()));
  from.pop_back();
  return label;
}

void MaskHistory::Clear() {
  m_undo.clear();
  m_redo.clear();
  m_bytes = 0;
}

}  // namespace stof::engine
