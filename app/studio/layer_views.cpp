// The Fusion and Tune views filled from LayerWorkbench, and their actions applied
// (layer_views.h). The order of the applied actions is the order the panel draws them.
#include "app/studio/layer_views.h"

namespace stof::app {

LayerChooserView MakeLayerChooserView(const LayerWorkbench& bench) {
  return LayerChooserView{bench.WidgetChoice(), bench.SeqLen(), bench.GraphError()};
}

FusionView MakeFusionView(const LayerWorkbench& bench) {
  FusionView v;
  v.layer = MakeLayerChooserView(bench);
  v.graph = bench.Graph();
  v.scheme = bench.Scheme() ? &*bench.Scheme() : nullptr;
  v.scheme_source = bench.SchemeSource();
  v.segments = bench.Segments();
  v.message = bench.FusionMessage();
  v.run = bench.RunChoice();
  v.run_error = bench.RunChoiceError();
  v.ladder = bench.Ladder();
  v.ladder_note = bench.LadderNote();
  v.can_measure_ladder = bench.HasGpu() && !bench.Worker().Busy();
  return v;
}

TuneView MakeTuneView(LayerWorkbench& bench) {
  const GpuWorker& worker = bench.Worker();
  TuneView v;
  v.layer = MakeLayerChooserView(bench);
  v.settings = bench.Settings();
  v.tuning = bench.Tuning();
  v.can_start = !bench.Tuning() && bench.Graph() != nullptr && worker.Ready();
  v.worker_busy = worker.Busy();
  v.has_gpu = bench.HasGpu();
  v.device_text = worker.Ready() ? worker.DeviceText() : "(starting)";
  v.plots = &bench.PlotsNow();
  v.results = bench.Results();
  v.error = bench.TuneError();
  v.plan = bench.TunedPlan();
  v.plan_label = bench.PlanLabel();
  v.run_report = bench.RunReport() ? &*bench.RunReport() : nullptr;
  return v;
}

void ApplyLayerChooserActions(LayerWorkbench& bench, const LayerChooserActions& a) {
  if (a.choice) bench.EditChoice(*a.choice);
  if (a.apply) bench.ApplyChoice();
}

void ApplyFusionActions(LayerWorkbench& bench, const FusionActions& a) {
  ApplyLayerChooserActions(bench, a.layer);
  if (a.reset_scheme) bench.ResetScheme();
  if (a.toggle_boundary) bench.ToggleBoundary(*a.toggle_boundary);
  if (a.measure_ladder) bench.MeasureLadder();
}

void ApplyTuneActions(LayerWorkbench& bench, const TuneActions& a) {
  ApplyLayerChooserActions(bench, a.layer);
  if (a.settings) bench.EditSettings(*a.settings);
  if (a.start) bench.StartTune();
  if (a.cancel) bench.CancelJobs();
  if (a.export_plan) bench.ExportPlan(*a.export_plan);
  if (a.run_plan) bench.RunPlan();
}

}  // namespace stof::app
