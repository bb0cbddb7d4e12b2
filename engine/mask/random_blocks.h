// SelectRandomBlocks: the random-block draw of the random_blocks and bigbird generators
// (docs/masks.md, "Random blocks"), shared by Generate (mask_spec.cpp, which sets the chosen
// blocks' bits), and, through ChooseRandomBlocks (random_blocks.cpp: the chosen blocks listed
// per block row, BigBird's candidates tested on the block's bounds instead of on bits), by
// RowRuns::FromSpec (row_runs_spec.cpp) and the BigBird block rule (engine/layout/
// block_rule_global_band.cpp). One loop for all, so a seed chooses the same blocks in every
// form by construction.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/split_mix64.h"
#include "engine/core/status.h"
#include "engine/mask/mask_spec.h"

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

// Random-block grids hold at most 2^30 blocks: each candidate costs a draw, and Generate's
// worst case (block 1 at L = 32768) is this size, so the listed forms are never slower than
// it per spec.
inline constexpr int64_t kMaxRandomGridSide = int64_t{1} << 15;

// The chosen random blocks: block row bi's block columns are cols[row_ptr[bi] ..
// row_ptr[bi + 1]), increasing.
struct ChosenBlocks {
  std::vector<int64_t> row_ptr;
  std::vector<int32_t> cols;
};

// Whether global (i < g or j < g) and band (|i - j| < w) leave the b x b block (bi, bj) of an
// L x L mask (resolved spec `s`: seq_len, global, width, block) empty: BigBird's candidates.
// Blocks are clipped at L as in Generate.
bool GlobalBandLeaveEmpty(const MaskSpec& s, int64_t bi, int64_t bj);

// The blocks a resolved random_blocks (only_empty false) or bigbird (true) spec chooses, as
// Generate would. Errors name `path`.block when the grid is larger than kMaxRandomGridSide.
Expected<ChosenBlocks> ChooseRandomBlocks(const MaskSpec& s, bool only_empty,
                                          const std::string& path);

}  // namespace stof::engine
