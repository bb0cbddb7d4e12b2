// The fusion view's op chain (drawn by panels/fusion_panel.cpp): the layer's ops as boxes in
// rows (blue compute-intensive, orange memory-intensive; shapes, FLOPs and bytes on hover),
// each segment a tinted group behind its boxes with its template below, and a clickable gap
// between two ops of a row that splits or joins segments there.
#pragma once

#include <optional>
#include <span>

#include "app/studio/layer_types.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"

namespace stof::app {

// Draws the chain at the cursor across the available width; returns the op after which a gap
// was clicked this frame (the caller splits or joins there).
std::optional<int> DrawOpChain(const engine::OpGraph& g, const engine::FusionScheme& scheme,
                               std::span<const SegmentView> segments);

}  // namespace stof::app
