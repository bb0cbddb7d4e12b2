// LayerWorkbench::StateJson (layer_workbench.h): the layer views' part of --dump-state, under
// "lab" (studio_state_json.cpp): the layer, the fusion scheme and its segments, the ladder and
// trade-offs, what runs, the tuning run, the plan, the profiles and the GPU worker.
#include "app/studio/layer_workbench.h"

#include "engine/fusion/scheme_hex.h"

namespace stof::app {

namespace {

std::string Hex(const std::string& code) {
  auto h = engine::CodeToHex(code);
  return h.IsOk() ? *h : std::string();
}

nlohmann::json OrNull(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

// The segments as listed, and their predicted sum in `total_us`.
nlohmann::json SegmentsJson(const std::vector<SegmentView>& segments, double* total_us) {
  nlohmann::json segs = nlohmann::json::array();
  *total_us = 0;
  for (const SegmentView& s : segments) {
    *total_us += s.predicted_us;
    segs.push_back({{"ops", engine::SegmentLabel(s.segment)}, {"template", s.tmpl},
                    {"choice", s.choice}, {"predicted_us", s.predicted_us},
                    {"predicted_bytes", s.predicted_bytes}, {"measured_us", OrNull(s.measured_us)},
                    {"error", s.predict_error}});
  }
  return segs;
}

nlohmann::json LadderJson(const std::vector<engine::LadderRung>& rungs, const std::string& note) {
  nlohmann::json ladder = nlohmann::json::array();
  for (const engine::LadderRung& r : rungs)
    ladder.push_back({{"name", r.name}, {"us", r.us}, {"dram_bytes", r.dram_bytes},
                      {"kernels", r.kernels}, {"measured", r.measured}});
  return {{"rungs", ladder}, {"note", note}};
}

nlohmann::json TradeoffsJson(const std::vector<engine::FusionTradeoff>& layer,
                             const std::vector<engine::TradeoffOnDevice>& norm_by_device) {
  nlohmann::json tradeoffs = nlohmann::json::array();
  for (const engine::FusionTradeoff& t : layer)
    tradeoffs.push_back({{"what", t.what}, {"template", t.tmpl}, {"ops", engine::SegmentLabel(t.fused)},
                         {"fused_us", t.fused_us}, {"apart_us", t.apart_us}, {"pays", t.Pays()}});
  nlohmann::json by_device = nlohmann::json::array();
  for (const engine::TradeoffOnDevice& t : norm_by_device)
    by_device.push_back({{"device", t.device}, {"fused_us", t.tradeoff.fused_us},
                         {"apart_us", t.tradeoff.apart_us}, {"pays", t.tradeoff.Pays()}});
  return {{"layer", tradeoffs}, {"gemm_norm_by_device", by_device}};
}

nlohmann::json ResultsJson(const std::vector<MethodResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const MethodResult& m : results) {
    const engine::TuneSessionResult& s = m.session;
    out.push_back({{"method", engine::TuneMethodName(s.result.method)},
                   {"layer_us", s.result.total_us}, {"measured", s.result.measured},
                   {"code", s.result.scheme.Code()}, {"candidates", s.result.stats.candidates},
                   {"stopped_by", s.result.stopped_by}, {"device", s.device_text},
                   {"model_us", OrNull(s.model_us)}, {"default_model_us", OrNull(s.default_model_us)},
                   {"default_layer_us", OrNull(s.default_layer_us)}, {"speedup", OrNull(TuneSpeedup(s))},
                   {"tuning_s", s.result.stats.total_s}});
  }
  return out;
}

// The tuning run: live feed (traces, points, rewards, progress) and the finished methods.
nlohmann::json TuneJson(const TuneLive& live, const std::vector<MethodResult>& results, bool tuning,
                        const std::string& error) {
  nlohmann::json traces = nlohmann::json::array();
  for (const TuneLive::Trace& t : live.traces)
    traces.push_back({{"method", t.method}, {"points", t.best_us.size()},
                      {"best_us", t.best_us.empty() ? nlohmann::json() : nlohmann::json(t.best_us.back())}});
  int64_t measured_points = 0;
  for (const TuneLive::Point& p : live.points) measured_points += p.measured ? 1 : 0;
  const char* progress = tuning                                                  ? "running"
                         : live.progress.candidates > 0 || !results.empty() ? "finished"
                                                                            : "not started";
  return {{"running", tuning}, {"progress", progress}, {"stage", live.progress.stage},
          {"candidates", live.progress.candidates}, {"traces", traces},
          {"points", live.points.size()}, {"measured_points", measured_points},
          {"rewards", live.rewards.size()}, {"results", ResultsJson(results)}, {"error", error},
          {"candidate_plot", TunePlotsJson(BuildTunePlots(live))}};
}

}  // namespace

nlohmann::json LayerWorkbench::StateJson() const {
  nlohmann::json j;
  // What is computed, and what the layer widgets show (they differed: issue 16).
  j["layer"] = {{"model", m_choice.config_path.empty() ? m_choice.model : m_choice.config_path},
                {"batch", m_choice.batch}, {"seq_len", SeqLen()}, {"error", m_graph_error},
                {"ops", m_graph ? static_cast<int64_t>(m_graph->ops.size()) : 0},
                {"hidden", m_graph ? m_graph->hidden : 0}};
  j["layer_widgets"] = {{"model", m_choice_edit.model}, {"config", m_choice_edit.config_path},
                        {"batch", m_choice_edit.batch}};
  double pred_total = 0;
  nlohmann::json segs = SegmentsJson(m_segments, &pred_total);
  j["fusion"] = {{"code", m_scheme ? m_scheme->Code() : ""},
                 {"hex", m_scheme ? Hex(m_scheme->Code()) : ""},
                 {"source", m_scheme_source}, {"segments", segs},
                 {"predicted_layer_us", pred_total}, {"message", m_fusion_message}};
  j["ladder"] = LadderJson(m_ladder, m_ladder_note);
  j["tradeoffs"] = TradeoffsJson(m_tradeoffs, m_norm_by_device);
  // What runs for the layer's attention: the fusion view's and the ladder's fused choice.
  j["run_choice"] = m_run ? engine::MhaRunChoiceJson(*m_run) : nlohmann::json{{"why_not", m_run_error}};
  j["tune"] = TuneJson(LiveSnapshot(), m_results, m_tuning, m_tune_error);
  j["plan"] = {{"label", m_plan_label}, {"code", m_plan ? m_plan->fusion.code : ""}};
  if (m_run_report) {
    j["run_plan"] = {{"total_us", m_run_report->report.total_us},
                     {"layers", m_run_report->report.layers},
                     {"tuned_us", OrNull(m_run_report->tuned_us)}};
  }
  j["profiles"] = ProfilePanelStateJson(m_profiles);
  j["gpu"] = {{"ready", m_worker.Ready()}, {"has_gpu", m_worker.HasGpu()},
              {"device", m_worker.DeviceText()}, {"busy", m_worker.Busy()}};
  return j;
}

}  // namespace stof::app
