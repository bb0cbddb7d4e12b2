// The colour key of the mask canvas for an overlay, in the canvas' own colours: the mask
// (attends / masked), the block classes (full / part / empty) or both blended ("blocks over
// mask": a full block's attended cells, a part block's attended and masked cells, an empty
// block). Drawn on the canvas (panels/mask_canvas.cpp) and beside the Mask and Block layout
// tabs' controls, so every view of the mask names its colours the same way.
#pragma once

#include <vector>

#include "app/studio/canvas_state.h"
#include "app/studio/widgets/plots.h"

namespace stof::app {

std::vector<plots::LegendItem> CanvasKey(Overlay overlay);

}  // namespace stof::app
