// LayerWorkbench (layer_workbench.h), plans and profiles: a plan exported, opened (its layer,
// mask and scheme shown, its measurements a profile run) or run again on the GPU worker, and a
// layer profiled here or opened from a file (the Tune and Profile views, the batch driver).
#include "app/studio/layer_workbench.h"

#include <cstdio>
#include <filesystem>

#include "engine/plan/plan_choices.h"
#include "profiler/layer_profile.h"

namespace stof::app {

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

}  // namespace stof::app
