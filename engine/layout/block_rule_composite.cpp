// The block rule of a composition (block_rule.h, MakeCompositeRule): "or", "and" and "not" of
// rules, then the composition's own causal flag, as Generate and RowRuns::FromSpec compose
// masks. Spans: the union of the operands' for "or", the first operand's for "and" (a
// superset of the intersection), every column for "not" (its complement may be anywhere).
// Bits: the operands' bits combined word by word. Cell counts come from the bits.
#include <algorithm>
#include <utility>
#include <vector>

#include "engine/layout/block_rule.h"

namespace stof::engine {

namespace {

class CompositeRule final : public BlockRule {
 public:
  CompositeRule(CompositeOp op, std::vector<std::unique_ptr<BlockRule>> operands, bool causal)
      : m_op(op), m_operands(std::move(operands)), m_causal(causal) {}
  int64_t Rows() const override { return m_operands.front()->Rows(); }
  int64_t Cols() const override { return m_operands.front()->Cols(); }

  void Spans(int64_t r0, int64_t r1, ColumnSpans& out) const override {
    const int64_t cap = m_causal ? std::min(r1, Cols()) : Cols();
    const size_t from = out.size();
    if (m_op == CompositeOp::kNot) {
      out.emplace_back(0, cap);
      return;
    }
    const size_t operands = m_op == CompositeOp::kOr ? m_operands.size() : 1;
    for (size_t i = 0; i < operands; ++i) m_operands[i]->Spans(r0, r1, out);
    for (size_t i = from; i < out.size(); ++i) out[i].second = std::min(out[i].second, cap);
  }

  void RowBits(int64_t r, int64_t c0, int64_t n, uint64_t* words) const override {
    const int64_t nw = (n + 63) / 64;
    uint64_t acc[4] = {}, next[4];
    m_operands.front()->RowBits(r, c0, n, acc);
    for (size_t i = 1; i < m_operands.size(); ++i) {
      std::fill(next, next + 4, 0);
      m_operands[i]->RowBits(r, c0, n, next);
      for (int64_t w = 0; w < nw; ++w) acc[w] = m_op == CompositeOp::kOr ? acc[w] | next[w]
                                                                        : acc[w] & next[w];
    }
    if (m_op == CompositeOp::kNot)
      for (int64_t w = 0; w < nw; ++w) acc[w] = ~acc[w];
    // Columns past the stretch (n), and past the diagonal when causal, stay out.
    const int64_t keep = m_causal ? std::clamp<int64_t>(r + 1 - c0, 0, n) : n;
    for (int64_t w = 0; w < nw; ++w) {
      const int64_t bits = std::clamp<int64_t>(keep - 64 * w, 0, 64);
      words[w] |= acc[w] & (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
    }
  }

 private:
  CompositeOp m_op;
  std::vector<std::unique_ptr<BlockRule>> m_operands;
  bool m_causal;
};

}  // namespace

std::unique_ptr<BlockRule> MakeCompositeRule(CompositeOp op,
                                             std::vector<std::unique_ptr<BlockRule>> operands,
                                             bool causal) {
  if (operands.empty()) return nullptr;
  for (const auto& o : operands)
    if (o == nullptr || o->Rows() != operands.front()->Rows() ||
        o->Cols() != operands.front()->Cols())
      return nullptr;
  return std::make_unique<CompositeRule>(op, std::move(operands), causal);
}

}  // namespace stof::engine
