// Mask canvas (left of the window): the mask as a texture with zoom (wheel, down to single
// cells) and pan (drag), a cell grid when zoomed in, the block-layout overlay, the edit tools
// (brush, line, rectangle, band; erase and symmetric), and a tooltip with the exact cell and
// the block under the cursor with its place in the CSR arrays; a click in Inspect zooms to
// the block.
#pragma once

namespace stof::app {
class Studio;
void DrawMaskCanvas(Studio& studio);
}  // namespace stof::app
