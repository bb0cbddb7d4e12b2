// BlockLayout from a BlockRule (block_layout.h, block_rule.h): the layout of a mask given by a
// per-block rule, never as L x L bits or as row runs. As the other builders it makes two
// passes, counting first so that every array is allocated once at its size, then filling; a
// block is classified by the rule's cell count where it has one, else by its bits, made row by
// row (a few words a row), and a part block's bits are made again into its bitmap. Time grows
// with the candidate blocks the rule's column spans give times BM, memory with the result.
#include <algorithm>
#include <bit>
#include <limits>
#include <vector>

#include "engine/core/text_format.h"
#include "engine/layout/block_layout.h"
#include "engine/layout/block_rule.h"

namespace stof::engine {

namespace {

// Block (br, bc)'s cells as a row-major BM x BN bitmap into `words` (zeroed here; cells past
// the mask stay zero); returns how many are attended.
int64_t BlockBits(const BlockRule& rule, int64_t br, int64_t bc, int64_t bm, int64_t bn,
                  int64_t words_per_block, uint64_t* words) {
  std::fill(words, words + words_per_block, 0);
  const int64_t r0 = br * bm, r1 = std::min(r0 + bm, rule.Rows());
  const int64_t c0 = bc * bn, n = std::min(bn, rule.Cols() - c0);
  uint64_t row[4];  // BN <= 256
  for (int64_t r = r0; r < r1; ++r) {
    std::fill(row, row + 4, 0);
    rule.RowBits(r, c0, n, row);
    const int64_t bit = (r - r0) * bn;
    if (bn >= 64) {
      std::copy(row, row + bn / 64, words + bit / 64);
    } else {
      words[bit / 64] |= row[0] << (bit % 64);
    }
  }
  int64_t cells = 0;
  for (int64_t w = 0; w < words_per_block; ++w) cells += std::popcount(words[w]);
  return cells;
}

// The block columns that `spans` touch, as sorted disjoint ranges [first, end) of block
// columns (spans sorted and merged here).
void SpanBlocks(ColumnSpans& spans, int64_t block_n,
                std::vector<std::pair<int64_t, int64_t>>& out) {
  out.clear();
  std::sort(spans.begin(), spans.end());
  for (const auto& [first, end] : spans) {
    if (first >= end) continue;
    const int64_t b0 = first / block_n, b1 = (end - 1) / block_n + 1;
    if (!out.empty() && b0 <= out.back().second) {
      out.back().second = std::max(out.back().second, b1);
    } else {
      out.emplace_back(b0, b1);
    }
  }
}

// Block (br, bc)'s attended cells: the rule's count where it has one, else its bits'.
int64_t BlockCells(const BlockRule& rule, int64_t br, int64_t bc, int64_t bm, int64_t bn,
                   int64_t words_per_block, uint64_t* scratch) {
  const int64_t r0 = br * bm, c0 = bc * bn;
  const int64_t cells = rule.CountCells(r0, std::min(r0 + bm, rule.Rows()), c0,
                                        std::min(c0 + bn, rule.Cols()));
  return cells >= 0 ? cells : BlockBits(rule, br, bc, bm, bn, words_per_block, scratch);
}

}  // namespace

Expected<BlockLayout> BlockLayout::Build(const BlockRule& rule, int64_t block_m,
                                         int64_t block_n) {
  STOF_RETURN_IF_ERROR(CheckBlockSize(block_m, block_n));
  if (rule.Rows() < 1 || rule.Cols() < 1)
    return MakeError("layout: block rule: is empty (" + Str(rule.Rows()) + " x " +
                     Str(rule.Cols()) + "); each side must be at least 1");
  BlockLayout l = Shape(rule.Rows(), rule.Cols(), block_m, block_n);
  const int64_t words = l.BitmapWords();
  std::vector<uint64_t> scratch(static_cast<size_t>(words));
  // Pass 1: each candidate block's class (its attended cells), kept for pass 2.
  struct Hit {
    int64_t bc, cells;
  };
  std::vector<Hit> hits;
  std::vector<int64_t> row_start(static_cast<size_t>(l.m_block_rows) + 1, 0);
  int64_t n_full = 0, n_part = 0;
  ColumnSpans spans;
  std::vector<std::pair<int64_t, int64_t>> block_cols;
  for (int64_t br = 0; br < l.m_block_rows; ++br) {
    spans.clear();
    rule.Spans(br * block_m, std::min((br + 1) * block_m, l.m_rows), spans);
    SpanBlocks(spans, block_n, block_cols);
    for (const auto& [b0, b1] : block_cols) {
      for (int64_t bc = b0; bc < b1; ++bc) {
        const int64_t cells = BlockCells(rule, br, bc, block_m, block_n, words, scratch.data());
        if (cells == 0) continue;
        hits.push_back({bc, cells});
        (cells == l.CellsInRange(br, bc) ? n_full : n_part) += 1;
        l.m_nnz += cells;
      }
    }
    row_start[static_cast<size_t>(br) + 1] = static_cast<int64_t>(hits.size());
  }
  constexpr int64_t kMaxEntries = std::numeric_limits<int32_t>::max();
  if (n_full + n_part > kMaxEntries)
    return MakeError("layout: block rule: " + Str(n_full + n_part) + " valid blocks at " +
                     Str(block_m) + " x " + Str(block_n) +
                     " exceed the int32 CSR indices (at most " + Str(kMaxEntries) +
                     "); use larger blocks");
  // Pass 2: the CSR arrays and the part blocks' bits.
  l.Reserve(n_full, n_part);
  for (int64_t br = 0; br < l.m_block_rows; ++br) {
    for (int64_t h = row_start[static_cast<size_t>(br)];
         h < row_start[static_cast<size_t>(br) + 1]; ++h) {
      const Hit& hit = hits[static_cast<size_t>(h)];
      if (hit.cells == l.CellsInRange(br, hit.bc)) {
        l.AddFull(hit.bc);
      } else {
        BlockBits(rule, br, hit.bc, block_m, block_n, words, l.AddPart(hit.bc, hit.cells));
      }
    }
    l.EndBlockRow();
  }
  return l;
}

}  // namespace stof::engine
