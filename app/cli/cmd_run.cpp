// `stof run`: a whole model (N layers of its op graph) on our engine with deterministic random
// fp16 weights, under a fusion scheme (the default greedy one, op by op, a code, or a plan's),
// reporting the time of each segment of layer 0, of one layer and of all layers (CUDA events,
// over a CUDA graph by default), after checking one small layer (batch 1, L <= 128, same
// scheme) against the CPU reference. `--device cpu` runs everything on the reference (slow;
// for small shapes and machines without a GPU) and shows its progress on stderr as `stof tune`
// does (progress_line.h; --quiet or --json: none). JSON output feeds
// tests/compare/model_compare.py.
// `--plan` replays a plan through engine/plan/plan_choices.h: model, batch, L and mask default
// to the plan's; a run that differs from them is refused (CheckPlanFor), another device warns;
// a plan of a KV cache's last rows (schema version 3) is refused (run_common.cpp).
// The steps live by job in cmd_run_check.cpp, cmd_run_versus.cpp and cmd_run_report.cpp
// (cmd_run_internal.h); this file holds the options and runs the steps in order.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "app/cli/cmd_run_internal.h"
#include "app/cli/device_choice.h"
#include "app/common/option_checks.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/fusion/default_scheme.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan_choices.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/attention/prepared_mha.h"
#include "kernels/cuda_backend.h"
#endif

namespace stof::app {

namespace {

using run_detail::AddReport;
using run_detail::CheckSmallLayer;
using run_detail::MeasureVersus;
using run_detail::PrintRunText;
using run_detail::RunArgs;
using run_detail::RunHeaderJson;
using run_detail::RunProgress;

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
