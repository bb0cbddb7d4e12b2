// Block-layout panel (tab "Block layout"): BM and BN, the overlay mode with its legend, the
// layout's statistics and kernel work next to FlexAttention's 128 x 128, the per-block-row
// bar chart of valid blocks, and the block-size table (click a row to use that size).
#pragma once

namespace stof::app {
class Studio;
void DrawLayoutPanel(Studio& studio);
}  // namespace stof::app
