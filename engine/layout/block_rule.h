// Masks given by a rule evaluated per block, for layouts at lengths where neither L x L bits
// nor row runs are cheap: a dilated band holds one run per attended key (268 million at
// L = 262144), but its cells in one block are a periodic pattern a few machine words make.
// BlockRule says, for rows of a block row, which columns may attend (spans, a superset), one
// row's bits over a stretch of columns and, where it can, a rectangle's cell count;
// BlockLayout::Build(const BlockRule&, ...) (block_layout.h) builds the layout from them, equal
// field by field to the one built from the same mask's bits or runs. MakeBlockRule gives the
// rule of the generator specs that have one. Used by
// `stof layout` past 32768 (app/cli/cmd_layout.cpp); docs/masks.md, "Per-block rules".
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine/mask/mask_spec.h"
#include "engine/mask/random_blocks.h"

namespace stof::engine {

// Column spans [first, end): a rule's candidate columns for a stretch of rows.
using ColumnSpans = std::vector<std::pair<int64_t, int64_t>>;

class BlockRule {
 public:
  virtual ~BlockRule() = default;
  virtual int64_t Rows() const = 0;
  virtual int64_t Cols() const = 0;
  // The columns that rows [r0, r1) may attend, as spans inside [0, Cols()) appended to `out`
  // (any order, may overlap): together a superset of what they attend.
  virtual void Spans(int64_t r0, int64_t r1, ColumnSpans& out) const = 0;
  // Row r's cells over columns [c0, c0 + n) as bits (bit k = column c0 + k; n <= 256, inside
  // the mask), ORed into `words` (which the caller zeroes).
  virtual void RowBits(int64_t r, int64_t c0, int64_t n, uint64_t* words) const = 0;
  // The attended cells of rows [r0, r1) x columns [c0, c1) where the rule counts them without
  // bits; -1 (the default) when the builder should count RowBits' bits.
  virtual int64_t CountCells(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    (void)r0, (void)r1, (void)c0, (void)c1;
    return -1;
  }
};

// Sets columns [lo, hi) of a row stretch that starts at column c0 in `words` (bit k = column
// c0 + k): what RowBits does for each interval of a row.
inline void SetColumns(uint64_t* words, int64_t c0, int64_t lo, int64_t hi) {
  for (int64_t c = lo; c < hi;) {
    const int64_t bit = c - c0, w = bit / 64, off = bit % 64;
    const int64_t take = std::min<int64_t>(64 - off, hi - c);
    words[w] |= (take == 64 ? ~uint64_t{0} : ((uint64_t{1} << take) - 1)) << off;
    c += take;
  }
}

// The rule of a resolved spec (Resolve): every generator of mask_spec.h (with or without
// `causal`) and every "or" / "and" / "not" of generators; null for an unknown pattern and for
// full, causal and document masks alone, whose one run per row lays out faster (they have
// rules as operands of a composition).
std::unique_ptr<BlockRule> MakeBlockRule(const MaskSpec& resolved);

// The same with full, causal and document masks too (the rule a composition gives its
// operands); null only for an unknown pattern.
std::unique_ptr<BlockRule> MakeOperandRule(const MaskSpec& resolved);

// The rule of a one-interval pattern (block_rule_interval.cpp): every row attends [0, L)
// (kFull), [0, i + 1) (kCausal) or its document's [start, end) (kDocuments, lengths summing to
// len), then j <= i when causal; null when the lengths do not sum to len.
enum class RowInterval { kFull, kCausal, kDocuments };
std::unique_ptr<BlockRule> MakeRowIntervalRule(int64_t len, RowInterval kind,
                                               const std::vector<int64_t>& doc_lengths,
                                               bool causal);

// The rule of a composition of rules (block_rule_composite.cpp): `op` over the operands (one
// for kNot), then j <= i when causal; null when an operand is null or the sizes differ.
enum class CompositeOp { kOr, kAnd, kNot };
std::unique_ptr<BlockRule> MakeCompositeRule(CompositeOp op,
                                             std::vector<std::unique_ptr<BlockRule>> operands,
                                             bool causal);

// The rule of the global / band / random-block family (block_rule_global_band.cpp): global
// tokens g (i < g or j < g), a band of width w (|i - j| < w), the random blocks of `chosen`
// (b x b, block row bi's columns cols[row_ptr[bi] ..]), then j <= i when causal. g, w 0 and
// chosen empty leave that part out.
std::unique_ptr<BlockRule> MakeGlobalBandRule(int64_t len, int64_t global, int64_t width,
                                              ChosenBlocks chosen, int64_t block, bool causal);

}  // namespace stof::engine
