// ChooseRandomBlocks and BigBird's candidate test (random_blocks.h).
#include "engine/mask/random_blocks.h"

#include <algorithm>

#include "engine/core/text_format.h"

namespace stof::engine {

bool GlobalBandLeaveEmpty(const MaskSpec& s, int64_t bi, int64_t bj) {
  const int64_t L = s.seq_len, b = s.block;
  const int64_t r0 = bi * b, r1 = std::min(r0 + b, L);
  const int64_t c0 = bj * b, c1 = std::min(c0 + b, L);
  if (r0 < s.global || c0 < s.global) return false;
  // Smallest |i - j| over the block's rows and columns.
  const int64_t gap = c0 >= r1 ? c0 - (r1 - 1) : (r0 >= c1 ? r0 - (c1 - 1) : 0);
  return gap >= s.width;
}

Expected<ChosenBlocks> ChooseRandomBlocks(const MaskSpec& s, bool only_empty,
                                          const std::string& path) {
  const int64_t nb = (s.seq_len + s.block - 1) / s.block;
  if (nb > kMaxRandomGridSide) {
    return MakeError(path + ".block: " + Str(s.block) + " makes a random-block grid of " +
                     Str(nb) + " x " + Str(nb) + " at seq_len " + Str(s.seq_len) +
                     " (one random draw per block); at most " + Str(kMaxRandomGridSide) +
                     " blocks per side, so a block of at least " +
                     Str((s.seq_len + kMaxRandomGridSide - 1) / kMaxRandomGridSide));
  }
  auto is_candidate = [&](int64_t bi, int64_t bj) {
    return !only_empty || GlobalBandLeaveEmpty(s, bi, bj);
  };
  int64_t candidates = nb * nb;
  if (only_empty) {
    candidates = 0;
    for (int64_t bi = 0; bi < nb; ++bi) {
      for (int64_t bj = 0; bj < nb; ++bj) candidates += is_candidate(bi, bj) ? 1 : 0;
    }
  }
  ChosenBlocks chosen;
  chosen.row_ptr.assign(static_cast<size_t>(nb) + 1, 0);
  // Blocks come in row-major order: count per block row, prefix-sum after.
  SelectRandomBlocks(nb, candidates, s.fill, s.seed, is_candidate, [&](int64_t bi, int64_t bj) {
    ++chosen.row_ptr[static_cast<size_t>(bi) + 1];
    chosen.cols.push_back(static_cast<int32_t>(bj));
  });
  for (size_t i = 1; i < chosen.row_ptr.size(); ++i) chosen.row_ptr[i] += chosen.row_ptr[i - 1];
  return chosen;
}

}  // namespace stof::engine
