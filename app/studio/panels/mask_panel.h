// Mask panel (tab "Mask"): pattern presets with live parameter sliders for every engine
// generator (compositions included, operands edited recursively), L from 16 to 16384, the
// seed, and the mask's statistics. Studio-independent like profile_panel.h: it draws a
// MaskView (the document, filled by the studio each frame) and edits the generator in place
// (MaskPanelUi, kept by the studio), and returns the generator to regenerate the mask from;
// the studio regenerates it as one undo step per drag.
#pragma once

#include <optional>

#include "engine/analysis/layout_analysis.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_history.h"
#include "engine/mask/mask_spec.h"

namespace stof::app {

// The tab's widgets between frames. No statics: two studios never share them.
struct MaskPanelUi {
  engine::MaskSpec preset;     // the generator being edited (the studio sets it to a new mask's)
  int doc_split = 4;           // "split evenly": the document count
  bool preset_pending = false;  // a change at L > 4096 waiting for the control's release
};

struct MaskView {
  const engine::Mask* mask = nullptr;            // the document's bits; never null
  const engine::MaskSpec* spec = nullptr;        // their generator; null once edited or loaded
  const engine::MaskHistory* history = nullptr;  // the undo history; never null
  const engine::MaskAnalysis* analysis = nullptr;  // the latest analysis; null until the first
};

struct MaskActions {
  std::optional<engine::MaskSpec> regenerate;  // make the mask from this generator
};

MaskActions DrawMaskPanel(const MaskView& view, MaskPanelUi& ui);

}  // namespace stof::app
