// Block-layout panel (tab "Block layout"): BM and BN, the overlay mode with its legend, the
// layout's statistics and kernel work next to FlexAttention's 128 x 128, the per-block-row
// bar chart of valid blocks, and the block-size table (click a row to use that size).
// Studio-independent like profile_panel.h: it draws a LayoutView (filled by the studio each
// frame) and returns the choices the user made; the studio applies them.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "app/studio/canvas_state.h"
#include "engine/analysis/layout_analysis.h"
#include "engine/core/workload.h"

namespace stof::app {

struct LayoutView {
  int64_t block_m = 0, block_n = 0;                 // the chosen block size
  Overlay overlay = Overlay::kBlocksOverMask;        // the canvas' overlay
  const engine::MaskAnalysis* analysis = nullptr;  // the latest analysis; null until the first
  engine::Workload workload;                        // the FLOPs line's B, H, d
};

struct LayoutActions {
  std::optional<std::pair<int64_t, int64_t>> block;  // BM, BN from the combos or a table row
  std::optional<Overlay> overlay;                    // another overlay mode
};

LayoutActions DrawLayoutPanel(const LayoutView& view);

}  // namespace stof::app
