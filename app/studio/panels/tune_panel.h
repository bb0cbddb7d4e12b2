// The tune view: the layer (model preset or config.json, batch; L and mask from the editor),
// methods (several = compared, one line each), budget, seed, Start and Cancel; a progress bar
// with stage, candidates, best so far and time left; live plots of the best latency over
// time, every candidate's predicted against measured time (the analytical model's accuracy),
// and STOF's per-segment stage-2 rewards; the results table, plan export, "run plan" and a
// jump to the fusion view. Studio-independent like profile_panel.h: it draws a TuneView
// (filled from LayerWorkbench by layer_views.cpp; the tuning itself runs on the GpuWorker)
// and returns TuneActions, which the studio applies.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "app/studio/layer_types.h"
#include "app/studio/panels/layer_chooser.h"
#include "app/studio/tune_job.h"
#include "app/studio/tune_plots.h"
#include "engine/plan/plan.h"

namespace stof::app {

struct TuneView {
  LayerChooserView layer;
  TuneSettings settings;                   // the widgets' values
  bool tuning = false;                     // a tuning run is under way
  bool can_start = false;                  // a layer, a ready GPU worker, no tuning running
  bool worker_busy = false;                // the GPU worker runs a job (Cancel, Run plan)
  bool has_gpu = false;                    // plans can be measured here
  std::string device_text;                 // what the worker runs on, "(starting)" before
  const TunePlots* plots = nullptr;        // the live feed's plots; never null
  std::span<const MethodResult> results;   // the last run's methods that finished
  std::string error;                       // why the last run failed; "" when it did not
  const engine::Plan* plan = nullptr;      // tuned here or opened; null without one
  std::string plan_label;
  const PlanRunReport* run_report = nullptr;  // the last "run plan"; null before one
};

struct TuneActions {
  LayerChooserActions layer;
  std::optional<TuneSettings> settings;      // the widgets' new values
  bool start = false, cancel = false;
  bool show_fusion = false;                  // show the tuned plan in the fusion view
  std::optional<std::string> export_plan;    // "Export plan JSON": the file
  bool run_plan = false;                     // measure the plan's whole model again
};

// `plan_path`: the plan file field, shared with the Export tab's (ExportPanelUi::plan_path).
TuneActions DrawTunePanel(const TuneView& view, std::string& plan_path);

}  // namespace stof::app
