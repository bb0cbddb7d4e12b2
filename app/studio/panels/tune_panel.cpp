// DrawTunePanel (tune_panel.h): the layer row, the settings (edited on a copy of the view's),
// Start and Cancel, the progress, the plots, the results and the plan's row, top to bottom.
#include "app/studio/panels/tune_panel.h"

#include <imgui.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "app/studio/widgets/error_text.h"
#include "app/studio/widgets/input_text.h"
#include "app/studio/widgets/plots.h"

namespace stof::app {

namespace {

// Not started: an empty grey bar; running: the fraction done; finished: a full bar.
void DrawProgress(const TuneView& view, const TuneLive& live) {
  const engine::TuneProgress& p = live.progress;
  const bool started = view.tuning || p.candidates > 0 || !view.results.empty();
  if (!started) {
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram, ImGui::GetStyleColorVec4(ImGuiCol_FrameBg));
    ImGui::ProgressBar(0.0f, ImVec2(-1, 0), "not started: press Start");
    ImGui::PopStyleColor();
    return;
  }
  std::string overlay = TuneProgressText(p);
  float fraction = 1.0f;
  if (view.tuning)
    fraction = p.fraction >= 0 ? static_cast<float>(p.fraction)
                               : static_cast<float>(ImGui::GetTime() * 0.5 - static_cast<int>(ImGui::GetTime() * 0.5));
  if (!view.tuning) {  // no time left to estimate any more
    engine::TuneProgress done = p;
    done.remaining_s = -1;
    overlay = "finished: " + TuneProgressText(done);
  }
  ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay.c_str());
}

void DrawResults(std::span<const MethodResult> results) {
  if (results.empty()) return;
  if (!ImGui::BeginTable("results", 8, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  for (const char* h : {"method", "layer us", "", "model us", "default model us",
                        "speed-up vs default", "candidates", "tuning s"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const MethodResult& m : results) {
    const engine::TuneSessionResult& s = m.session;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(engine::TuneMethodName(s.result.method));
    ImGui::TableNextColumn();
    ImGui::Text("%.1f", s.result.total_us);
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", s.result.measured ? "measured" : "predicted");
    ImGui::TableNextColumn();
    if (s.model_us) ImGui::Text("%.1f", *s.model_us);
    else ImGui::TextDisabled("-");
    ImGui::TableNextColumn();
    if (s.default_model_us) ImGui::Text("%.1f", *s.default_model_us);
    else ImGui::TextDisabled("-");
    ImGui::TableNextColumn();
    if (const std::optional<double> x = TuneSpeedup(s)) ImGui::Text("%.2fx", *x);
    else ImGui::TextDisabled("-");
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(s.result.stats.candidates));
    ImGui::TableNextColumn();
    ImGui::Text("%.2f", s.result.stats.total_s);
  }
  ImGui::EndTable();
  const engine::TuneSessionResult& first = results.front().session;
  if (first.default_layer_us)
    ImGui::TextDisabled("untuned default layer (default scheme, default choices): %.1f us, %s", *first.default_layer_us,
                        first.result.measured ? "measured" : "predicted");
  ImGui::TextWrapped("layer us: the tuner's sum of its segments; model us: every layer, timed after "
                     "tuning (GPU only); speed-up vs default: the untuned default layer over the method's "
                     "layer, the same baseline for every method.");
}

// Methods, budget, seed and the cache, edited in `s`; true when one changed.
bool DrawSettings(TuneSettings& s) {
  bool changed = false;
  ImGui::TextUnformatted("methods");
  for (TuneMethodRow& row : s.methods) {
    ImGui::SameLine();
    changed |= ImGui::Checkbox(engine::TuneMethodName(row.method), &row.chosen);
  }
  ImGui::SetNextItemWidth(90);
  changed |= InputTextString("budget", &s.budget);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("seconds (60s, 2m) or candidates (200c), per method");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  int seed = static_cast<int>(s.seed);
  if (ImGui::InputInt("seed", &seed, 0)) {
    s.seed = static_cast<uint64_t>(std::max(0, seed));
    changed = true;
  }
  ImGui::SameLine();
  changed |= ImGui::Checkbox("use the tune cache", &s.use_cache);
  return changed;
}

// The best latency over time, every candidate, and STOF's stage-2 rewards.
void DrawPlots(const TunePlots& p) {
  const float w = ImGui::GetContentRegionAvail().x * 0.5f - 4.0f;
  ImGui::BeginChild("best", ImVec2(w, 250), false);
  ImGui::TextUnformatted("Best layer latency so far");
  plots::LinePlot("best_plot", p.best, plots::Axis{"tuning time (s)"}, plots::Axis{"layer latency (us)"}, 220);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("scatter", ImVec2(0, 250), false);
  ImGui::TextUnformatted(p.candidates_title.c_str());
  plots::ScatterPlot("scatter_plot", p.candidates, p.candidates_x, p.candidates_y, 220, p.measured);
  ImGui::EndChild();
  ImGui::TextUnformatted("Stage 2 (STOF): time each segment's samples saved, per iteration");
  if (p.rewards.empty())
    ImGui::TextDisabled("  (no stage-2 rewards yet: STOF reports them after each sampling iteration)");
  else
    plots::LinePlot("reward_plot", p.rewards, plots::Axis{"stage-2 iteration"},
                    plots::Axis{"reward: us saved"}, 170);
}

// The plan tuned or opened: show it, export it, run it, and the last run's figures.
void DrawPlanRow(const TuneView& view, const engine::Plan& plan, std::string& plan_path, TuneActions* a) {
  ImGui::Text("plan: %s, scheme %s", view.plan_label.c_str(), plan.fusion.code.c_str());
  if (ImGui::Button("Show in the fusion view")) a->show_fusion = true;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(220);
  InputTextString("##plan_path", &plan_path);
  ImGui::SameLine();
  if (ImGui::Button("Export plan JSON")) a->export_plan = plan_path;
  ImGui::SameLine();
  ImGui::BeginDisabled(!view.has_gpu || view.worker_busy);
  if (ImGui::Button("Run plan")) a->run_plan = true;
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(view.has_gpu ? "Measure the plan's whole model again" : "Needs a GPU");
  if (const PlanRunReport* rr = view.run_report) {
    if (rr->tuned_us)
      ImGui::Text("run plan (%s): %.1f us for %d layers = %.3fx the tuned %.1f us", rr->plan_label.c_str(),
                  rr->report.total_us, rr->report.layers, rr->report.total_us / *rr->tuned_us, *rr->tuned_us);
    else
      ImGui::Text("run plan (%s): %.1f us for %d layers", rr->plan_label.c_str(), rr->report.total_us,
                  rr->report.layers);
  }
}

}  // namespace

TuneActions DrawTunePanel(const TuneView& view, std::string& plan_path) {
  TuneActions a;
  a.layer = DrawLayerChooser(view.layer);
  TuneSettings settings = view.settings;
  ImGui::BeginDisabled(view.tuning);
  if (DrawSettings(settings)) a.settings = std::move(settings);
  ImGui::EndDisabled();
  ImGui::BeginDisabled(!view.can_start);
  a.start = ImGui::Button("Start");
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!view.worker_busy);
  a.cancel = ImGui::Button("Cancel");
  ImGui::EndDisabled();
  ImGui::SameLine();
  // Wrapped: without a GPU the reason is a long sentence (clipped at 1600 x 900 otherwise).
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("device: %s", view.device_text.c_str());
  ImGui::PopStyleColor();

  const TunePlots& p = *view.plots;
  DrawProgress(view, p.live);
  if (!view.error.empty()) ErrorTextWrapped(view.error);
  DrawPlots(p);
  DrawResults(view.results);
  if (view.plan) DrawPlanRow(view, *view.plan, plan_path, &a);
  return a;
}

}  // namespace stof::app
