// The tune view: the layer (model preset or config.json, batch; L and mask from the editor),
// methods (several = compared, one line each), budget, seed, Start and Cancel; a progress bar
// with stage, candidates, best so far and time left; live plots of the best latency over
// time, every candidate's predicted against measured time (the analytical model's accuracy),
// and STOF's per-segment stage-2 rewards; the results table, plan export, "run plan" and a
// jump to the fusion view. The tuning runs on the GpuWorker; this only draws LayerWorkbench
// state.
#pragma once

#include <string>

namespace stof::app {

class LayerWorkbench;
// Returns true when the user asked to see the tuned plan in the fusion view. `plan_path`: the
// plan file field, shared with the Export tab's (ExportPanelUi::plan_path).
bool DrawTunePanel(LayerWorkbench& bench, std::string& plan_path);

}  // namespace stof::app
