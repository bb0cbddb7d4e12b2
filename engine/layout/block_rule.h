// Masks given by a rule evaluated per block, for layouts at lengths where neither L x L bits
// nor row runs are cheap: a dilated band holds one run per attended key (268 million at
// L = 262144), but its cells in one block are a periodic pattern a few machine words make.
// BlockRule says, for rows of a block row, which columns may attend (a superset) and one row's
// bits over a stretch of columns; BlockLayout::Build(const BlockRule&, ...) (block_layout.h)
// builds the layout from them, equal field by field to the one built from the same mask's bits
// or runs. MakeBlockRule gives the rule of the generator specs that have one. Used by
// `stof layout` past 32768 (app/cli/cmd_layout.cpp); docs/masks.md, "Per-block rules".
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "engine/mask/mask_spec.h"

namespace stof::engine {

class BlockRule {
 public:
  virtual ~BlockRule() = default;
  virtual int64_t Rows() const = 0;
  virtual int64_t Cols() const = 0;
  // Columns [first, end) that rows [r0, r1) may attend: a superset of what they attend, inside
  // [0, Cols()).
  virtual std::pair<int64_t, int64_t> ColumnSpan(int64_t r0, int64_t r1) const = 0;
  // Row r's cells over columns [c0, c0 + n) as bits (bit k = column c0 + k; n <= 256, inside
  // the mask), ORed into `words` (which the caller zeroes).
  virtual void RowBits(int64_t r, int64_t c0, int64_t n, uint64_t* words) const = 0;
};

// The rule of a resolved spec (Resolve) where one exists: a plain dilated band or sliding
// window (with or without `causal`); null for every other pattern and for compositions.
std::unique_ptr<BlockRule> MakeBlockRule(const MaskSpec& resolved);

}  // namespace stof::engine
