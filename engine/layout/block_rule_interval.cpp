// The block rule of the one-interval patterns (block_rule.h, MakeRowIntervalRule): full (row i
// attends [0, L)), causal ([0, i + 1)) and documents ([start, end) of the document holding
// i), capped at i + 1 when causal. Their row runs are already one per row; the rule lets the
// compositions that use them ("and" of documents and a window, "or" with global tokens) be
// laid out from rules too. Both ends of a row's interval never decrease with the row, so rows
// [r0, r1) span [lo(r0), hi(r1 - 1)).
#include <algorithm>
#include <utility>
#include <vector>

#include "engine/layout/block_rule.h"

namespace stof::engine {

namespace {

class RowIntervalRule final : public BlockRule {
 public:
  RowIntervalRule(int64_t len, RowInterval kind, std::vector<int64_t> doc_ends, bool causal)
      : m_len(len), m_kind(kind), m_doc_ends(std::move(doc_ends)), m_causal(causal) {}
  int64_t Rows() const override { return m_len; }
  int64_t Cols() const override { return m_len; }

  void Spans(int64_t r0, int64_t r1, ColumnSpans& out) const override {
    const int64_t lo = Interval(r0).first;
    const int64_t hi = m_causal ? std::min(Interval(r1 - 1).second, r1) : Interval(r1 - 1).second;
    if (lo < hi) out.emplace_back(lo, hi);
  }

  void RowBits(int64_t r, int64_t c0, int64_t n, uint64_t* words) const override {
    const auto [lo, hi] = Clip(r, c0, c0 + n);
    SetColumns(words, c0, lo, hi);
  }

  int64_t CountCells(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const override {
    int64_t cells = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const auto [lo, hi] = Clip(r, c0, c1);
      cells += std::max<int64_t>(0, hi - lo);
    }
    return cells;
  }

 private:
  // Row r's interval before the causal cap.
  std::pair<int64_t, int64_t> Interval(int64_t r) const {
    switch (m_kind) {
      case RowInterval::kFull: return {0, m_len};
      case RowInterval::kCausal: return {0, r + 1};
      case RowInterval::kDocuments: {
        const auto it = std::upper_bound(m_doc_ends.begin(), m_doc_ends.end(), r);
        const int64_t end = *it;
        const int64_t start = it == m_doc_ends.begin() ? 0 : *(it - 1);
        return {start, end};
      }
    }
    return {0, 0};
  }
  // Row r's interval, capped when causal, within [c0, c1).
  std::pair<int64_t, int64_t> Clip(int64_t r, int64_t c0, int64_t c1) const {
    auto [lo, hi] = Interval(r);
    if (m_causal) hi = std::min(hi, r + 1);
    return {std::max(lo, c0), std::min(hi, c1)};
  }

  int64_t m_len;
  RowInterval m_kind;
  std::vector<int64_t> m_doc_ends;  // kDocuments: each document's end, increasing, last = len
  bool m_causal;
};

}  // namespace

std::unique_ptr<BlockRule> MakeRowIntervalRule(int64_t len, RowInterval kind,
                                               const std::vector<int64_t>& doc_lengths,
                                               bool causal) {
  std::vector<int64_t> ends;
  if (kind == RowInterval::kDocuments) {
    int64_t end = 0;
    for (int64_t n : doc_lengths) ends.push_back(end += n);
    if (ends.empty() || ends.back() != len) return nullptr;  // Resolve guarantees the sum
  }
  return std::make_unique<RowIntervalRule>(len, kind, std::move(ends), causal);
}

}  // namespace stof::engine
