// `stof run --versus`: the same model under a second scheme, measured in the same process
// after the first, and the table that compares the two segment by segment where the second's
// segments nest in the first's. Called by Run (cmd_run.cpp).
#include <memory>
#include <string>
#include <vector>

#include "app/cli/cmd_run_internal.h"
#include "engine/fusion/scheme_hex.h"

namespace stof::app::run_detail {

namespace {

// Per segment of `main`, the summed time of the `versus` segments inside it (when they nest).
nlohmann::json VersusTable(const engine::RunReport& main_r, const engine::FusionScheme& main_s,
                           const engine::RunReport& vs_r, const engine::FusionScheme& vs_s) {
  nlohmann::json rows = nlohmann::json::array();
  const auto& ms = main_s.Segments();
  const auto& vs = vs_s.Segments();
  for (size_t i = 0; i < ms.size(); ++i) {
    double sum = 0;
    bool nested = true;
    std::string parts;
    for (size_t j = 0; j < vs.size(); ++j) {
      const bool inside = ms[i].Contains(vs[j].first) && ms[i].Contains(vs[j].last);
      const bool overlaps = !(vs[j].last < ms[i].first || vs[j].first > ms[i].last);
      if (overlaps && !inside) nested = false;
      if (inside) {
        sum += vs_r.segments[j].us;
        parts += (parts.empty() ? "" : " + ") + vs_r.segments[j].ops;
      }
    }
    nlohmann::json row = {{"ops", main_r.segments[i].ops},
                          {"template", main_r.segments[i].tmpl},
                          {"us", main_r.segments[i].us}};
    if (nested) {
      row["versus_ops"] = parts;
      row["versus_us"] = sum;
      row["speedup"] = main_r.segments[i].us > 0 ? sum / main_r.segments[i].us : 0.0;
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace


// The same model under the --versus scheme, measured in this process right after: its JSON.
// `o` carries the first run's options; `model` is released first (its buffers).
engine::Expected<nlohmann::json> MeasureVersus(
    const RunArgs& a, engine::Backend& backend, const engine::OpGraph& run_graph,
    const engine::Mask& mask, const engine::FusionScheme& scheme,
    const std::vector<engine::SegmentChoice>& choices, engine::ModelRunOptions o,
    const engine::MeasureOptions& mo, const engine::RunReport& report,
    std::unique_ptr<engine::ModelRunner>& model, RunProgress& progress) {
  auto vs_scheme = SchemeFromText(a.versus, run_graph);
  if (!vs_scheme.IsOk()) return engine::Error{"--versus: " + vs_scheme.Message()};
  std::vector<engine::SegmentChoice> vc(vs_scheme->Segments().size());
  // Its attention runs as this scheme's does (variant, kernel); other parameters are the
  // backend's defaults (the plan's belong to the plan's segments).
  for (auto& c : vc) c = MhaChoice(run_graph, scheme, choices);
  for (auto& c : vc) c.params.clear(), c.force_op_by_op = false;
  o.choices = vc;
  model.reset();  // free the first model's buffers before the second is allocated
  auto vs_model = engine::ModelRunner::Create(backend, run_graph, mask, *vs_scheme, o);
  // Failed work from here on, not a usage error (cli_common.h): "versus", not "--versus".
  if (!vs_model.IsOk()) return engine::Error{"versus scheme: " + vs_model.Message()};
  auto vs_report = engine::MeasureModel(backend, **vs_model, mo, progress.OnMeasure("versus: "));
  if (!vs_report.IsOk()) return engine::Error{"versus scheme: " + vs_report.Message()};
  return nlohmann::json{
      {"scheme", {{"code", vs_scheme->Code()}, {"hex", *engine::CodeToHex(vs_scheme->Code())}}},
      {"layer_us", vs_report->layer_us},
      {"total_us", vs_report->total_us},
      {"speedup", report.total_us > 0 ? vs_report->total_us / report.total_us : 0.0},
      {"segments", VersusTable(report, scheme, *vs_report, *vs_scheme)}};
}

}  // namespace stof::app::run_detail
