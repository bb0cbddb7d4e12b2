// The mask canvas' own state, kept by Studio between frames and edited in place by
// panels/mask_canvas: the overlay mode (also the Block layout tab's radio buttons and the
// colour key of canvas_key.h), the edit tool with its settings and the gesture in progress,
// and the zoom and centre. Apart from studio.h so that the panels and canvas_key.h name these
// types without the session's header.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/mask/mask.h"

namespace stof::app {

enum class Overlay { kMask, kBlocksOverMask, kBlocks };

enum class Tool { kInspect, kBrush, kLine, kRect, kBand };

struct EditSettings {
  Tool tool = Tool::kInspect;
  int brush = 1;
  int band_width = 8;
  bool erase = false;
  bool symmetric = false;
  // The canvas gesture in progress: line / rectangle anchor, last brush cell.
  bool active = false;
  int64_t anchor_r = 0, anchor_c = 0, last_r = 0, last_c = 0;
};

// The canvas view: zoom 1 fits the mask; (cx, cy) is the cell at the canvas centre.
struct CanvasView {
  double zoom = 1.0;
  double cx = 0, cy = 0;
  static CanvasView Fitting(const engine::Mask& m) { return {1.0, m.Cols() / 2.0, m.Rows() / 2.0}; }
  // Rows [r0, r1) x cols [c0, c1) of `m` centred, with a quarter of their span as margin
  // (Inspect's click on a block).
  static CanvasView Around(const engine::Mask& m, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const double span = static_cast<double>(std::max<int64_t>(1, std::max(r1 - r0, c1 - c0)));
    const double zoom = std::max(1.0, static_cast<double>(std::max(m.Rows(), m.Cols())) / (span * 1.25));
    return {zoom, (c0 + c1) / 2.0, (r0 + r1) / 2.0};
  }
};

}  // namespace stof::app
