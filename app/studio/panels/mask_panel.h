// Mask panel: the element mask fitted to the panel, the block classes over it, and a tooltip
// with the exact cell and block under the cursor. Reads Studio state only.
#pragma once

#include "app/studio/studio.h"

namespace stof::app {

void DrawMaskPanel(const StudioState& state, const Texture& mask, const Texture& blocks,
                   bool show_blocks);

}  // namespace stof::app
