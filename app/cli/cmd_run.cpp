// `stof run`: a whole model (N layers of its op graph) on our engine with deterministic random
// fp16 weights, under a fusion scheme (the default greedy one, op by op, a code, or a plan's),
// reporting the time of each segment of layer 0, of one layer and of all layers (CUDA events,
// over a CUDA graph by default), after checking one small layer (batch 1, L <= 128, same
// scheme) against the CPU reference. `--device cpu` runs everything on the reference (slow;
// for small shapes and machines without a GPU) and shows its progress on stderr as `stof tune`
// does (progress_line.h; --quiet or --json: none). JSON output feeds
// tests/compare/model_compare.py.
// `--plan` replays a plan through engine/plan/plan_choices.h: model, batch, L and mask default
// to the plan's; a run that differs from them is refused (CheckPlanFor), another device warns.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/device_choice.h"
#include "app/cli/graph_args.h"
#include "app/cli/progress_line.h"
#include "app/cli/run_common.h"
#include "app/common/option_checks.h"
#include "engine/analysis/mha_run.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/fusion/default_scheme.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/fusion/template_match.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan.h"
#include "engine/plan/plan_choices.h"
#include "engine/run/model_runner.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/attention/prepared_mha.h"
#include "kernels/cuda_backend.h"
#endif

namespace stof::app {

namespace {

struct RunArgs {
  GraphArgs graph;
  MaskSourceOptions mask;
  std::string layers = "full";
  std::string plan;
  std::string mha = "fused";
  std::string mha_kernel = "auto";
  int64_t sub_len = 64;
  std::string device = "local";
  bool check = true;
  double tolerance = 0.05;
  int repeats = 20;
  bool no_graph = false;
  uint64_t weight_seed = 1;
  std::string versus;  // a second scheme measured in the same process
  // Given on the command line (with --plan, what is not given comes from the plan).
  bool batch_given = false, seq_given = false, layers_given = false;
  bool mha_kernel_given = false, sub_len_given = false;
  bool quiet = false;  // --quiet (or --json): no progress on stderr
};

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

// Options only some runs read: refused where they would be ignored.
engine::Status CheckRunOptions(const RunArgs& a) {
  if (a.mha_kernel_given && a.mha_kernel != "auto") {
    if (a.device != "local")
      return engine::MakeError("--mha-kernel " + a.mha_kernel + ": picks the GPU's attention "
                               "kernel (--device local); --device " + a.device +
                               " runs the fp32 reference");
    if (a.mha != "fused")
      return engine::MakeError("--mha-kernel " + a.mha_kernel + ": applies to --mha fused, not "
                               "--mha " + a.mha);
  }
  if (a.sub_len_given && a.mha != "sd" && a.mha != "sdf")
    return engine::MakeError("--sub-len: applies to --mha sd and sdf, not --mha " + a.mha);
  return engine::Status::Ok();
}

// The run's progress on stderr (tune's display): on the CPU reference a large layer takes
// minutes, a whole model hours, and the run would otherwise be silent.
struct RunProgress {
  explicit RunProgress(bool quiet) : line(quiet), t0(std::chrono::steady_clock::now()) {}
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void Stage(const std::string& stage) { line.Stage(Elapsed(), "run", stage); }
  // MeasureModel's reports on that display; `what` names the scheme measured.
  engine::MeasureProgressFn OnMeasure(const std::string& what) {
    return [this, what](const engine::MeasureProgress& p, bool new_stage) {
      if (new_stage) Stage(what + p.stage);
      if (!new_stage && !line.Due()) return;
      std::string detail = p.stage + ": " + std::to_string(p.runs) + (p.runs == 1 ? " run" : " runs") + " done";
      if (p.layers_done > 0 && p.layers_done < p.layers)
        detail += ", " + std::to_string(p.layers_done) + "/" + std::to_string(p.layers) +
                  " layers of the next";
      line.Status(p.fraction, detail, Elapsed(), p.remaining_s);
    };
  }
  ProgressLine line;
  std::chrono::steady_clock::time_point t0;
};

#ifdef STOF_WITH_KERNELS
// The fused MHA's default parameters: the kernels' own choice (Eq. 1, Eq. 2 in the preferred
// set), set on every segment choice.
engine::Status ChooseRunMhaConfig(const std::string& mha_kernel, const engine::Mask& mask,
                                  const engine::OpGraph& run_graph, const engine::Backend& backend,
                                  std::vector<engine::SegmentChoice>& choices) {
  auto req = kernels::ParseMhaKernelRequest(mha_kernel);
  if (!req.IsOk()) return engine::MakeError("--mha-kernel: " + req.Message());
  kernels::MhaRequest r;
  r.kernel = *req == kernels::MhaKernelRequest::kNative ? kernels::MhaKernelRequest::kAuto : *req;
  auto ch = kernels::ChooseMhaConfig(mask, run_graph.AttentionWorkload(), backend.Device(), r);
  if (!ch.IsOk()) return ch.ToStatus();
  engine::MhaConfig cfg = ch->config;
  // Row-wise ignores the block fields (ChooseMhaConfig zeroes them); the call's validation
  // still wants legal ones.
  if (cfg.kernel == engine::MhaKernel::kRowWise) cfg = {engine::MhaKernel::kRowWise, 64, 64, 4};
  for (auto& c : choices) c.mha_config = cfg;
  return engine::Status::Ok();
}
#endif

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

// One small layer (batch 1, L <= 128, the same scheme) against the CPU reference: its JSON,
// or an error when it could not run or differs.
engine::Expected<nlohmann::json> CheckSmallLayer(const RunArgs& a, const LayerSource& src,
                                                 engine::Backend& backend,
                                                 engine::DType dtype,
                                                 const engine::FusionScheme& scheme,
                                                 const std::vector<engine::SegmentChoice>& choices) {
  const int64_t check_seq = std::min<int64_t>(src.graph.seq_len, 128);
  auto sg = src.GraphAt(1, check_seq);
  MaskSourceOptions mo = a.mask;
  mo.seq = check_seq;
  // A mask file or the plan's mask has its own size: the check uses BigBird at its L.
  if (!a.mask.mask_file.empty() || a.mask.pattern.empty()) mo.mask_file.clear(), mo.pattern = "bigbird";
  if (mo.width > check_seq) mo.width = -1;
  if (mo.global > check_seq) mo.global = -1;
  auto sm = ResolveMaskSource(mo);
  if (!sg.IsOk() || !sm.IsOk()) return engine::Error{"check: " + (sg.IsOk() ? sm.Message() : sg.Message())};
  sg->dtype = dtype;
  auto ss = engine::FusionScheme::FromCode(scheme.Code(), *sg);
  if (!ss.IsOk()) return engine::Error{"check: " + ss.Message()};
  std::vector<engine::SegmentChoice> sc = choices;
  for (auto& c : sc) c.mha_config = engine::MhaConfig{};  // 64x64x4: supported at any L
  auto check = engine::CheckLayerAgainstCpu(backend, *sg, sm->mask, *ss, sc, a.weight_seed,
                                            a.tolerance);
  if (!check.IsOk()) return engine::Error{"check: " + check.Message()};
  if (!check->passed)
    return engine::Error{"check: layer output differs from the CPU reference: max row error " +
                         std::to_string(check->max_row_error) + " (tolerance " +
                         std::to_string(a.tolerance) + "), " + std::to_string(check->nan_count) +
                         " NaN"};
  return nlohmann::json{{"batch", 1}, {"seq_len", check_seq}, {"max_row_error", check->max_row_error},
                        {"worst_row", check->worst_row}, {"nan", check->nan_count},
                        {"tolerance", check->tolerance}, {"passed", check->passed}};
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

int Run(const RunArgs& a_in) {
  const std::string cmd = "run";
  RunArgs a = a_in;
  if (engine::Status s = CheckRunOptions(a); !s.IsOk()) return Fail(cmd, s.Message());
  // --plan: the shape, the model and the mask default to the plan's; what the user gives
  // instead must match it (ResolveLayerScheme's CheckPlanFor refuses otherwise).
  LayerSourceArgs sa;
  sa.graph = a.graph;
  sa.mask = a.mask;
  sa.plan = a.plan;
  sa.batch_given = a.batch_given;
  sa.seq_given = a.seq_given;
  auto src = ResolveLayerSource(sa);
  if (!src.IsOk()) return Fail(cmd, src.Message());
  a.graph = src->args.graph;
  a.mask = src->args.mask;
  const std::optional<engine::Plan>& plan = src->plan;
  const engine::OpGraph& graph = src->graph;
  const MaskSource& mask = src->mask;

  std::string error;
  auto backend = MakeRunBackend(a.device, &error);
  if (!backend) return Fail(cmd, error);

  // Scheme and choices: --scheme (code, hex, default, chains, unfused) or --plan.
  auto variant = engine::ParseMhaVariant(a.mha, "--mha");  // checked while parsing
  if (!variant.IsOk()) return Fail(cmd, variant.Message());
  engine::SegmentChoice base;
  base.mha_variant = *variant;
  base.sub_len = a.sub_len;
  // The CPU backend models an H100 but is not one: compare the plan's device with "cpu".
  engine::DeviceSpec here = backend->Device();
  if (a.device == "cpu") here.name = backend->Name();
  auto resolved = ResolveLayerScheme(*src, a.graph.scheme, base, here);
  if (!resolved.IsOk()) return Fail(cmd, resolved.Message());
  const engine::FusionScheme& scheme = resolved->scheme;
  std::vector<engine::SegmentChoice> choices = resolved->choices;
  nlohmann::json warnings = nlohmann::json::array();
  for (const std::string& w : resolved->warnings) {
    std::fprintf(stderr, "stof run: warning: %s\n", w.c_str());
    warnings.push_back(w);
  }

  int layers = a.layers == "full" ? 0 : std::stoi(a.layers);  // checked while parsing
  if (layers == 0 && !a.layers_given && plan && plan->model)
    layers = static_cast<int>(plan->model->layers);
  if (layers == 0) layers = static_cast<int>(graph.layers);

  engine::OpGraph run_graph = graph;
  run_graph.dtype = engine::StorageTypeFor(*backend);
#ifdef STOF_WITH_KERNELS
  if (!plan && a.device == "local") {  // a plan fixes the parameters itself
    if (engine::Status s = ChooseRunMhaConfig(a.mha_kernel, mask.mask, run_graph, *backend, choices);
        !s.IsOk())
      return Fail(cmd, s.Message());
  }
#endif
  nlohmann::json out =
      RunHeaderJson(a, graph, mask, *backend, layers, scheme, choices, plan, warnings);

  RunProgress progress(a.quiet || a.graph.json);
  const auto fail = [&](const std::string& message) {
    progress.line.Finish();
    return Fail(cmd, message);
  };
  if (a.check && a.device != "cpu") {  // skipped on the CPU backend itself
    progress.Stage("check: one layer at batch 1, L " +
                   std::to_string(std::min<int64_t>(graph.seq_len, 128)) +
                   " against the CPU reference");
    auto check = CheckSmallLayer(a, *src, *backend, run_graph.dtype, scheme, choices);
    if (!check.IsOk()) return fail(check.Message());
    out["check"] = *check;
  }

  engine::ModelRunOptions o;
  o.layers = layers;
  o.seed = a.weight_seed;
  o.choices = choices;
  progress.Stage("weights and input of " + std::to_string(layers) + " layers");
  auto model = engine::ModelRunner::Create(*backend, run_graph, mask.mask, scheme, o);
  if (!model.IsOk()) return fail(model.Message());
  engine::MeasureOptions mo;
  mo.repeats = a.repeats;
  mo.warmup = 2;
  mo.graph = !a.no_graph && a.device != "cpu";
  mo.max_seconds = 5;
  auto report = engine::MeasureModel(*backend, **model, mo, progress.OnMeasure(""));
  if (!report.IsOk()) return fail(report.Message());
  AddReport(out, *report, a.repeats, layers, plan);
  if (!a.versus.empty()) {
    auto vs = MeasureVersus(a, *backend, run_graph, mask.mask, scheme, choices, o, mo, *report,
                            *model, progress);
    if (!vs.IsOk()) return fail(vs.Message());
    out["versus"] = *vs;
  }
  progress.line.Finish();
  if (a.graph.json)
    PrintJson("run", out);
  else
    PrintRunText(a, out, graph, mask, *backend, layers, plan, scheme, *report);
  return kExitOk;
}

}  // namespace

void RegisterRunCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a whole model (N layers, random fp16 weights) on our engine and time it");
  AddGraphOptions(cmd, &a->graph, /*with_plan=*/true);
  cmd->add_option("--layers", a->layers,
                  "Number of layers (1.." + std::to_string(engine::ModelRunOptions::kMaxLayers) +
                      "), or 'full' (the model's; with --plan: default the plan model's)")
      ->capture_default_str()
      ->check(IntRange(1, engine::ModelRunOptions::kMaxLayers, "full"));
  AddMaskSourceOptions(cmd, &a->mask, MaskFileUse::kFileOrName);
  cmd->get_option("--seq")->description("Sequence length L (1.." +
                                         std::to_string(engine::Mask::kMaxLen) +
                                         "; default 512; with --plan: the plan's)");
  cmd->get_option("--mask")->description(
      "Mask: a generator name (bigbird, longformer, ...; default bigbird, with --plan the "
      "plan's) or a file");
  CLI::Option* scheme = cmd->add_option(
      "--scheme", a->graph.scheme,
      "Fusion scheme: default (greedy templates without GEMM chains and GEMM+norm "
      "row blocks), chains (with GEMM chains), all (every template), unfused (op by "
      "op), or a code / hex form");
  scheme->capture_default_str()->check(NonEmpty("a fusion scheme"));
  cmd->add_option("--versus", a->versus,
                  "Also measure this scheme (same forms as --scheme) in the same process and "
                  "compare segment by segment")
      ->check(NonEmpty("a fusion scheme"));
  CLI::Option* plan = cmd->add_option(
      "--plan", a->plan,
      "Replay a plan (plan.json): its fusion scheme, templates and parameters; model, batch, "
      "L and mask default to the plan's, and a run that differs from them is refused");
  plan->check(NonEmpty());
  CLI::Option* mha = cmd->add_option("--mha", a->mha, "Attention variant: fused, unfused, sd, sdf");
  mha->capture_default_str()->check(OneOf({"fused", "unfused", "sd", "sdf"}));
  CLI::Option* mha_kernel = cmd->add_option(
      "--mha-kernel", a->mha_kernel,
      "Fused MHA kernel on the GPU (--device local, --mha fused): auto, row_wise, block_wise");
  mha_kernel->capture_default_str()->check(OneOf({"auto", "row_wise", "block_wise"}));
  CLI::Option* sub_len =
      cmd->add_option("--sub-len", a->sub_len, "Softmax sub-vector length T (--mha sd, sdf)");
  sub_len->capture_default_str()->check(IntRange(1, engine::Mask::kMaxLen));
  // A plan fixes these per segment.
  for (CLI::Option* o : {scheme, mha, mha_kernel, sub_len}) plan->excludes(o);
  cmd->add_option("--device", a->device,
                  DeviceOptionHelp("local or cpu: a run executes the layers, a built-in device can "
                                   "only be predicted (stof tune --device NAME)"))
      ->capture_default_str()
      ->check(OneOf({"local", "cpu"}));
  cmd->add_flag("!--no-check", a->check, "Skip the check of one small layer against the CPU");
  cmd->add_option("--tolerance", a->tolerance, "Check tolerance (max row error, > 0)")
      ->capture_default_str()
      ->check(NumberRange(0, std::numeric_limits<double>::infinity(), /*lo_open=*/true));
  cmd->add_option("--repeats", a->repeats, "Timed runs per measurement (median)")
      ->capture_default_str()
      ->check(IntRange(1, std::numeric_limits<int>::max()));
  cmd->add_flag("--no-graph", a->no_graph, "Time plain launches instead of a CUDA graph");
  cmd->add_option("--weight-seed", a->weight_seed, "Seed of the random weights and input")
      ->capture_default_str()
      ->check(SeedValue());
  cmd->add_flag("--quiet", a->quiet, "No progress on stderr");
  cmd->add_flag("--json", a->graph.json, "Print machine-readable JSON");
  cmd->callback([a, exit_code, cmd] {
    a->batch_given = cmd->get_option("--batch")->count() > 0;
    a->seq_given = cmd->get_option("--seq")->count() > 0;
    a->layers_given = cmd->get_option("--layers")->count() > 0;
    a->mha_kernel_given = cmd->get_option("--mha-kernel")->count() > 0;
    a->sub_len_given = cmd->get_option("--sub-len")->count() > 0;
    *exit_code = Run(*a);
  });
}

}  // namespace stof::app
