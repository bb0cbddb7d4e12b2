// SelectRandomBlocks: the random-block draw of the random_blocks and bigbird generators
// (docs/masks.md, "Random blocks"), shared by Generate (mask_spec.cpp, which sets the chosen
// blocks' bits) and RowRuns::FromSpec (row_runs_spec.cpp, which lists them per block row).
// One loop for both, so a seed chooses the same blocks in both forms by construction.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/core/split_mix64.h"

namespace stof::engine {

// Chooses round(fill * candidates) of the blocks (bi, bj) of an nb x nb grid for which
// is_candidate(bi, bj) holds, by selection sampling (Knuth's Algorithm S) over the candidates
// in row-major order driven by SplitMix64(seed), and calls choose(bi, bj) for each chosen
// block in that order. `candidates` must be the number of blocks is_candidate accepts (the
// callers count them their own way). O(1) memory; one draw per candidate visited.
template <class IsCandidate, class Choose>
void SelectRandomBlocks(int64_t nb, int64_t candidates, double fill, uint64_t seed,
                        IsCandidate&& is_candidate, Choose&& choose) {
  int64_t needed = std::llround(fill * static_cast<double>(candidates));
  if (needed <= 0) return;
  SplitMix64 rng(seed);
  int64_t remaining = candidates;
  const int64_t total = nb * nb;
  for (int64_t idx = 0; idx < total && needed > 0; ++idx) {
    const int64_t bi = idx / nb, bj = idx % nb;
    if (!is_candidate(bi, bj)) continue;
    if (static_cast<int64_t>(rng.Below(static_cast<uint64_t>(remaining))) < needed) {
      choose(bi, bj);
      --needed;
    }
    --remaining;
  }
}

}  // namespace stof::engine
