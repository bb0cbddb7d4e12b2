// Mask canvas (left of the window): the mask as a texture with zoom (wheel, down to single
// cells) and pan (drag), a cell grid when zoomed in, the block-layout overlay, the edit tools
// (brush, line, rectangle, band; erase and symmetric), and a tooltip with the exact cell and
// the block under the cursor with its place in the CSR arrays; a click in Inspect zooms to
// the block. Studio-independent like profile_panel.h: it draws a MaskCanvasView (filled by
// the studio each frame), edits its own tool settings and zoom in place (canvas_state.h), and
// returns the edits and the overlay the user asked for; the studio applies them to the
// document.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/studio/canvas_state.h"
#include "app/studio/mask_document.h"
#include "app/studio/mask_textures.h"
#include "engine/analysis/layout_analysis.h"
#include "engine/mask/mask.h"

namespace stof::app {

struct MaskCanvasView {
  const engine::Mask* mask = nullptr;              // the document's bits; never null
  const engine::MaskAnalysis* analysis = nullptr;  // the latest (maybe a version behind); or null
  bool analysis_ready = false;                     // it matches the current inputs
  bool layout_fits = false;                        // its layout has the mask's shape
  Overlay overlay = Overlay::kBlocksOverMask;
  const MaskTextures* textures = nullptr;          // kept current by the studio; never null
  // The exact-cell texture of rows [r0, r1) x cols [c0, c1) (MaskTextures::Detail), made when
  // the visible rectangle changes.
  std::function<const Texture&(int64_t r0, int64_t r1, int64_t c0, int64_t c1)> detail;
};

// One edit of the cells; a non-empty `gesture` first opens an undo step with that label (an
// open one is kept), "" continues the stroke in progress.
struct CanvasEdit {
  std::string gesture;
  EditCommand edit;
};

struct MaskCanvasActions {
  std::vector<CanvasEdit> edits;  // in the order they were made
  std::optional<Overlay> overlay;  // the toolbar's overlay combo
};

MaskCanvasActions DrawMaskCanvas(const MaskCanvasView& view, EditSettings& edit, CanvasView& canvas);

}  // namespace stof::app
