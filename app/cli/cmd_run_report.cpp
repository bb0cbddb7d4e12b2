// `stof run`'s report: the run's header (model, shape, mask, device, scheme, what attention
// runs), the measured figures with the plan's own measurement, and the human text of both.
// Called by Run (cmd_run.cpp); MhaChoice also by cmd_run_versus.cpp.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "app/cli/cmd_run_internal.h"
#include "engine/analysis/mha_run.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/fusion/template_match.h"

namespace stof::app::run_detail {

namespace {

// The fused attention's configuration this run uses, as every view shows what runs
// (engine/analysis/mha_run.h): the kernels' choice (--device local), the plan's mha.runs (or
// mha), or, on the CPU reference, none (it computes every element; tiles do not apply).
nlohmann::json MhaRunsJson(const RunArgs& a, const engine::OpGraph& graph,
                           const engine::FusionScheme& scheme,
                           const std::vector<engine::SegmentChoice>& choices, bool from_plan) {
  if (a.device == "cpu") return {{"kernel", "cpu reference"}, {"decided_by", "the CPU reference has no tiles"}};
  const engine::SegmentChoice c = MhaChoice(graph, scheme, choices);
  return engine::MhaRunChoiceJson(
      engine::RunChoiceOf(c.mha_config, from_plan ? "plan" : a.mha_kernel == "auto" ? "kernels" : "user"));
}

// "85.3 us", "862.9 ms", "1.66 s": a time with the unit that keeps it short (the CPU
// reference's layers take seconds, the GPU's microseconds).
std::string Duration(double us) {
  char buf[32];
  if (us < 10'000) std::snprintf(buf, sizeof buf, "%.1f us", us);
  else if (us < 10'000'000) std::snprintf(buf, sizeof buf, "%.1f ms", us * 1e-3);
  else std::snprintf(buf, sizeof buf, "%.2f s", us * 1e-6);
  return buf;
}

}  // namespace

// The choice of the first sparse_mha segment (what --versus and the "mha_variant" field
// carry over), or the default when the layer has none.
engine::SegmentChoice MhaChoice(const engine::OpGraph& g, const engine::FusionScheme& scheme,
                                const std::vector<engine::SegmentChoice>& choices) {
  const auto& segs = scheme.Segments();
  for (size_t i = 0; i < segs.size() && i < choices.size(); ++i)
    if (engine::MatchTemplate(g, segs[i]).kind == engine::TemplateKind::kSparseMha)
      return choices[i];
  return choices.empty() ? engine::SegmentChoice{} : choices[0];
}

// The run's description before any measurement: model, shape, mask, device, scheme, plan.
nlohmann::json RunHeaderJson(const RunArgs& a, const engine::OpGraph& graph,
                             const MaskSource& mask, const engine::Backend& backend, int layers,
                             const engine::FusionScheme& scheme,
                             const std::vector<engine::SegmentChoice>& choices,
                             const std::optional<engine::Plan>& plan,
                             const nlohmann::json& warnings) {
  nlohmann::json out = {{"model", graph.model},
                        {"family", engine::ModelFamilyName(graph.family)},
                        {"part", engine::LayerPartName(graph.part)},
                        {"batch", graph.batch},
                        {"seq_len", graph.seq_len},
                        {"mask", {{"label", mask.label},
                                  {"hash", mask.mask.HashHex()},
                                  {"density", mask.mask.Density()}}},
                        {"layers", layers},
                        {"device", backend.Name()},
                        {"mha_variant", engine::MhaVariantName(MhaChoice(graph, scheme, choices).mha_variant)},
                        {"mha_runs", MhaRunsJson(a, graph, scheme, choices, plan.has_value())},
                        {"scheme", {{"code", scheme.Code()}, {"hex", *engine::CodeToHex(scheme.Code())}}}};
  if (plan) {
    out["plan"] = {{"file", a.plan},
                   {"device", plan->device.name},
                   {"method", plan->tuning.method}};
    out["warnings"] = warnings;
  }
  return out;
}

// The measured model's figures, and the plan's own measurement of it when this run is the
// same model.
void AddReport(nlohmann::json& out, const engine::RunReport& report, int repeats, int layers,
               const std::optional<engine::Plan>& plan) {
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : report.segments)
    segs.push_back({{"ops", s.ops}, {"template", s.tmpl}, {"how", s.how}, {"us", s.us}});
  out["segments"] = segs;
  out["segments_sum_us"] = report.segments_sum_us;
  out["layer_us"] = report.layer_us;
  out["total_us"] = report.total_us;
  out["timing"] = report.method + ", median of up to " + std::to_string(repeats);
  out["device_bytes"] = report.device_bytes;
  if (!plan || !plan->model || layers != plan->model->layers) return;
  for (const engine::PlanMeasurement& m : plan->measurements) {
    if (m.what != "model" || !m.measured || !(m.latency_us > 0)) continue;
    const double ratio = report.total_us / m.latency_us;
    out["tuned"] = {{"us", m.latency_us},
                    {"ratio", ratio},
                    {"within_5pct", std::abs(ratio - 1.0) <= 0.05}};
    break;
  }
}

// The human report of a finished run (`out` as --json would print it).
void PrintRunText(const RunArgs& a, const nlohmann::json& out, const engine::OpGraph& graph,
                  const MaskSource& mask, const engine::Backend& backend, int layers,
                  const std::optional<engine::Plan>& plan, const engine::FusionScheme& scheme,
                  const engine::RunReport& report) {
  std::printf("model     %s (%s %s), batch %lld, L %lld, %d layers\n", graph.model.c_str(),
              engine::ModelFamilyName(graph.family), engine::LayerPartName(graph.part),
              static_cast<long long>(graph.batch), static_cast<long long>(graph.seq_len),
              layers);
  std::printf("mask      %s\n", mask.label.c_str());
  std::printf("device    %s\n", backend.Name().c_str());
  if (plan)
    std::printf("plan      %s (%s, made on %s)\n", a.plan.c_str(), plan->tuning.method.c_str(),
                plan->device.name.c_str());
  std::printf("scheme    %s (%s)\n", scheme.Code().c_str(),
              out["scheme"]["hex"].get<std::string>().c_str());
  if (const nlohmann::json& r = out["mha_runs"]; r.contains("block_m") && r["kernel"] == "block_wise")
    std::printf("attention %s %lldx%lld, %lld warps (%s kernel; %s)\n", r["kernel"].get<std::string>().c_str(),
                r["block_m"].get<long long>(), r["block_n"].get<long long>(), r["num_warps"].get<long long>(),
                r["family"].get<std::string>().c_str(), r["decided_by"].get<std::string>().c_str());
  else
    std::printf("attention %s (%s)\n", r["kernel"].get<std::string>().c_str(),
                r["decided_by"].get<std::string>().c_str());
  if (out.contains("check"))
    std::printf("check     one layer at batch 1, L %lld vs the CPU reference: max row error %.2e "
                "(tolerance %.2g): passed\n",
                static_cast<long long>(out["check"]["seq_len"].get<int64_t>()),
                out["check"]["max_row_error"].get<double>(), a.tolerance);
  std::printf("\n  ops      template                  time  how\n");
  for (const auto& s : report.segments)
    std::printf("  %-8s %-20s %10s  %s\n", s.ops.c_str(), s.tmpl.empty() ? "-" : s.tmpl.c_str(),
                Duration(s.us).c_str(), s.how.c_str());
  std::printf("  %-8s %-20s %10s\n", "sum", "", Duration(report.segments_sum_us).c_str());
  std::printf("\nlayer     %s (one layer as a whole)\n", Duration(report.layer_us).c_str());
  if (a.device == "cpu")
    std::printf("          the CPU reference on the host clock: few timed runs, spread of tens of %%; "
                "a layer timed alone may take longer than its share of the whole model\n");
  std::printf("total     %s (%d layers; %s)\n", Duration(report.total_us).c_str(), layers,
              report.method.c_str());
  if (out.contains("tuned")) {
    const double tuned_us = out["tuned"]["us"].get<double>();
    std::printf("plan: tuned at %.1f us, now %.1f us (%+.1f %%)\n", tuned_us, report.total_us,
                100.0 * (out["tuned"]["ratio"].get<double>() - 1.0));
  }
  if (!out.contains("versus")) return;
  const auto& v = out["versus"];
  std::printf("\nversus    %s: layer %.1f us, total %.1f us -> this scheme is %.2fx faster\n",
              v["scheme"]["code"].get<std::string>().c_str(), v["layer_us"].get<double>(),
              v["total_us"].get<double>(), v["speedup"].get<double>());
  std::printf("  ops      template             us    versus ops           us    speedup\n");
  for (const auto& r : v["segments"]) {
    if (!r.contains("versus_us")) continue;
    std::printf("  %-8s %-16s %9.1f    %-16s %9.1f  %6.2fx\n",
                r["ops"].get<std::string>().c_str(),
                r["template"].get<std::string>().empty() ? "-" : r["template"].get<std::string>().c_str(),
                r["us"].get<double>(), r["versus_ops"].get<std::string>().c_str(),
                r["versus_us"].get<double>(), r["speedup"].get<double>());
  }
}

}  // namespace stof::app::run_detail
