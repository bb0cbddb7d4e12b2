// The mask canvas' toolbar (panels/mask_canvas.cpp draws it above the canvas): the edit tool
// (Inspect, Brush, Line, Rect, Band), Erase and Symmetric, the brush size or band width, the
// overlay mode and Fit. The tool settings and the zoom are the canvas' own widget state
// (canvas_state.h), edited in place; the overlay is the studio's, returned as an action.
#pragma once

#include <optional>

#include "app/studio/canvas_state.h"
#include "engine/mask/mask.h"

namespace stof::app {

// Returns the overlay picked this frame, if any.
std::optional<Overlay> DrawCanvasToolbar(const engine::Mask& mask, Overlay overlay, EditSettings& e,
                                         CanvasView& canvas);

}  // namespace stof::app
