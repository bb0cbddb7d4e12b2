// Two mask forms that long-context libraries use, turned into RowRuns (engine/mask/row_runs.h)
// without any rows x cols step:
// - slices, as MagiAttention gives a mask: a list of (query range, key range, kind), the mask
//   being their union; a kind says which pairs of its rectangle attend (full, causal aligned to
//   the bottom right as FlashAttention's, inverse causal aligned to the top left, or both);
// - column intervals, as FlashMask keeps one: per key column up to two ranges of query rows
//   that do NOT attend it (a lower and an upper range), every other row attending.
// Both conversions are exact (tests/engine/mask_slices_test.cpp compares them with the masks
// evaluated cell by cell). Used by the engine's callers that take these forms; docs/masks.md,
// "Slices and column intervals".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/mask/row_runs.h"

namespace stof::engine {

enum class SliceKind {
  kFull,           // every pair of the rectangle
  kCausal,         // query i over key j (from the slice's corners) when j <= i + (keys - queries)
  kInverseCausal,  // when j >= i
  kBiCausal,       // both
};

// "full", "causal", "inv_causal", "bi_causal" (MagiAttention's names); parsing gives an error
// naming `what` and listing them.
const char* SliceKindName(SliceKind kind);
Expected<SliceKind> ParseSliceKind(const std::string& name, const std::string& what);

// Queries [q_begin, q_end) over keys [k_begin, k_end).
struct MaskSlice {
  int64_t q_begin = 0, q_end = 0, k_begin = 0, k_end = 0;
  SliceKind kind = SliceKind::kFull;
  bool operator==(const MaskSlice&) const = default;
};

// The union of `slices` as a rows x cols mask. Each slice must be non-empty and inside the mask
// (an error names it: "slices[2].q_end: must be in 1..4096 and above q_begin 10, got 5"); slices
// may overlap. Time: the slices, plus per row the slices covering it, plus the runs.
Expected<RowRuns> RowRunsFromSlices(int64_t rows, int64_t cols,
                                    const std::vector<MaskSlice>& slices);

// FlashMask's column form: key column j is not attended by query rows [lower_begin[j],
// lower_end[j]) nor [upper_begin[j], upper_end[j]); an empty range (begin >= end) masks
// nothing. Each vector holds `cols` values in 0..rows (an error names the vector and column).
struct ColumnIntervals {
  std::vector<int64_t> lower_begin, lower_end, upper_begin, upper_end;
};
Expected<RowRuns> RowRunsFromColumnIntervals(int64_t rows, int64_t cols,
                                             const ColumnIntervals& masked);

}  // namespace stof::engine
