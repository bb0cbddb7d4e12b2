// DrawTunePanel (tune_panel.h).
#include "app/studio/panels/tune_panel.h"

#include <imgui.h>

#include <cstdio>
#include <optional>

#include "app/studio/layer_workbench.h"
#include "app/studio/panels/fusion_panel.h"
#include "app/studio/widgets/error_text.h"
#include "app/studio/widgets/input_text.h"
#include "app/studio/widgets/plots.h"

namespace stof::app {

namespace {

// Not started: an empty grey bar; running: the fraction done; finished: a full bar.
void DrawProgress(const LayerWorkbench& bench, const TuneLive& live) {
  const engine::TuneProgress& p = live.progress;
  const bool started = bench.Tuning() || p.candidates > 0 || !bench.Results().empty();
  if (!started) {
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram, ImGui::GetStyleColorVec4(ImGuiCol_FrameBg));
    ImGui::ProgressBar(0.0f, ImVec2(-1, 0), "not started: press Start");
    ImGui::PopStyleColor();
    return;
  }
  std::string overlay = TuneProgressText(p);
  float fraction = 1.0f;
  if (bench.Tuning())
    fraction = p.fraction >= 0 ? static_cast<float>(p.fraction)
                               : static_cast<float>(ImGui::GetTime() * 0.5 - static_cast<int>(ImGui::GetTime() * 0.5));
  if (!bench.Tuning()) {  // no time left to estimate any more
    engine::TuneProgress done = p;
    done.remaining_s = -1;
    overlay = "finished: " + TuneProgressText(done);
  }
  ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay.c_str());
}

void DrawResults(LayerWorkbench& bench) {
  const auto& results = bench.Results();
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

}  // namespace

bool DrawTunePanel(LayerWorkbench& bench, std::string& plan_path) {
  bool show_fusion = false;
  DrawLayerChooser(bench);
  TuneSettings& s = bench.Settings();
  ImGui::BeginDisabled(bench.Tuning());
  ImGui::TextUnformatted("methods");
  for (TuneMethodRow& row : s.methods) {
    ImGui::SameLine();
    ImGui::Checkbox(engine::TuneMethodName(row.method), &row.chosen);
  }
  ImGui::SetNextItemWidth(90);
  InputTextString("budget", &s.budget);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("seconds (60s, 2m) or candidates (200c), per method");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  int seed = static_cast<int>(s.seed);
  if (ImGui::InputInt("seed", &seed, 0)) s.seed = static_cast<uint64_t>(std::max(0, seed));
  ImGui::SameLine();
  ImGui::Checkbox("use the tune cache", &s.use_cache);
  ImGui::EndDisabled();
  ImGui::BeginDisabled(bench.Tuning() || bench.Graph() == nullptr || !bench.Worker().Ready());
  if (ImGui::Button("Start")) bench.StartTune();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!bench.Worker().Busy());
  if (ImGui::Button("Cancel")) bench.CancelJobs();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::TextDisabled("device: %s", bench.Worker().Ready() ? bench.Worker().DeviceText().c_str() : "(starting)");

  TunePlots& p = bench.Plots();
  if (bench.LiveVersion() != p.version) p = BuildTunePlots(bench.LiveSnapshot());
  DrawProgress(bench, p.live);
  if (!bench.TuneError().empty()) ErrorTextWrapped(bench.TuneError());

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

  DrawResults(bench);
  if (bench.TunedPlan()) {
    ImGui::Text("plan: %s, scheme %s", bench.PlanLabel().c_str(), bench.TunedPlan()->fusion.code.c_str());
    if (ImGui::Button("Show in the fusion view")) show_fusion = true;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(220);
    InputTextString("##plan_path", &plan_path);
    ImGui::SameLine();
    if (ImGui::Button("Export plan JSON")) bench.ExportPlan(plan_path);
    ImGui::SameLine();
    ImGui::BeginDisabled(!bench.HasGpu() || bench.Worker().Busy());
    if (ImGui::Button("Run plan")) bench.RunPlan();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(bench.HasGpu() ? "Measure the plan's whole model again" : "Needs a GPU");
    if (const auto& rr = bench.RunReport()) {
      if (rr->tuned_us)
        ImGui::Text("run plan (%s): %.1f us for %d layers = %.3fx the tuned %.1f us", rr->plan_label.c_str(),
                    rr->report.total_us, rr->report.layers, rr->report.total_us / *rr->tuned_us, *rr->tuned_us);
      else
        ImGui::Text("run plan (%s): %.1f us for %d layers", rr->plan_label.c_str(), rr->report.total_us,
                    rr->report.layers);
    }
  }
  return show_fusion;
}

}  // namespace stof::app
