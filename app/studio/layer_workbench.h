// LayerWorkbench: the model behind the studio's fusion, tune and profile views (no ImGui here;
// named for what it is, the bench on which one layer is fused, tuned, profiled and run: it was
// LayerLab). It holds the layer being studied (a model preset or config.json at a batch size,
// with the editor's mask and its L), the fusion scheme shown (default, edited by clicks, tuned,
// or a loaded plan's) with each segment's template and predicted or measured time and bytes,
// the attention block's fusion ladder, the tuning runs (tune_job.h: live traces fed by the
// tuner's observer on the GpuWorker; here the results and the tuned plan), "run plan" reports
// and the profiles shown (profile_view_state.h).
// Every heavy step (tuning, measuring, profiling) is a GpuWorker job; predictions of the shown
// scheme are recomputed only when the layer, mask or scheme changes. Studio owns one and
// forwards the mask; layer_views.cpp fills the Fusion and Tune panels' views from it and
// applies their actions, studio_views.cpp does the same for the Profile panel, batch_driver.cpp
// scripts it. Errors become messages here, never exits. The members are defined by job:
// layer_workbench.cpp (the layer), _fusion.cpp (the scheme shown, the ladder), _tune.cpp
// (tuning), _runs.cpp (plans and profiles), _json.cpp (the --dump-state part).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/studio/gpu_worker.h"
#include "app/studio/layer_types.h"
#include "app/studio/profile_view_state.h"
#include "app/studio/tune_job.h"
#include "app/studio/tune_plots.h"
#include "engine/device/device_spec.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan.h"
#include "engine/run/layer_runner.h"
#include "engine/run/model_runner.h"
#include "engine/tune/fusion_tradeoff.h"
#include "engine/tune/ladder.h"
#include "engine/tune/tune_session.h"

namespace stof::app {

class LayerWorkbench {
 public:
  explicit LayerWorkbench(GpuWorker& worker);

  // Called by Studio once per frame: cheap unless the mask version or device changed.
  void SetMask(const engine::Mask& mask, uint64_t version, const std::optional<engine::MaskSpec>& spec,
               const std::string& mask_label);
  void SetDevice(const engine::DeviceSpec& device);

  // ---- the layer ----
  // The layer widgets' values, computed only on ApplyChoice.
  const LayerChoice& WidgetChoice() const { return m_choice_edit; }
  void EditChoice(const LayerChoice& choice) { m_choice_edit = choice; }
  void ApplyChoice();                         // rebuild the graph from WidgetChoice()
  // Sets what the widgets show and what is computed at once (the start options --model,
  // --config, --batch); the graph follows with the mask's L.
  void SetChoice(const LayerChoice& choice);
  const engine::OpGraph* Graph() const { return m_graph ? &*m_graph : nullptr; }
  const std::string& GraphError() const { return m_graph_error; }
  int64_t SeqLen() const { return m_mask ? m_mask->Rows() : 0; }

  // ---- the fusion view ----
  const std::optional<engine::FusionScheme>& Scheme() const { return m_scheme; }
  const std::string& SchemeSource() const { return m_scheme_source; }
  const std::vector<SegmentView>& Segments() const { return m_segments; }
  // Click between ops `after_op` and `after_op` + 1; a refused join sets FusionMessage().
  void ToggleBoundary(int after_op);
  void ResetScheme();                         // the default greedy scheme
  bool SetSchemeCode(const std::string& code_or_hex);  // typed in the view; false + message
  const std::string& FusionMessage() const { return m_fusion_message; }
  // What the engine runs for the layer's attention (engine::ChooseRun with the kernels' rules):
  // the fusion view's and the ladder's fused configuration while no tuning or plan set one.
  const std::optional<engine::MhaRunChoice>& RunChoice() const { return m_run; }
  const std::string& RunChoiceError() const { return m_run_error; }
  const std::vector<engine::LadderRung>& Ladder() const { return m_ladder; }
  // The layer's GEMM + epilogue and GEMM + LayerNorm candidates predicted fused and apart,
  // and GEMM + LayerNorm on every built-in device (the Learn tab's lesson 3).
  const std::vector<engine::FusionTradeoff>& Tradeoffs() const { return m_tradeoffs; }
  const std::vector<engine::TradeoffOnDevice>& NormByDevice() const { return m_norm_by_device; }
  const std::string& LadderNote() const { return m_ladder_note; }
  void MeasureLadder();                       // a GPU job; predictions stay until it lands

  // ---- tuning ----
  const TuneSettings& Settings() const { return m_settings; }
  void EditSettings(const TuneSettings& settings) { m_settings = settings; }
  void StartTune();
  void CancelJobs();
  bool Tuning() const { return m_tuning; }
  TuneLive LiveSnapshot() const { return m_live->Snapshot(); }
  uint64_t LiveVersion() const { return m_live->Version(); }
  const std::vector<MethodResult>& Results() const { return m_results; }
  const engine::Plan* TunedPlan() const { return m_plan ? &*m_plan : nullptr; }
  const std::string& PlanLabel() const { return m_plan_label; }
  const std::string& TuneError() const { return m_tune_error; }
  void ExportPlan(const std::string& path);   // message in Message()
  // A loaded plan (Studio reads the file and puts its mask in the editor first): its layer,
  // mask and scheme in the fusion view, its measurements as a profile run (a baseline).
  void OpenPlan(const engine::Plan& plan, const engine::Mask& mask, const std::string& path);
  void RunPlan();                             // a GPU job: the plan's whole model again
  const std::optional<PlanRunReport>& RunReport() const { return m_run_report; }

  // The tune view's plots, rebuilt here when LiveVersion() moved since the last call.
  const TunePlots& PlotsNow();

  // ---- profiles ----
  ProfilePanelState& Profiles() { return m_profiles; }
  void ProfileNow();                          // a GPU job: the shown scheme, one layer
  void OpenProfile(const std::string& path);  // a stof-layer-profile or a plan

  bool HasGpu() const { return m_worker.HasGpu(); }
  GpuWorker& Worker() { return m_worker; }
  const GpuWorker& Worker() const { return m_worker; }
  // The last command's outcome for the status line (error flag, text); cleared on read.
  bool TakeMessage(bool* error, std::string* text);
  nlohmann::json StateJson() const;

 private:
  void RebuildGraph();
  void SchemeChanged(const std::string& source);
  void RecomputeSegments();
  void RecomputeLadder();
  void RecomputeRun();            // m_run for the layer's attention, mask and device
  void RecomputeTradeoffs();      // m_tradeoffs and m_norm_by_device
  // m_choices, or with none (the defaults) one per segment with the attention's m_run.
  std::vector<engine::SegmentChoice> EffectiveChoices() const;
  void TuneLanded(TuneJobResult done);  // on the GUI thread: results, plan, scheme shown
  void Message(bool error, const std::string& text);
  engine::Workload AttentionWorkload() const;  // the layer's attention, fp16; needs m_graph

  GpuWorker& m_worker;
  std::shared_ptr<const engine::Mask> m_mask;
  uint64_t m_mask_version = 0;
  std::optional<engine::MaskSpec> m_spec;
  std::string m_mask_label;
  engine::DeviceSpec m_device;

  LayerChoice m_choice_edit, m_choice;
  std::optional<engine::OpGraph> m_graph;
  std::string m_graph_error;
  std::optional<engine::FusionScheme> m_scheme;
  std::vector<engine::SegmentChoice> m_choices;  // per segment, empty = defaults
  std::optional<engine::MhaRunChoice> m_run;
  std::string m_run_error;
  std::vector<std::optional<double>> m_measured;  // per segment, from the tuning or plan
  std::string m_scheme_source = "default";
  std::vector<SegmentView> m_segments;
  std::string m_fusion_message;
  std::vector<engine::LadderRung> m_ladder;
  std::vector<engine::FusionTradeoff> m_tradeoffs;
  std::vector<engine::TradeoffOnDevice> m_norm_by_device;
  std::string m_ladder_note;
  uint64_t m_ladder_tag = 0;

  TuneSettings m_settings;
  bool m_tuning = false;
  std::shared_ptr<TuneLiveFeed> m_live;
  std::vector<MethodResult> m_results;
  std::optional<engine::Plan> m_plan;
  std::string m_plan_label;
  std::string m_tune_error;
  std::optional<PlanRunReport> m_run_report;

  TunePlots m_plots;
  ProfilePanelState m_profiles;

  bool m_message_error = false;
  std::string m_message;
  bool m_has_message = false;
};

}  // namespace stof::app
