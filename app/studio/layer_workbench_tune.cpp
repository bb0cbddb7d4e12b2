// LayerWorkbench (layer_workbench.h), the tune view's part: a tuning run started on the GPU
// worker from the view's settings, its results landing on the GUI thread (the fastest method's
// scheme shown, its plan kept), and the live plots rebuilt when the feed moves.
#include "app/studio/layer_workbench.h"

#include <algorithm>
#include <cstdio>

namespace stof::app {

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

void LayerWorkbench::CancelJobs() {
  m_worker.Cancel();
}

const TunePlots& LayerWorkbench::PlotsNow() {
  if (m_live->Version() != m_plots.version) m_plots = BuildTunePlots(m_live->Snapshot());
  return m_plots;
}

}  // namespace stof::app
