// The Fusion and Tune tabs' side of LayerWorkbench: each view state filled from the workbench
// (what the panel draws) and each actions struct applied to it (what the user asked for), so
// that panels/fusion_panel, tune_panel and layer_chooser never see the workbench. Called by
// studio_views.cpp (the tabs, and the Learn tab's live ladder and segments).
#pragma once

#include "app/studio/layer_workbench.h"
#include "app/studio/panels/fusion_panel.h"
#include "app/studio/panels/layer_chooser.h"
#include "app/studio/panels/tune_panel.h"

namespace stof::app {

// The views point into the workbench: draw them before applying any actions.
LayerChooserView MakeLayerChooserView(const LayerWorkbench& bench);
FusionView MakeFusionView(const LayerWorkbench& bench);
// Not const: the tune plots are rebuilt first when the live feed moved.
TuneView MakeTuneView(LayerWorkbench& bench);

void ApplyLayerChooserActions(LayerWorkbench& bench, const LayerChooserActions& a);
void ApplyFusionActions(LayerWorkbench& bench, const FusionActions& a);
// Every tune action but show_fusion, which the studio's tab shell takes.
void ApplyTuneActions(LayerWorkbench& bench, const TuneActions& a);

}  // namespace stof::app
