// The layer row the Fusion and Tune tabs share: model preset or config.json path, batch, the
// editor's L, and why the layer could not be built. It draws a LayerChooserView and returns
// the widgets' new values and whether to compute the layer from them (LayerChooserActions),
// which the studio applies to LayerWorkbench (layer_views.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "app/studio/layer_types.h"

namespace stof::app {

struct LayerChooserView {
  LayerChoice choice;        // the widgets' values (the layer computed changes on apply)
  int64_t seq_len = 0;       // the editor's mask's L
  std::string graph_error;   // why the layer could not be built; "" when it was
};

struct LayerChooserActions {
  std::optional<LayerChoice> choice;  // the widgets' new values
  bool apply = false;                 // compute the layer from the widgets' values
};

LayerChooserActions DrawLayerChooser(const LayerChooserView& view);

}  // namespace stof::app
