// The block rule of the global / band / random-block family (block_rule.h, MakeGlobalBandRule):
// the global, longformer, bigbird and random_blocks generators, never as L x L bits or row runs
// (a BigBird row at L = 262144 holds hundreds of random-block runs). Row i attends the union of
// up to three parts, each a few intervals: the global tokens (the whole row when i < g, else
// [0, g)), the band [i - w + 1, i + w) and the random blocks chosen in its block row (the same
// draw as Generate's and RowRuns::FromSpec's: ChooseRandomBlocks), capped at i + 1 when causal.
// BigBird draws its blocks only where global and band leave a block empty, so the random part
// is disjoint from the other two and a row's cells in a rectangle are counted from interval
// lengths, without bits.
#include <algorithm>
#include <utility>

#include "engine/layout/block_rule.h"

namespace stof::engine {

namespace {

class GlobalBandRule final : public BlockRule {
 public:
  GlobalBandRule(int64_t len, int64_t global, int64_t width, ChosenBlocks chosen, int64_t block,
                 bool causal)
      : m_len(len), m_global(global), m_width(width), m_chosen(std::move(chosen)),
        m_block(block), m_causal(causal) {}
  int64_t Rows() const override { return m_len; }
  int64_t Cols() const override { return m_len; }

  void Spans(int64_t r0, int64_t r1, ColumnSpans& out) const override {
    const int64_t cap = m_causal ? r1 : m_len;  // no row below r1 reaches past it when causal
    if (r0 < m_global) {
      out.emplace_back(0, cap);
      return;
    }
    if (m_global > 0) out.emplace_back(0, std::min(m_global, cap));
    if (m_width > 0)
      out.emplace_back(std::max<int64_t>(0, r0 - m_width + 1), std::min(r1 - 1 + m_width, cap));
    if (m_chosen.cols.empty()) return;
    for (int64_t bi = r0 / m_block; bi <= (r1 - 1) / m_block; ++bi) {
      for (int64_t k = Begin(bi); k < End(bi); ++k) {
        const int64_t c = m_chosen.cols[static_cast<size_t>(k)] * m_block;
        if (c < cap) out.emplace_back(c, std::min({c + m_block, m_len, cap}));
      }
    }
  }

  void RowBits(int64_t r, int64_t c0, int64_t n, uint64_t* words) const override {
    const int64_t hi = std::min(c0 + n, m_causal ? r + 1 : m_len);
    ForEachInterval(r, c0, hi, [&](int64_t a, int64_t b) { SetColumns(words, c0, a, b); });
  }

  int64_t CountCells(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const override {
    int64_t cells = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t hi = std::min(c1, m_causal ? r + 1 : m_len);
      if (r < m_global) {
        cells += std::max<int64_t>(0, hi - c0);
        continue;
      }
      // Global [0, g) and the band may overlap each other; the random blocks overlap neither.
      const int64_t g_hi = std::min(m_global, hi);
      const int64_t b_lo = std::max(c0, r - m_width + 1), b_hi = std::min(hi, r + m_width);
      const int64_t g_len = std::max<int64_t>(0, g_hi - c0);
      const int64_t b_len = m_width > 0 ? std::max<int64_t>(0, b_hi - b_lo) : 0;
      const int64_t both = m_width > 0 ? std::max<int64_t>(0, std::min(g_hi, b_hi) - b_lo) : 0;
      cells += g_len + b_len - both;
    }
    return cells + CountRandom(std::max(r0, m_global), r1, c0, c1);
  }

 private:
  int64_t Begin(int64_t bi) const { return m_chosen.row_ptr[static_cast<size_t>(bi)]; }
  int64_t End(int64_t bi) const { return m_chosen.row_ptr[static_cast<size_t>(bi) + 1]; }

  // The random blocks' cells in rows [r0, r1) x columns [c0, c1): per stretch of rows in one
  // block row, the rows times the blocks' clipped widths, except where the causal cap cuts the
  // stretch (then row by row).
  int64_t CountRandom(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    int64_t cells = 0;
    if (m_chosen.cols.empty()) return 0;
    for (int64_t ra = r0; ra < r1;) {
      const int64_t rb = std::min(r1, (ra / m_block + 1) * m_block);
      if (!m_causal || c1 <= ra + 1) {
        int64_t width = 0;
        ForEachRandom(ra, c0, c1, [&](int64_t a, int64_t b) { width += b - a; });
        cells += (rb - ra) * width;
      } else {
        for (int64_t r = ra; r < rb; ++r)
          ForEachRandom(r, c0, std::min(c1, r + 1), [&](int64_t a, int64_t b) { cells += b - a; });
      }
      ra = rb;
    }
    return cells;
  }

  // fn(a, b) for each random block of row r's block row that meets [lo, hi), clipped to it.
  template <class Fn>
  void ForEachRandom(int64_t r, int64_t lo, int64_t hi, Fn&& fn) const {
    if (m_chosen.cols.empty() || lo >= hi) return;
    const int64_t bi = r / m_block;
    const auto first = m_chosen.cols.begin() + Begin(bi), last = m_chosen.cols.begin() + End(bi);
    // The first chosen block that ends after lo.
    for (auto it = std::upper_bound(first, last, static_cast<int32_t>(lo / m_block) - 1);
         it != last; ++it) {
      const int64_t a = int64_t{*it} * m_block;
      if (a >= hi) break;
      fn(std::max(a, lo), std::min({a + m_block, m_len, hi}));
    }
  }

  // fn(a, b) for each of row r's intervals clipped to [lo, hi) (they may overlap).
  template <class Fn>
  void ForEachInterval(int64_t r, int64_t lo, int64_t hi, Fn&& fn) const {
    const auto clipped = [&](int64_t a, int64_t b) {
      a = std::max(a, lo), b = std::min(b, hi);
      if (a < b) fn(a, b);
    };
    if (r < m_global) {
      clipped(0, m_len);
      return;
    }
    if (m_global > 0) clipped(0, m_global);
    if (m_width > 0) clipped(r - m_width + 1, r + m_width);
    ForEachRandom(r, lo, hi, fn);
  }

  int64_t m_len, m_global, m_width;
  ChosenBlocks m_chosen;
  int64_t m_block;
  bool m_causal;
};

}  // namespace

std::unique_ptr<BlockRule> MakeGlobalBandRule(int64_t len, int64_t global, int64_t width,
                                              ChosenBlocks chosen, int64_t block, bool causal) {
  return std::make_unique<GlobalBandRule>(len, std::max<int64_t>(global, 0),
                                          std::max<int64_t>(width, 0), std::move(chosen),
                                          std::max<int64_t>(block, 1), causal);
}

}  // namespace stof::engine
