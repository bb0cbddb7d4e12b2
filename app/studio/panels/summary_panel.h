// Summary panel: mask statistics, block-layout statistics with the block-size choice and the
// legend, and STOF's kernel selection (Eq. 1 threshold, Eq. 2 best) for the workload.
#pragma once

#include "app/studio/studio.h"

namespace stof::app {

struct SummaryInput {
  const StudioState& state;
  bool* show_blocks;
  int* block_choice;  // index into {16, 32, 64, 128}
};

// Returns true when the user changed an input that needs Studio::Rebuild().
bool DrawSummaryPanel(const SummaryInput& in);

}  // namespace stof::app
