// LayerWorkbench (layer_workbench.h): the layer, its scheme's predictions, the ladder, and the
// GPU jobs (tune, run plan, profile, ladder) with their results landing on the GUI thread.
#include "app/studio/layer_workbench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "app/common/run_choice.h"
#include "app/studio/asset_paths.h"
#include "engine/fusion/default_scheme.h"
#include "engine/fusion/scheme_edit.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/fusion/template_match.h"
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"
#include "engine/plan/plan_choices.h"
#include "engine/tune/cost_source.h"
#include "engine/tune/segment_model.h"
#include "profiler/ladder_profile.h"
#include "profiler/layer_profile.h"

namespace stof::app {

namespace {

engine::Workload AttentionWorkload(const engine::OpGraph& g) {
  engine::Workload w;
  w.batch = g.batch;
  w.seq_len = g.seq_len;
  w.heads = g.heads;
  w.head_dim = g.head_dim;
  w.dtype = engine::DType::kF16;
  return w;
}

std::string Hex(const std::string& code) {
  auto h = engine::CodeToHex(code);
  return h.IsOk() ? *h : std::string();
}

}  // namespace

LayerWorkbench::LayerWorkbench(GpuWorker& worker)
    : m_worker(worker), m_live(std::make_shared<TuneLiveFeed>()) {
  m_profiles.shipped = ShippedProfiles();
}

void LayerWorkbench::Message(bool error, const std::string& text) {
  m_message_error = error;
  m_message = text;
  m_has_message = true;
}

bool LayerWorkbench::TakeMessage(bool* error, std::string* text) {
  if (!m_has_message) return false;
  *error = m_message_error;
  *text = m_message;
  m_has_message = false;
  return true;
}

engine::DeviceSpec LayerWorkbench::PredictDevice() const { return m_device; }

void LayerWorkbench::SetDevice(const engine::DeviceSpec& device) {
  if (device.name == m_device.name) return;
  m_device = device;
  // The roofline's roofs are this device's peaks, as every other view's.
  m_profiles.peaks = profiler::DevicePeaks{device.name, device.fp16_tensor_flops, device.dram_bytes_per_s};
  RecomputeRun();
  RecomputeSegments();
  RecomputeLadder();
  RecomputeTradeoffs();
}

void LayerWorkbench::SetMask(const engine::Mask& mask, uint64_t version,
                       const std::optional<engine::MaskSpec>& spec, const std::string& label) {
  if (m_mask && version == m_mask_version) return;
  const bool resized = !m_mask || m_mask->Rows() != mask.Rows();
  m_mask = std::make_shared<const engine::Mask>(mask);
  m_mask_version = version;
  m_spec = spec;
  m_mask_label = label;
  if (resized || !m_graph) {
    RebuildGraph();
  } else {
    RecomputeRun();
    RecomputeSegments();
    RecomputeLadder();
    RecomputeTradeoffs();
  }
}

void LayerWorkbench::ApplyChoice() {
  if (m_choice_edit == m_choice && m_graph) return;
  m_choice = m_choice_edit;
  RebuildGraph();
}

void LayerWorkbench::SetChoice(const LayerChoice& choice) {
  m_choice_edit = choice;
  ApplyChoice();
}

void LayerWorkbench::RebuildGraph() {
  m_graph.reset();
  m_scheme.reset();
  m_segments.clear();
  m_ladder.clear();
  m_graph_error.clear();
  if (!m_mask) return;
  engine::Expected<engine::ModelConfig> model =
      m_choice.config_path.empty() ? engine::FindModelPreset(m_choice.model)
                                   : engine::LoadModelConfig(m_choice.config_path);
  if (!model.IsOk()) {
    m_graph_error = model.Message();
    return;
  }
  engine::GraphRequest rq;
  rq.model = *model;
  rq.batch = m_choice.batch;
  rq.seq_len = m_mask->Rows();
  auto g = engine::BuildLayerGraph(rq);
  if (!g.IsOk()) {
    m_graph_error = g.Message();
    return;
  }
  m_graph = std::move(*g);
  m_scheme = engine::DefaultScheme(*m_graph);
  m_choices.clear();
  m_measured.clear();
  RecomputeRun();
  SchemeChanged("default");
  RecomputeLadder();
  RecomputeTradeoffs();
}

void LayerWorkbench::SchemeChanged(const std::string& source) {
  m_scheme_source = source;
  m_fusion_message.clear();
  RecomputeSegments();
}

void LayerWorkbench::RecomputeRun() {
  m_run.reset();
  m_run_error.clear();
  if (!m_graph || !m_mask || m_device.name.empty()) return;
  static const engine::MhaRunChooser chooser = MakeMhaRunChooser();  // the kernels' rules
  auto r = engine::ChooseRun(chooser, *m_mask, AttentionWorkload(*m_graph), m_device);
  if (r.IsOk()) m_run = std::move(*r);
  else m_run_error = r.Message();
}

void LayerWorkbench::RecomputeTradeoffs() {
  m_tradeoffs.clear();
  m_norm_by_device.clear();
  if (!m_graph || !m_mask || m_device.name.empty()) return;
  if (auto t = engine::PredictFusionTradeoffs(*m_graph, *m_mask, m_device); t.IsOk()) m_tradeoffs = std::move(*t);
  if (auto d = engine::TradeoffAcrossDevices(*m_graph, *m_mask, engine::BuiltinDevices(), "gemm_norm"); d.IsOk())
    m_norm_by_device = std::move(*d);
}

std::vector<engine::SegmentChoice> LayerWorkbench::EffectiveChoices() const {
  if (!m_choices.empty() || !m_scheme) return m_choices;
  engine::SegmentChoice c;
  if (m_run) c.mha_config = engine::RunConfig(*m_run);  // only attention segments read it
  return std::vector<engine::SegmentChoice>(m_scheme->Segments().size(), c);
}

void LayerWorkbench::RecomputeSegments() {
  m_segments.clear();
  if (!m_graph || !m_scheme || !m_mask) return;
  const engine::OpGraph& g = *m_graph;
  const auto& segs = m_scheme->Segments();
  const std::vector<engine::SegmentChoice> choices = EffectiveChoices();
  for (size_t i = 0; i < segs.size(); ++i) {
    SegmentView v;
    v.segment = segs[i];
    const engine::TemplateMatch m = engine::MatchTemplate(g, segs[i]);
    const engine::SegmentChoice c = i < choices.size() ? choices[i] : engine::SegmentChoice{};
    const engine::TemplateKind running = engine::RunningTemplate(g, segs[i], c);
    v.tmpl = engine::TemplateName(running);
    v.why = running == engine::TemplateKind::kNone ? (m.reason.empty() ? "run op by op" : m.reason) : "";
    v.mix = m.mix;
    v.choice = engine::ChoiceText(c, running);
    auto p = engine::PredictSegment(g, segs[i], c, *m_mask, m_device);
    if (p.IsOk()) {
      v.predicted_us = p->us;
      v.predicted_bytes = p->bytes;
    } else {
      v.predict_error = p.Message();
    }
    if (i < m_measured.size()) v.measured_us = m_measured[i];
    m_segments.push_back(std::move(v));
  }
}

void LayerWorkbench::RecomputeLadder() {
  m_ladder.clear();
  m_ladder_note.clear();
  ++m_ladder_tag;  // a measured ladder still on its way is for other inputs now
  if (!m_graph || !m_mask) return;
  if (!m_run) {
    m_ladder_note = "what runs is not known: " + m_run_error;
    return;
  }
  const engine::MhaConfig fused = engine::RunConfig(*m_run);
  auto r = engine::PredictLadder(AttentionWorkload(*m_graph), *m_mask, m_device, &fused);
  if (!r.IsOk()) {
    m_ladder_note = r.Message();
    return;
  }
  m_ladder = std::move(*r);
  m_ladder_note = "predicted by the analytical model for " + m_device.name + "; fully fused = what runs: " +
                  engine::MhaRunChoiceShort(*m_run);
}

void LayerWorkbench::MeasureLadder() {
  if (!m_graph || !m_mask) return;
  if (!m_worker.HasGpu()) {
    Message(true, "fusion ladder: no GPU here (" + m_worker.DeviceText() + "); the bars stay predicted");
    return;
  }
  const engine::Workload w = AttentionWorkload(*m_graph);
  auto mask = m_mask;
  const uint64_t tag = m_ladder_tag;
  m_worker.Submit("fusion ladder", [this, w, mask, tag](JobContext& ctx) -> GpuWorker::Done {
    auto r = profiler::MeasureLadder(*ctx.backend, *ctx.profiler, w, *mask,
                                     [&](const std::string& part, double f) {
                                       ctx.progress("fusion ladder: " + part, f);
                                       return !ctx.cancel->load();
                                     });
    return [this, r = std::move(r), tag]() {
      if (!r.IsOk()) return Message(true, "fusion ladder: " + r.Message());
      if (tag != m_ladder_tag) return;  // the layer or mask changed meanwhile
      m_ladder = *r;
      m_ladder_note = "measured on " + m_worker.DeviceText();
      Message(false, "fusion ladder measured");
    };
  });
}

void LayerWorkbench::ToggleBoundary(int after_op) {
  if (!m_graph || !m_scheme) return;
  auto s = engine::ToggleBoundary(*m_scheme, *m_graph, after_op);
  if (!s.IsOk()) {
    m_fusion_message = s.Message();
    return;
  }
  m_scheme = *s;
  m_choices.clear();
  m_measured.clear();
  SchemeChanged("edited");
}

void LayerWorkbench::ResetScheme() {
  if (!m_graph) return;
  m_scheme = engine::DefaultScheme(*m_graph);
  m_choices.clear();
  m_measured.clear();
  SchemeChanged("default");
}

bool LayerWorkbench::SetSchemeCode(const std::string& text) {
  if (!m_graph) return false;
  std::string code = text;
  if (code.find_first_not_of("01") != std::string::npos) {
    auto c = engine::HexToCode(text, "scheme");
    if (!c.IsOk()) {
      m_fusion_message = c.Message();
      return false;
    }
    code = *c;
  }
  auto s = engine::FusionScheme::FromCode(code, *m_graph, "scheme");
  if (!s.IsOk()) {
    m_fusion_message = s.Message();
    return false;
  }
  m_scheme = *s;
  m_choices.clear();
  m_measured.clear();
  SchemeChanged("typed");
  return true;
}

void LayerWorkbench::StartTune() {
  if (m_tuning) return;
  if (!m_graph || !m_mask) {
    Message(true, "tune: no layer (" + (m_graph_error.empty() ? std::string("no mask") : m_graph_error) + ")");
    return;
  }
  std::vector<engine::TuneMethod> methods;
  for (const TuneMethodRow& row : m_settings.methods)
    if (row.chosen) methods.push_back(row.method);
  if (methods.empty()) {
    Message(true, "tune: choose at least one method");
    return;
  }
  engine::TuneOptions o;
  if (auto b = engine::ParseTuneBudget(m_settings.budget, &o, "budget"); !b.IsOk()) {
    Message(true, "tune: " + b.Message());
    return;
  }
  o.seed = m_settings.seed;
  m_live->Reset();
  m_results.clear();
  m_tune_error.clear();
  m_tuning = true;
  const TuneJobRequest request{*m_graph, m_mask, m_spec, m_device, methods, o, m_settings.use_cache};
  auto live = m_live;
  m_worker.Submit("tune", [this, request, live](JobContext& ctx) -> GpuWorker::Done {
    TuneJobResult done = RunTuneJob(request, *live, ctx);
    return [this, done = std::move(done)]() mutable { TuneLanded(std::move(done)); };
  });
}

void LayerWorkbench::TuneLanded(TuneJobResult done) {
  m_tuning = false;
  m_results = std::move(done.results);
  m_tune_error = done.error;
  if (!done.error.empty()) Message(true, "tune: " + done.error);
  if (m_results.empty()) return;
  // The result shown: the fastest method (whole model when measured, else per layer).
  const auto key = [](const MethodResult& r) {
    return r.session.model_us ? *r.session.model_us : r.session.result.total_us;
  };
  const MethodResult& best = *std::min_element(
      m_results.begin(), m_results.end(),
      [&](const MethodResult& a, const MethodResult& b) { return key(a) < key(b); });
  const engine::TuneResult& r = best.session.result;
  m_plan = best.session.plan;
  m_plan_label = std::string("tuned here (") + engine::TuneMethodName(r.method) + ")";
  if (m_graph && r.scheme.Code().size() == m_graph->ops.size()) {
    m_scheme = r.scheme;
    m_choices = r.choices;
    m_measured.clear();
    for (const engine::SegmentResult& s : r.segments)
      m_measured.push_back(s.cost.measured ? std::optional<double>(s.cost.us) : std::nullopt);
    SchemeChanged(std::string("tuned: ") + engine::TuneMethodName(r.method));
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "tuned (%s): %.1f us per layer (%s), %s", engine::TuneMethodName(r.method),
                r.total_us, r.measured ? "measured" : "predicted", r.stopped_by.c_str());
  Message(false, buf);
}

const TunePlots& LayerWorkbench::PlotsNow() {
  if (m_live->Version() != m_plots.version) m_plots = BuildTunePlots(m_live->Snapshot());
  return m_plots;
}

void LayerWorkbench::CancelJobs() {
  m_worker.Cancel();
}

void LayerWorkbench::ExportPlan(const std::string& path) {
  if (!m_plan) return Message(true, "export plan: nothing tuned or opened yet");
  auto st = engine::SavePlan(path, *m_plan);
  if (!st.IsOk()) return Message(true, st.Message());
  Message(false, "plan written to " + path);
}

void LayerWorkbench::OpenPlan(const engine::Plan& plan, const engine::Mask& mask, const std::string& path) {
  auto g = engine::PlanGraph(plan, engine::DType::kF16, path);
  if (!g.IsOk()) return Message(true, g.Message());
  auto run = engine::PlanToRun(plan, *g, path);
  if (!run.IsOk()) return Message(true, run.Message());
  m_plan = plan;
  m_plan_label = std::filesystem::path(path).filename().string();
  // Show the plan's layer with the plan's mask (the editor keeps its own until Studio loads it).
  m_graph = std::move(*g);
  m_graph_error.clear();
  m_choice.model = plan.model ? plan.model->name : m_choice.model;
  m_choice.batch = plan.workload.batch;
  m_choice.config_path.clear();
  m_choice_edit = m_choice;
  if (!m_mask || m_mask->HashHex() != mask.HashHex()) m_mask = std::make_shared<const engine::Mask>(mask);
  m_spec = plan.mask.has_spec ? std::optional<engine::MaskSpec>(plan.mask.spec) : std::nullopt;
  m_scheme = run->scheme;
  m_choices = run->choices;
  m_measured.assign(run->scheme.Segments().size(), std::nullopt);
  for (const engine::PlanMeasurement& pm : plan.measurements) {
    const std::optional<int64_t> n = engine::PlanSegmentNumber(pm.what);
    if (pm.measured && n && static_cast<size_t>(*n) <= m_measured.size())
      m_measured[static_cast<size_t>(*n - 1)] = pm.latency_us;
  }
  SchemeChanged("plan " + m_plan_label);
  RecomputeLadder();
  auto prof = profiler::LayerProfileFromPlan(plan, path);
  if (prof.IsOk()) {
    m_profiles.runs.push_back({m_plan_label, path, std::make_shared<const profiler::LayerProfile>(std::move(*prof))});
    if (m_profiles.current < 0) m_profiles.current = static_cast<int>(m_profiles.runs.size()) - 1;
  }
  Message(false, "opened plan " + path);
}

void LayerWorkbench::RunPlan() {
  if (!m_plan) return Message(true, "run plan: nothing tuned or opened yet");
  if (!m_worker.HasGpu())
    return Message(true, "run plan: measuring needs a GPU (" + m_worker.DeviceText() + ")");
  const engine::Plan plan = *m_plan;
  const std::string label = m_plan_label;
  m_worker.Submit("run plan", [this, plan, label](JobContext& ctx) -> GpuWorker::Done {
    ctx.progress("run plan: building the model", -1);
    auto g = engine::PlanGraph(plan, engine::StorageTypeFor(*ctx.backend), label);
    engine::Expected<engine::RunReport> rep = g.ToStatus();
    if (g.IsOk()) {
      auto mask = engine::PlanMaskToMask(plan.mask, label);
      if (!mask.IsOk()) {
        rep = mask.ToStatus();
      } else {
        engine::MeasureOptions mo;
        mo.repeats = 20;
        mo.max_seconds = 5;
        mo.graph = true;
        ctx.progress("run plan: measuring", -1);
        rep = engine::MeasurePlan(*ctx.backend, plan, *g, *mask, mo, label);
      }
    }
    std::optional<double> tuned;
    for (const engine::PlanMeasurement& m : plan.measurements)
      if (m.what == "model" && m.measured) tuned = m.latency_us;
    return [this, rep = std::move(rep), tuned, label]() {
      if (!rep.IsOk()) return Message(true, "run plan: " + rep.Message());
      m_run_report = PlanRunReport{*rep, tuned, label};
      char buf[160];
      if (tuned)
        std::snprintf(buf, sizeof buf, "run plan: %.1f us for %d layers (%.3fx the tuned %.1f us)",
                      rep->total_us, rep->layers, rep->total_us / *tuned, *tuned);
      else
        std::snprintf(buf, sizeof buf, "run plan: %.1f us for %d layers", rep->total_us, rep->layers);
      Message(false, buf);
    };
  });
}

void LayerWorkbench::ProfileNow() {
  if (!m_graph || !m_scheme || !m_mask) return Message(true, "profile: no layer");
  if (!m_worker.HasGpu())
    return Message(true, "profile: needs a GPU (" + m_worker.DeviceText() +
                             "); open a profile made elsewhere instead");
  const engine::OpGraph graph = *m_graph;
  const engine::FusionScheme scheme = *m_scheme;
  const std::vector<engine::SegmentChoice> choices = EffectiveChoices();
  auto mask = m_mask;
  const engine::DeviceSpec device = m_device;
  std::string label = graph.model + " " + std::to_string(graph.batch) + "x" +
                      std::to_string(graph.seq_len) + " " + m_mask_label + " (" + m_scheme_source + ")";
  const std::string plan_label = m_plan ? m_plan_label : "";
  m_worker.Submit("profile", [=, this](JobContext& ctx) -> GpuWorker::Done {
    engine::OpGraph g = graph;
    g.dtype = engine::StorageTypeFor(*ctx.backend);
    engine::ModelRunOptions ro;
    ro.layers = 1;
    ro.choices = choices;
    ctx.progress("profile: building the layer", -1);
    auto model = engine::ModelRunner::Create(*ctx.backend, g, *mask, scheme, ro);
    engine::Expected<profiler::LayerProfile> prof = model.ToStatus();
    if (model.IsOk()) {
      profiler::LayerProfileOptions po;
      po.measure.runs = 50;
      po.measure.activity_runs = 5;
      po.progress = [&](const std::string& part, double f) {
        ctx.progress("profile: " + part, f);
        return !ctx.cancel->load();
      };
      prof = profiler::ProfileLayer((*model)->Layer(0), *ctx.profiler, ctx.backend->Device(), po);
      if (prof.IsOk()) {
        prof->label = label;
        prof->mask_label = label;
        prof->created_by = "stof-studio";
        prof->source_plan = plan_label;
      }
    }
    return [this, prof = std::move(prof), label]() mutable {
      if (!prof.IsOk()) return Message(true, "profile: " + prof.Message());
      m_profiles.runs.push_back({label, "measured here",
                                 std::make_shared<const profiler::LayerProfile>(std::move(*prof))});
      m_profiles.current = static_cast<int>(m_profiles.runs.size()) - 1;
      Message(false, "profiled " + label);
    };
  });
}

void LayerWorkbench::OpenProfile(const std::string& path) {
  auto p = profiler::LoadLayerProfile(path);
  std::string name = std::filesystem::path(path).filename().string();
  if (!p.IsOk()) {
    // A plan file is a baseline too: its measured segments become a profile without kernels.
    auto plan = engine::LoadPlan(path);
    if (!plan.IsOk()) return Message(true, p.Message());
    p = profiler::LayerProfileFromPlan(*plan, path);
    if (!p.IsOk()) return Message(true, p.Message());
  }
  m_profiles.runs.push_back({name, path, std::make_shared<const profiler::LayerProfile>(std::move(*p))});
  m_profiles.current = static_cast<int>(m_profiles.runs.size()) - 1;
  Message(false, "opened " + path);
}

nlohmann::json LayerWorkbench::StateJson() const {
  nlohmann::json j;
  // What is computed, and what the layer widgets show (they differed: issue 16).
  j["layer"] = {{"model", m_choice.config_path.empty() ? m_choice.model : m_choice.config_path},
                {"batch", m_choice.batch}, {"seq_len", SeqLen()}, {"error", m_graph_error},
                {"ops", m_graph ? static_cast<int64_t>(m_graph->ops.size()) : 0},
                {"hidden", m_graph ? m_graph->hidden : 0}};
  j["layer_widgets"] = {{"model", m_choice_edit.model}, {"config", m_choice_edit.config_path},
                        {"batch", m_choice_edit.batch}};
  nlohmann::json segs = nlohmann::json::array();
  double pred_total = 0;
  for (const SegmentView& s : m_segments) {
    pred_total += s.predicted_us;
    segs.push_back({{"ops", engine::SegmentLabel(s.segment)}, {"template", s.tmpl},
                    {"choice", s.choice}, {"predicted_us", s.predicted_us},
                    {"predicted_bytes", s.predicted_bytes},
                    {"measured_us", s.measured_us ? nlohmann::json(*s.measured_us) : nlohmann::json()},
                    {"error", s.predict_error}});
  }
  j["fusion"] = {{"code", m_scheme ? m_scheme->Code() : ""},
                 {"hex", m_scheme ? Hex(m_scheme->Code()) : ""},
                 {"source", m_scheme_source}, {"segments", segs},
                 {"predicted_layer_us", pred_total}, {"message", m_fusion_message}};
  nlohmann::json ladder = nlohmann::json::array();
  for (const engine::LadderRung& r : m_ladder)
    ladder.push_back({{"name", r.name}, {"us", r.us}, {"dram_bytes", r.dram_bytes},
                      {"kernels", r.kernels}, {"measured", r.measured}});
  j["ladder"] = {{"rungs", ladder}, {"note", m_ladder_note}};
  nlohmann::json tradeoffs = nlohmann::json::array();
  for (const engine::FusionTradeoff& t : m_tradeoffs)
    tradeoffs.push_back({{"what", t.what}, {"template", t.tmpl}, {"ops", engine::SegmentLabel(t.fused)},
                         {"fused_us", t.fused_us}, {"apart_us", t.apart_us}, {"pays", t.Pays()}});
  nlohmann::json by_device = nlohmann::json::array();
  for (const engine::TradeoffOnDevice& t : m_norm_by_device)
    by_device.push_back({{"device", t.device}, {"fused_us", t.tradeoff.fused_us},
                         {"apart_us", t.tradeoff.apart_us}, {"pays", t.tradeoff.Pays()}});
  j["tradeoffs"] = {{"layer", tradeoffs}, {"gemm_norm_by_device", by_device}};
  // What runs for the layer's attention: the fusion view's and the ladder's fused choice.
  j["run_choice"] = m_run ? engine::MhaRunChoiceJson(*m_run) : nlohmann::json{{"why_not", m_run_error}};
  const TuneLive live = LiveSnapshot();
  nlohmann::json traces = nlohmann::json::array();
  for (const TuneLive::Trace& t : live.traces)
    traces.push_back({{"method", t.method}, {"points", t.best_us.size()},
                      {"best_us", t.best_us.empty() ? nlohmann::json() : nlohmann::json(t.best_us.back())}});
  int64_t measured_points = 0;
  for (const TuneLive::Point& p : live.points) measured_points += p.measured ? 1 : 0;
  nlohmann::json results = nlohmann::json::array();
  for (const MethodResult& m : m_results) {
    const engine::TuneSessionResult& s = m.session;
    results.push_back({{"method", engine::TuneMethodName(s.result.method)},
                       {"layer_us", s.result.total_us}, {"measured", s.result.measured},
                       {"code", s.result.scheme.Code()}, {"candidates", s.result.stats.candidates},
                       {"stopped_by", s.result.stopped_by}, {"device", s.device_text},
                       {"model_us", s.model_us ? nlohmann::json(*s.model_us) : nlohmann::json()},
                       {"default_model_us", s.default_model_us ? nlohmann::json(*s.default_model_us) : nlohmann::json()},
                       {"default_layer_us", s.default_layer_us ? nlohmann::json(*s.default_layer_us) : nlohmann::json()},
                       {"speedup", TuneSpeedup(s) ? nlohmann::json(*TuneSpeedup(s)) : nlohmann::json()},
                       {"tuning_s", s.result.stats.total_s}});
  }
  const char* progress = m_tuning ? "running"
                         : live.progress.candidates > 0 || !m_results.empty() ? "finished"
                                                                             : "not started";
  j["tune"] = {{"running", m_tuning}, {"progress", progress}, {"stage", live.progress.stage},
               {"candidates", live.progress.candidates}, {"traces", traces},
               {"points", live.points.size()}, {"measured_points", measured_points},
               {"rewards", live.rewards.size()}, {"results", results}, {"error", m_tune_error},
               {"candidate_plot", TunePlotsJson(BuildTunePlots(live))}};
  j["plan"] = {{"label", m_plan_label}, {"code", m_plan ? m_plan->fusion.code : ""}};
  if (m_run_report) {
    j["run_plan"] = {{"total_us", m_run_report->report.total_us},
                     {"layers", m_run_report->report.layers},
                     {"tuned_us", m_run_report->tuned_us ? nlohmann::json(*m_run_report->tuned_us) : nlohmann::json()}};
  }
  j["profiles"] = ProfilePanelStateJson(m_profiles);
  j["gpu"] = {{"ready", m_worker.Ready()}, {"has_gpu", m_worker.HasGpu()},
              {"device", m_worker.DeviceText()}, {"busy", m_worker.Busy()}};
  return j;
}

}  // namespace stof::app
