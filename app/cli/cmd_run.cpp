// `stof run`: a whole model (N layers of its op graph) on our engine with deterministic random
// fp16 weights, under a fusion scheme (the default greedy one, op by op, a code, or a plan's),
// reporting the time of each segment of layer 0, of one layer and of all layers (CUDA events,
// over a CUDA graph by default), after checking one small layer (batch 1, L <= 128, same
// scheme) against the CPU reference. `--device cpu` runs everything on the reference (slow;
// for small shapes and machines without a GPU). JSON output feeds tests/compare/model_compare.py.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/graph_args.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/fusion/default_scheme.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan.h"
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
};

engine::Expected<engine::FusionScheme> SchemeFromText(const std::string& sch,
                                                      const engine::OpGraph& g) {
  if (sch.empty() || sch == "default") return engine::DefaultScheme(g);
  if (sch == "unfused") return engine::FusionScheme::OpByOp(g);
  if (sch == "chains") return engine::DefaultScheme(g, {true, false});
  if (sch == "all") return engine::DefaultScheme(g, {true, true});
  return ParseScheme(sch, g);
}

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

// A sparse_mha segment's choice from the CLI (variant, kernel) or a plan segment's params.
engine::Status ApplyPlan(const engine::Plan& plan, const engine::OpGraph& g,
                         engine::FusionScheme* scheme,
                         std::vector<engine::SegmentChoice>* choices, const std::string& name) {
  const engine::Workload w = g.AttentionWorkload();
  if (plan.workload.batch != w.batch || plan.workload.seq_len != w.seq_len ||
      plan.workload.heads != w.heads || plan.workload.head_dim != w.head_dim)
    return engine::MakeError(
        name + ": workload: the plan is for batch " + std::to_string(plan.workload.batch) +
        ", L " + std::to_string(plan.workload.seq_len) + ", " +
        std::to_string(plan.workload.heads) + " heads x " +
        std::to_string(plan.workload.head_dim) + "; this run is batch " +
        std::to_string(w.batch) + ", L " + std::to_string(w.seq_len) + ", " +
        std::to_string(w.heads) + " heads x " + std::to_string(w.head_dim) + " (refused)");
  if (!plan.fusion.code.empty()) {
    auto s = engine::FusionScheme::FromCode(plan.fusion.code, g, name + ": fusion.code");
    if (!s.IsOk()) return s.ToStatus();
    *scheme = *s;
  }
  choices->assign(scheme->Segments().size(), engine::SegmentChoice{});
  for (auto& c : *choices) {
    c.mha_config.kernel = plan.mha.kernel;
    c.mha_config.block_m = plan.mha.block_m;
    c.mha_config.block_n = plan.mha.block_n;
    c.mha_config.num_warps = plan.mha.num_warps;
  }
  for (size_t i = 0; i < plan.fusion.segments.size() && i < choices->size(); ++i) {
    const auto& seg = plan.fusion.segments[i];
    auto& c = (*choices)[i];
    for (const auto& [key, value] : seg.params.items()) {
      const std::string field = name + ": fusion.segments[" + std::to_string(i) + "].params." + key;
      if (key == "variant") {
        if (!value.is_string()) return engine::MakeError(field + ": expected a string");
        auto v = engine::ParseMhaVariant(value.get<std::string>(), field);
        if (!v.IsOk()) return v.ToStatus();
        c.mha_variant = *v;
      } else if (key == "sub_len") {
        if (!value.is_number_integer()) return engine::MakeError(field + ": expected an integer");
        c.sub_len = value.get<int64_t>();
      } else {
        if (!value.is_number_integer()) return engine::MakeError(field + ": expected an integer");
        c.params[key] = value.get<int64_t>();
      }
    }
  }
  return engine::Status::Ok();
}

std::unique_ptr<engine::Backend> MakeBackend(const std::string& device, std::string* error) {
  if (device == "cpu") return std::make_unique<engine::CpuBackend>();
#ifdef STOF_WITH_KERNELS
  if (device == "local") {
    auto b = kernels::CudaBackend::Create(0);
    if (b.IsOk()) return std::move(*b);
    *error = b.Message() + " (use --device cpu for the reference backend)";
    return nullptr;
  }
#else
  if (device == "local") {
    *error = "--device local: this build has no CUDA (STOF_CUDA=OFF); use --device cpu";
    return nullptr;
  }
#endif
  *error = "--device: expected local or cpu, got '" + device + "'";
  return nullptr;
}

int Run(const RunArgs& a_in) {
  const std::string cmd = "run";
  RunArgs a = a_in;
  // --mask NAME: a generator name unless a file of that name exists.
  if (!a.mask.mask_file.empty() && a.mask.pattern.empty() &&
      !std::filesystem::exists(a.mask.mask_file)) {
    for (const auto& n : engine::MaskPatternNames())
      if (n == a.mask.mask_file) {
        a.mask.pattern = n;
        a.mask.mask_file.clear();
      }
  }
  if (a.mask.mask_file.empty() && a.mask.pattern.empty()) a.mask.pattern = "bigbird";
  if (a.mask.seq == 0) a.mask.seq = 512;  // --seq (added with the mask options) is also L
  a.graph.seq = a.mask.seq;
  auto graph = BuildGraph(a.graph);
  if (!graph.IsOk()) return Fail(cmd, graph.Message());
  auto mask = ResolveMaskSource(a.mask);
  if (!mask.IsOk()) return Fail(cmd, mask.Message());
  if (mask->mask.Rows() != graph->seq_len)
    return Fail(cmd, "--mask: " + mask->label + " is " + std::to_string(mask->mask.Rows()) +
                         " x " + std::to_string(mask->mask.Cols()) + ", --seq is " +
                         std::to_string(graph->seq_len));

  // Scheme and choices: --scheme (code, hex, default, chains, unfused) or --plan.
  auto parsed = SchemeFromText(a.graph.scheme, *graph);
  if (!parsed.IsOk()) return Fail(cmd, parsed.Message());
  engine::FusionScheme scheme = *parsed;
  std::vector<engine::SegmentChoice> choices(scheme.Segments().size());
  auto variant = engine::ParseMhaVariant(a.mha, "--mha");
  if (!variant.IsOk()) return Fail(cmd, variant.Message());
  if (a.sub_len < 1) return Fail(cmd, "--sub-len: must be at least 1");
  if (!a.plan.empty()) {
    auto plan = engine::LoadPlan(a.plan);
    if (!plan.IsOk()) return Fail(cmd, plan.Message());
    auto st = ApplyPlan(*plan, *graph, &scheme, &choices, a.plan);
    if (!st.IsOk()) return Fail(cmd, st.Message());
    if (plan->device.name != "" && a.device == "local")
      std::fprintf(stderr, "stof run: note: plan made on %s\n", plan->device.name.c_str());
  } else {
    for (auto& c : choices) {
      c.mha_variant = *variant;
      c.sub_len = a.sub_len;
    }
  }
  int layers = 0;
  if (a.layers != "full") {
    try {
      layers = std::stoi(a.layers);
    } catch (...) {
      return Fail(cmd, "--layers: expected a number or 'full', got '" + a.layers + "'");
    }
    if (layers < 1 || layers > 1024) return Fail(cmd, "--layers: expected 1..1024");
  }
  if (layers == 0) layers = static_cast<int>(graph->layers);

  std::string error;
  auto backend = MakeBackend(a.device, &error);
  if (!backend) return Fail(cmd, error);
  engine::OpGraph run_graph = *graph;
  run_graph.dtype = engine::StorageTypeFor(*backend);

#ifdef STOF_WITH_KERNELS
  // The fused MHA's default parameters: the kernels' own choice (Eq. 1, Eq. 2 in the
  // preferred set), unless a plan fixed them.
  if (a.plan.empty() && a.device == "local") {
    auto req = kernels::ParseMhaKernelRequest(a.mha_kernel);
    if (!req.IsOk()) return Fail(cmd, "--mha-kernel: " + req.Message());
    kernels::MhaRequest r;
    r.kernel = *req == kernels::MhaKernelRequest::kNative ? kernels::MhaKernelRequest::kAuto : *req;
    auto ch = kernels::ChooseMhaConfig(mask->mask, run_graph.AttentionWorkload(),
                                       backend->Device(), r);
    if (!ch.IsOk()) return Fail(cmd, ch.Message());
    for (auto& c : choices) c.mha_config = ch->config;
  }
#endif

  nlohmann::json out = {{"model", graph->model},
                        {"family", engine::ModelFamilyName(graph->family)},
                        {"part", engine::LayerPartName(graph->part)},
                        {"batch", graph->batch},
                        {"seq", graph->seq_len},
                        {"mask", {{"label", mask->label},
                                  {"hash", mask->mask.HashHex()},
                                  {"density", mask->mask.Density()}}},
                        {"layers", layers},
                        {"device", backend->Name()},
                        {"mha_variant", engine::MhaVariantName(choices.empty() ? *variant : choices[0].mha_variant)},
                        {"scheme", {{"code", scheme.Code()}, {"hex", *engine::CodeToHex(scheme.Code())}}}};

  // One small layer against the CPU reference first (skipped on the CPU backend itself).
  if (a.check && a.device != "cpu") {
    GraphArgs ga = a.graph;
    ga.batch = 1;
    ga.seq = std::min<int64_t>(graph->seq_len, 128);
    auto sg = BuildGraph(ga);
    MaskSourceOptions mo = a.mask;
    mo.seq = ga.seq;
    if (!a.mask.mask_file.empty()) mo.mask_file.clear(), mo.pattern = "bigbird";
    if (mo.width > ga.seq) mo.width = -1;
    if (mo.global > ga.seq) mo.global = -1;
    auto sm = ResolveMaskSource(mo);
    if (!sg.IsOk() || !sm.IsOk()) return Fail(cmd, "check: " + (sg.IsOk() ? sm.Message() : sg.Message()));
    sg->dtype = run_graph.dtype;
    auto ss = engine::FusionScheme::FromCode(scheme.Code(), *sg);
    if (!ss.IsOk()) return Fail(cmd, "check: " + ss.Message());
    std::vector<engine::SegmentChoice> sc = choices;
    for (auto& c : sc) c.mha_config = engine::MhaConfig{};  // 64x64x4: supported at any L
    auto check = engine::CheckLayerAgainstCpu(*backend, *sg, sm->mask, *ss, sc, a.weight_seed,
                                              a.tolerance);
    if (!check.IsOk()) return Fail(cmd, "check: " + check.Message());
    out["check"] = {{"batch", 1}, {"seq", ga.seq}, {"max_row_error", check->max_row_error},
                    {"worst_row", check->worst_row}, {"nan", check->nan_count},
                    {"tolerance", check->tolerance}, {"passed", check->passed}};
    if (!check->passed)
      return Fail(cmd, "check: layer output differs from the CPU reference: max row error " +
                           std::to_string(check->max_row_error) + " (tolerance " +
                           std::to_string(a.tolerance) + "), " + std::to_string(check->nan_count) +
                           " NaN");
  }

  engine::ModelRunOptions o;
  o.layers = layers;
  o.seed = a.weight_seed;
  o.choices = choices;
  auto model = engine::ModelRunner::Create(*backend, run_graph, mask->mask, scheme, o);
  if (!model.IsOk()) return Fail(cmd, model.Message());
  engine::MeasureOptions mo;
  mo.repeats = a.repeats;
  mo.warmup = 2;
  mo.graph = !a.no_graph && a.device != "cpu";
  mo.max_seconds = 5;
  auto report = engine::MeasureModel(*backend, **model, mo);
  if (!report.IsOk()) return Fail(cmd, report.Message());
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : report->segments)
    segs.push_back({{"ops", s.ops}, {"template", s.tmpl}, {"how", s.how}, {"us", s.us}});
  out["segments"] = segs;
  out["segments_sum_us"] = report->segments_sum_us;
  out["layer_us"] = report->layer_us;
  out["total_us"] = report->total_us;
  out["timing"] = report->method + ", median of up to " + std::to_string(a.repeats);
  out["device_bytes"] = report->device_bytes;
  if (!a.versus.empty()) {
    // The same model under a second scheme, measured in this process right after.
    auto vs_scheme = SchemeFromText(a.versus, run_graph);
    if (!vs_scheme.IsOk()) return Fail(cmd, "--versus: " + vs_scheme.Message());
    std::vector<engine::SegmentChoice> vc(vs_scheme->Segments().size());
    for (auto& c : vc) c = choices.empty() ? engine::SegmentChoice{} : choices[0];
    for (auto& c : vc) c.params.clear();
    o.choices = vc;
    model->reset();  // free the first model's buffers before the second is allocated
    auto vs_model = engine::ModelRunner::Create(*backend, run_graph, mask->mask, *vs_scheme, o);
    if (!vs_model.IsOk()) return Fail(cmd, "--versus: " + vs_model.Message());
    auto vs_report = engine::MeasureModel(*backend, **vs_model, mo);
    if (!vs_report.IsOk()) return Fail(cmd, "--versus: " + vs_report.Message());
    out["versus"] = {{"scheme", {{"code", vs_scheme->Code()},
                                 {"hex", *engine::CodeToHex(vs_scheme->Code())}}},
                     {"layer_us", vs_report->layer_us},
                     {"total_us", vs_report->total_us},
                     {"speedup", report->total_us > 0 ? vs_report->total_us / report->total_us : 0.0},
                     {"segments", VersusTable(*report, scheme, *vs_report, *vs_scheme)}};
  }
  if (a.graph.json) {
    PrintJson(out);
    return kExitOk;
  }
  std::printf("model     %s (%s %s), batch %lld, L %lld, %d layers\n", graph->model.c_str(),
              engine::ModelFamilyName(graph->family), engine::LayerPartName(graph->part),
              static_cast<long long>(graph->batch), static_cast<long long>(graph->seq_len),
              layers);
  std::printf("mask      %s\n", mask->label.c_str());
  std::printf("device    %s\n", backend->Name().c_str());
  std::printf("scheme    %s (%s)\n", scheme.Code().c_str(),
              out["scheme"]["hex"].get<std::string>().c_str());
  if (out.contains("check"))
    std::printf("check     one layer at batch 1, L %lld vs the CPU reference: max row error %.2e "
                "(tolerance %.2g): passed\n",
                static_cast<long long>(out["check"]["seq"].get<int64_t>()),
                out["check"]["max_row_error"].get<double>(), a.tolerance);
  std::printf("\n  ops      template             us        how\n");
  for (const auto& s : report->segments)
    std::printf("  %-8s %-20s %9.1f  %s\n", s.ops.c_str(), s.tmpl.empty() ? "-" : s.tmpl.c_str(),
                s.us, s.how.c_str());
  std::printf("  %-8s %-20s %9.1f\n", "sum", "", report->segments_sum_us);
  std::printf("\nlayer     %.1f us (one layer as a whole)\n", report->layer_us);
  std::printf("total     %.1f us (%d layers; %s)\n", report->total_us, layers,
              report->method.c_str());
  if (out.contains("versus")) {
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
  return kExitOk;
}

}  // namespace

void RegisterRunCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a whole model (N layers, random fp16 weights) on our engine and time it");
  cmd->add_option("--model", a->graph.model,
                  "Preset: bert-small, bert-base, bert-large, gpt2-small, gpt2-medium, t5-small, "
                  "t5-base (with --config: the family when the file has no model_type)");
  cmd->add_option("--config", a->graph.config, "HuggingFace-style config.json for the sizes");
  cmd->add_option("--batch", a->graph.batch, "Batch size")->capture_default_str();
  cmd->add_option("--layer", a->graph.layer, "encoder or decoder (T5; default: the family's)");
  cmd->add_option("--layers", a->layers, "Number of layers, or 'full' (the model's)")
      ->capture_default_str();
  AddMaskSourceOptions(cmd, &a->mask);
  cmd->get_option("--seq")->description("Sequence length L (default 512)");
  cmd->get_option("--mask")->description(
      "Mask: a generator name (bigbird, longformer, ...; default bigbird) or a file");
  cmd->add_option("--scheme", a->graph.scheme,
                  "Fusion scheme: default (greedy templates without GEMM chains and GEMM+norm "
                  "row blocks), chains (with GEMM chains), all (every template), unfused (op by "
                  "op), or a code / hex form")
      ->capture_default_str();
  cmd->add_option("--versus", a->versus,
                  "Also measure this scheme (same forms as --scheme) in the same process and "
                  "compare segment by segment");
  cmd->add_option("--plan", a->plan, "Replay a plan's fusion scheme and parameters (plan.json)");
  cmd->add_option("--mha", a->mha, "Attention variant: fused, unfused, sd, sdf")
      ->capture_default_str();
  cmd->add_option("--mha-kernel", a->mha_kernel, "Fused MHA kernel: auto, row_wise, block_wise")
      ->capture_default_str();
  cmd->add_option("--sub-len", a->sub_len, "Softmax sub-vector length T (sd, sdf)")
      ->capture_default_str();
  cmd->add_option("--device", a->device, "local (the GPU) or cpu (the fp32 reference)")
      ->capture_default_str();
  cmd->add_flag("!--no-check", a->check, "Skip the check of one small layer against the CPU");
  cmd->add_option("--tolerance", a->tolerance, "Check tolerance (max row error)")
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Timed runs per measurement (median)")
      ->capture_default_str();
  cmd->add_flag("--no-graph", a->no_graph, "Time plain launches instead of a CUDA graph");
  cmd->add_option("--weight-seed", a->weight_seed, "Seed of the random weights and input")
      ->capture_default_str();
  cmd->add_flag("--json", a->graph.json, "Print machine-readable JSON");
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace stof::app
