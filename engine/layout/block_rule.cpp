// MakeBlockRule and the dilated band's rule (block_rule.h; the global / band / random-block
// family's is block_rule_global_band.cpp). A row i of a dilated band with
// step s = r + 1 and width w attends the columns j with |i - j| < w s and j = i (mod s), and
// j <= i when causal: within its band interval, every s-th column. Over one 64-column word
// those bits are one of s phases of a periodic pattern (built once), masked to the interval;
// past s = 64 a word holds at most one of them.
#include "engine/layout/block_rule.h"

#include <algorithm>
#include <vector>

#include "engine/mask/mask_pattern.h"

namespace stof::engine {

namespace {

uint64_t LowBits(int64_t n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

class DilatedRule final : public BlockRule {
 public:
  DilatedRule(int64_t len, int64_t width, int64_t step, bool causal)
      : m_len(len), m_reach(width * step), m_step(step), m_causal(causal) {
    if (m_step <= 64) {
      m_phase.resize(static_cast<size_t>(m_step));
      for (int64_t ph = 0; ph < m_step; ++ph)
        for (int64_t b = ph; b < 64; b += m_step) m_phase[static_cast<size_t>(ph)] |= uint64_t{1} << b;
    }
  }
  int64_t Rows() const override { return m_len; }
  int64_t Cols() const override { return m_len; }
  void Spans(int64_t r0, int64_t r1, ColumnSpans& out) const override {
    const int64_t first = std::max<int64_t>(0, r0 - m_reach + 1);
    const int64_t end = std::min(m_len, m_causal ? r1 : r1 - 1 + m_reach);
    if (first < end) out.emplace_back(first, end);
  }
  void RowBits(int64_t r, int64_t c0, int64_t n, uint64_t* words) const override {
    // The band interval [lo, hi) of row r, within [c0, c0 + n).
    const int64_t lo = std::max(c0, r - m_reach + 1);
    const int64_t hi = std::min(c0 + n, m_causal ? r + 1 : r + m_reach);
    if (lo >= hi) return;
    for (int64_t w = (lo - c0) / 64; w * 64 < hi - c0; ++w) {
      const int64_t base = c0 + 64 * w;  // column of bit 0 of this word
      const int64_t from = std::max(lo, base) - base, to = std::min(hi, base + 64) - base;
      const uint64_t inside = LowBits(to) & ~LowBits(from);
      // The first column at or after `base` with j = r (mod step).
      const int64_t phase = ((r - base) % m_step + m_step) % m_step;
      if (m_step <= 64) {
        words[w] |= m_phase[static_cast<size_t>(phase)] & inside;
      } else if (phase < 64) {
        words[w] |= (uint64_t{1} << phase) & inside;
      }
    }
  }

 private:
  int64_t m_len, m_reach, m_step;
  bool m_causal;
  std::vector<uint64_t> m_phase;  // step <= 64: bits ph, ph + step, ... of a word
};

// The one-interval patterns: their row's single run, as a rule.
bool IsOneInterval(MaskPattern p) {
  return p == MaskPattern::kFull || p == MaskPattern::kCausal || p == MaskPattern::kDocument;
}

}  // namespace

std::unique_ptr<BlockRule> MakeOperandRule(const MaskSpec& s) {
  const MaskPattern p = MaskPatternFromName(s.pattern);
  switch (p) {
    case MaskPattern::kOr:
    case MaskPattern::kAnd:
    case MaskPattern::kNot: {
      std::vector<std::unique_ptr<BlockRule>> operands;
      for (const MaskSpec& o : s.operands) {
        operands.push_back(MakeOperandRule(o));
        if (operands.back() == nullptr) return nullptr;
      }
      const CompositeOp op = p == MaskPattern::kOr    ? CompositeOp::kOr
                             : p == MaskPattern::kAnd ? CompositeOp::kAnd
                                                      : CompositeOp::kNot;
      return MakeCompositeRule(op, std::move(operands), s.causal);
    }
    case MaskPattern::kDilated:
      return std::make_unique<DilatedRule>(s.seq_len, s.width, s.dilation + 1, s.causal);
    case MaskPattern::kSlidingWindow:
      return std::make_unique<DilatedRule>(s.seq_len, s.width, 1, s.causal);
    case MaskPattern::kFull:
      return MakeRowIntervalRule(s.seq_len, RowInterval::kFull, {}, s.causal);
    case MaskPattern::kCausal:
      return MakeRowIntervalRule(s.seq_len, RowInterval::kCausal, {}, s.causal);
    case MaskPattern::kDocument:
      return MakeRowIntervalRule(s.seq_len, RowInterval::kDocuments, s.doc_lengths, s.causal);
    case MaskPattern::kGlobal:
    case MaskPattern::kRandomBlocks:
    case MaskPattern::kLongformer:
    case MaskPattern::kBigBird: {
      const bool band = p == MaskPattern::kLongformer || p == MaskPattern::kBigBird;
      const bool global = band || p == MaskPattern::kGlobal;
      const bool random = p == MaskPattern::kBigBird || p == MaskPattern::kRandomBlocks;
      ChosenBlocks chosen;
      if (random) {
        auto c = ChooseRandomBlocks(s, p == MaskPattern::kBigBird, "mask");
        if (!c.IsOk()) return nullptr;  // the runs form reports the same error
        chosen = std::move(*c);
      }
      return MakeGlobalBandRule(s.seq_len, global ? s.global : 0, band ? s.width : 0,
                                std::move(chosen), random ? s.block : 1, s.causal);
    }
    case MaskPattern::kUnknown: return nullptr;
  }
  return nullptr;
}

std::unique_ptr<BlockRule> MakeBlockRule(const MaskSpec& s) {
  // Alone, a one-interval pattern is laid out faster from its one run per row than from its
  // rule (measured: docs/masks.md, "Per-block rules"), so it has no rule of its own.
  if (IsOneInterval(MaskPatternFromName(s.pattern))) return nullptr;
  return MakeOperandRule(s);
}

}  // namespace stof::engine
