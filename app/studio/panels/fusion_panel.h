// The fusion view: the layer's ops as a chain of boxes (kind, CI / MI colour, shapes on
// hover) grouped into the scheme's segments, the binary code and its hex form; a click
// between two ops splits or joins segments (a refused join is explained); each segment's
// template, parameters and predicted or measured time and bytes; and the attention block's
// fusion ladder (U unfused, SD decomposed, SDF decomposed + fused, F fully fused) as latency
// and DRAM bytes bars, measured or predicted as the note above them says (each bar tagged
// when the two kinds are mixed). Studio-independent like profile_panel.h: it draws a
// FusionView (filled from LayerWorkbench by layer_views.cpp) and returns FusionActions, which
// the studio applies.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "app/studio/layer_types.h"
#include "app/studio/panels/layer_chooser.h"
#include "engine/analysis/mha_run.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"
#include "engine/tune/ladder.h"

namespace stof::app {

struct FusionView {
  LayerChooserView layer;
  const engine::OpGraph* graph = nullptr;         // null: no layer (layer.graph_error says why)
  const engine::FusionScheme* scheme = nullptr;   // the scheme shown; null without a layer
  std::string scheme_source;                      // "default", "edited", "tuned: stof", ...
  std::span<const SegmentView> segments;          // one per segment of `scheme`
  std::string message;                            // why the last click was refused; "" none
  std::optional<engine::MhaRunChoice> run;        // what runs for the layer's attention
  std::string run_error;                          // why that is not known, when `run` is unset
  std::span<const engine::LadderRung> ladder;     // the attention's rungs, predicted or measured
  std::string ladder_note;                        // which of the two, or why there are none
  bool can_measure_ladder = false;                // a GPU, and no job running on it
};

struct FusionActions {
  LayerChooserActions layer;
  std::optional<int> toggle_boundary;  // split or join between this op and the next
  bool reset_scheme = false;           // back to the default scheme
  bool measure_ladder = false;         // measure the ladder on the GPU
};

FusionActions DrawFusionPanel(const FusionView& view);
// The view's parts the Learn tab shows inside its lessons: the fusion ladder's bars (its
// Measure button is the only action) and the segments table.
FusionActions DrawFusionLadder(const FusionView& view);
void DrawFusionSegments(const FusionView& view);

}  // namespace stof::app
