// `stof tune`: tunes a model's layer for a workload and mask with one of the search methods
// (engine/tune/tuner.h: stof, gtco, mcfuser, exhaustive), on the GPU (--device local, the
// default when there is one), on the CPU reference (--device cpu; tiny shapes, for tests) or
// on the analytical models alone (--device predict, the default without a GPU: every figure
// is labelled a prediction). Shows a progress bar (stage, candidates, best so far, elapsed,
// remaining) on stderr, then a table of the chosen segments, measures the whole model under
// the tuned plan and under the untuned default in one process, and writes the plan (--out).
// Measurements are cached across runs in the user's cache file (docs/tuner.md).
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/device_choice.h"
#include "app/cli/graph_args.h"
#include "app/cli/interrupt.h"
#include "app/cli/progress_line.h"
#include "app/cli/run_common.h"
#include "app/common/option_checks.h"
#include "app/common/run_choice.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/plan/plan.h"
#include "engine/tune/tune_cache.h"
#include "engine/tune/tune_session.h"

namespace stof::app {

namespace {

struct TuneArgs {
  GraphArgs graph;
  MaskSourceOptions mask;
  std::string method = "stof";
  std::string budget;
  uint64_t tune_seed = 1;
  int64_t samples = 4;
  std::string device = "auto";
  std::string out;
  std::string cache;
  bool no_cache = false;
  bool quiet = false;
  int repeats = 10;
  bool no_measure_model = false;
};

// The tuner's events on the shared progress display (progress_line.h).
class CliProgress : public engine::TuneObserver {
 public:
  explicit CliProgress(bool quiet) : m_line(quiet) {}
  void OnStage(const engine::TuneProgress& p) override {
    m_line.Stage(p.elapsed_s, p.method, p.stage);
    Draw(p, true);
  }
  void OnProgress(const engine::TuneProgress& p) override { Draw(p, false); }
  void Finish() { m_line.Finish(); }

 private:
  void Draw(const engine::TuneProgress& p, bool force) {
    if (!force && !m_line.Due()) return;
    char best[32] = "-";
    if (p.best_us > 0) std::snprintf(best, sizeof best, "%.1f us", p.best_us);
    char detail[96];
    std::snprintf(detail, sizeof detail, "%lld candidates (%lld cached)  best %s",
                  static_cast<long long>(p.candidates), static_cast<long long>(p.cache_hits), best);
    m_line.Status(p.fraction, detail, p.elapsed_s, p.remaining_s, force);
  }
  ProgressLine m_line;
};

// The tuning session's result as `tune --json` prints it.
nlohmann::json TuneJson(const engine::TuneSessionResult& session, const MaskSource& mask,
                        const std::string& cache_path, const std::string& plan_path) {
  const engine::TuneResult& r = session.result;
  const engine::OpGraph& g = session.graph;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : r.segments) {
    nlohmann::json row = {{"ops", SegmentLabel(s.segment)}, {"template", s.tmpl},
                          {"choice", s.choice_text}, {"us", s.cost.us},
                          {"measured", s.cost.measured}, {"predicted_us", s.cost.predicted_us},
                          {"default_us", s.default_cost.us}};
    segs.push_back(row);
  }
  const auto& st = r.stats;
  nlohmann::json out = {
      {"model", g.model},
      {"family", engine::ModelFamilyName(g.family)},
      {"part", engine::LayerPartName(g.part)},
      {"batch", g.batch},
      {"seq_len", g.seq_len},
      {"mask", {{"label", mask.label}, {"hash", mask.mask.HashHex()}, {"density", mask.mask.Density()}}},
      {"device", session.device_text},
      {"method", engine::TuneMethodName(r.method)},
      {"measured", r.measured},
      {"scheme", {{"code", r.scheme.Code()}, {"hex", *engine::CodeToHex(r.scheme.Code())}}},
      {"initial", {{"code", r.initial_scheme.Code()}, {"layer_us", r.initial_us}}},
      {"layer_us", r.total_us},
      {"segments", segs},
      {"stopped_by", r.stopped_by},
      {"notes", r.notes},
      {"setup_s", session.setup_s},
      {"stats", {{"total_s", st.total_s}, {"measure_s", st.measure_s}, {"predict_s", st.predict_s},
                 {"cache_s", st.cache_s}, {"rules_s", st.rules_s}, {"reward_s", st.reward_s},
                 {"search_s", st.search_s}, {"overhead_share", st.OverheadShare()},
                 {"candidates", st.candidates}, {"measured", st.measured},
                 {"cache_hits", st.cache_hits}, {"failed", st.failed}}},
      {"cache", cache_path},
      {"plan", plan_path}};
  if (session.default_layer_us) {
    out["default_layer_us"] = *session.default_layer_us;
    out["speedup_over_default_layer"] =
        r.total_us > 0 ? *session.default_layer_us / r.total_us : 0.0;
  }
  if (session.model_us) {
    out["model_us"] = *session.model_us;
    out["default_model_us"] = *session.default_model_us;
    out["speedup_over_default"] = *session.default_model_us / *session.model_us;
    out["layers"] = session.layers;
    out["timing"] = session.model_method;
  }
  return out;
}

// The human report of a tuning session (`out`: TuneJson).
void PrintTuneText(const engine::TuneSessionResult& session, const MaskSource& mask,
                   const nlohmann::json& out, uint64_t seed, const std::string& plan_path) {
  const engine::TuneResult& r = session.result;
  const engine::OpGraph& g = session.graph;
  const auto& st = r.stats;
  const char* kind = r.measured ? "measured" : "predicted";
  std::printf("model     %s (%s %s), batch %lld, L %lld\n", g.model.c_str(),
              engine::ModelFamilyName(g.family), engine::LayerPartName(g.part),
              static_cast<long long>(g.batch), static_cast<long long>(g.seq_len));
  std::printf("mask      %s\n", mask.label.c_str());
  std::printf("device    %s\n", out["device"].get<std::string>().c_str());
  std::printf("method    %s, seed %llu, %s\n", engine::TuneMethodName(r.method),
              static_cast<unsigned long long>(seed), r.stopped_by.c_str());
  std::printf("scheme    %s (%s)\n\n", r.scheme.Code().c_str(),
              out["scheme"]["hex"].get<std::string>().c_str());
  std::printf("  %-10s %-18s %-28s %10s %10s %10s\n", "ops", "template", "parameters",
              r.measured ? "us" : "us (pred)", "default", "model");
  for (const auto& s : r.segments)
    std::printf("  %-10s %-18s %-28s %10.1f %10.1f %10.1f\n", SegmentLabel(s.segment).c_str(),
                s.tmpl.empty() ? "-" : s.tmpl.c_str(), s.choice_text.c_str(), s.cost.us,
                s.default_cost.us, s.cost.predicted_us);
  std::printf("  %-10s %-18s %-28s %10.1f\n\n", "layer", "", "", r.total_us);
  std::printf("initial   %s: %.1f us per layer (%s)\n", r.initial_scheme.Code().c_str(),
              r.initial_us, kind);
  std::printf("tuned     %.1f us per layer (%s): %.2fx the initial scheme\n", r.total_us, kind,
              r.total_us > 0 ? r.initial_us / r.total_us : 0.0);
  if (session.default_layer_us && r.total_us > 0)
    std::printf("default   %.1f us per layer (%s; the default scheme, default choices): tuned is "
                "%.2fx faster\n",
                *session.default_layer_us, kind, *session.default_layer_us / r.total_us);
  if (session.model_us)
    std::printf("model     %d layers: tuned %.1f us, default %.1f us (%.2fx; %s)\n",
                session.layers, *session.model_us, *session.default_model_us,
                *session.default_model_us / *session.model_us, session.model_method.c_str());
  std::printf("tuning    %.2f s, %lld candidates (%lld measured, %lld from the cache, %lld "
              "failed); tuner overhead %.1f %%\n",
              st.total_s, static_cast<long long>(st.candidates), static_cast<long long>(st.measured),
              static_cast<long long>(st.cache_hits), static_cast<long long>(st.failed),
              100 * st.OverheadShare());
  std::printf("setup     %.2f s (layers, weights, cache file) before tuning\n", session.setup_s);
  for (const auto& n : r.notes) std::printf("note      %s\n", n.c_str());
  if (!plan_path.empty()) std::printf("plan      %s\n", plan_path.c_str());
}

int Tune(const TuneArgs& a_in) {
  const std::string cmd = "tune";
  const TuneArgs& a = a_in;
  // The layer: --model / --config at --batch, --seq, --mask (bigbird, L = 512 by default).
  LayerSourceArgs la;
  la.graph = a.graph;
  la.mask = a.mask;
  auto src = ResolveLayerSource(la);
  if (!src.IsOk()) return Fail(cmd, src.Message());
  if (auto fits = CheckLayerMask(*src); !fits.IsOk()) return Fail(cmd, fits.Message());
  const engine::OpGraph* graph = &src->graph;
  const MaskSource* mask = &src->mask;
  engine::TuneOptions o;
  auto method = engine::ParseTuneMethod(a.method);  // checked while parsing (--method)
  if (!method.IsOk()) return Fail(cmd, "--" + method.Message());
  o.method = *method;
  auto budget = engine::ParseTuneBudget(a.budget, &o, "--budget");
  if (!budget.IsOk()) return Fail(cmd, budget.Message());
  o.seed = a.tune_seed;
  o.samples = a.samples;
  o.cancel = InterruptFlag();  // Ctrl-C / SIGTERM: stop, write nothing (interrupt.h)
  auto valid = o.Validate("tune");
  if (!valid.IsOk()) return Fail(cmd, valid.Message());

  // Device: measure on the GPU or the CPU reference, or predict.
  std::string device = a.device;
  std::vector<std::string> notes;
  if (device == "auto") {
    device = LocalGpuAvailable() ? "local" : "predict";
    if (device == "predict")
      notes.push_back("no GPU found: tuning on the analytical models (predictions, not "
                      "measurements); use --device local on a GPU machine");
  }
  std::unique_ptr<engine::Backend> backend;
  engine::DeviceSpec spec;
  if (const std::optional<engine::DeviceSpec> predicted = PredictedDevice(device)) {
    spec = *predicted;  // a built-in name, or predict (the H100's)
  } else if (device != "local" && device != "cpu") {
    return Fail(cmd, "--device: expected auto, local, cpu, predict or a built-in device, got '" + device +
                         "'");
  } else {
    std::string error;
    backend = MakeRunBackend(device, &error);
    if (!backend) return Fail(cmd, error + " (or --device predict)");
    spec = backend->Device();
  }
  // The cache file (measurements only).
  std::optional<engine::TuneCache> cache;
  std::string cache_path = a.cache.empty() ? engine::DefaultTuneCachePath() : a.cache;
  if (!a.no_cache && backend) {
    if (cache_path.empty()) {
      notes.push_back("no cache directory ($HOME unset): measurements are not kept");
    } else {
      auto c = engine::TuneCache::Open(cache_path);
      if (c.IsOk()) cache = std::move(*c);
      else notes.push_back("cache: " + c.Message() + " (measurements are not kept)");
    }
  }
  for (const auto& n : notes) std::fprintf(stderr, "stof tune: note: %s\n", n.c_str());

  engine::TuneSessionRequest rq;
  rq.graph = *graph;
  rq.mask = &mask->mask;
  if (mask->has_spec) rq.spec = mask->spec;
  rq.backend = backend.get();
  rq.gpu = device == "local";
  rq.device = spec;
  rq.run_chooser = MakeMhaRunChooser();  // predictions start from what the kernels run
  rq.options = o;
  rq.cache = cache ? &*cache : nullptr;
  rq.repeats = a.repeats;
  rq.measure_model = !a.no_measure_model;
  rq.separate_bias = a.graph.separate_bias;
  CliProgress progress(a.quiet || a.graph.json);
  auto session = engine::RunTuneSession(rq, &progress);
  progress.Finish();
  if (InterruptSignal() != 0) return kExitFailure;  // main reports it and exits 128 + signal
  if (!session.IsOk()) return Fail(cmd, session.Message());
  if (!a.out.empty()) {
    auto st = engine::SavePlan(a.out, session->plan);
    if (!st.IsOk()) return Fail(cmd, st.Message());
  }
  const nlohmann::json out = TuneJson(*session, *mask, cache ? cache->Path() : "", a.out);
  if (a.graph.json)
    PrintJson("tune", out);
  else
    PrintTuneText(*session, *mask, out, o.seed, a.out);
  return kExitOk;
}

}  // namespace

void RegisterTuneCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Tune a model's fusion scheme and kernel parameters for a workload and mask");
  AddGraphOptions(cmd, &a->graph);
  AddMaskSourceOptions(cmd, &a->mask, MaskFileUse::kFileOrName);
  cmd->get_option("--seq")->description("Sequence length L (1.." +
                                         std::to_string(engine::Mask::kMaxLen) + "; default 512)");
  cmd->get_option("--mask")->description(
      "Mask: a generator name (bigbird, longformer, ...; default bigbird) or a file");
  std::vector<std::string> methods;
  for (engine::TuneMethod m : engine::AllTuneMethods()) methods.push_back(engine::TuneMethodName(m));
  cmd->add_option("--method", a->method, "Search: " + OrList(methods))
      ->capture_default_str()
      ->check(OneOf(methods));
  cmd->add_option("--budget", a->budget,
                  "Stop after this long (60s, 2m) or this many candidates (200c); default: "
                  "when the method ends");
  cmd->add_option("--tune-seed", a->tune_seed, "Seed of the search's random choices")
      ->capture_default_str()
      ->check(SeedValue());
  cmd->add_option("--samples", a->samples, "Parameter settings sampled per segment (stof, gtco)")
      ->capture_default_str()
      ->check(IntRange(1, engine::TuneOptions::kMaxSamples));
  cmd->add_option("--device", a->device,
                  DeviceOptionHelp("every word: local and cpu measure (cpu: tiny shapes), a built-in "
                                   "or predict tunes on the analytical models for that device"))
      ->capture_default_str()
      ->check(NonEmpty());
  cmd->add_option("--out", a->out, "Write the tuned plan here (JSON; replay with stof run --plan)")
      ->check(NonEmpty());
  cmd->add_option("--cache", a->cache,
                  "Measurement cache file (default: $STOF_CACHE_DIR, $XDG_CACHE_HOME/stof or "
                  "~/.cache/stof, file tune-cache.jsonl)")
      ->check(NonEmpty());
  cmd->add_flag("--no-cache", a->no_cache, "Neither read nor write the cache file");
  cmd->add_option("--repeats", a->repeats, "Timed runs per candidate (median)")
      ->capture_default_str()
      ->check(IntRange(1, std::numeric_limits<int>::max()));
  cmd->add_flag("--no-model", a->no_measure_model,
                "Skip measuring the whole model (tuned and default) after tuning");
  cmd->add_flag("--quiet", a->quiet, "No progress bar");
  cmd->add_flag("--json", a->graph.json, "Print machine-readable JSON");
  cmd->callback([a, exit_code] { *exit_code = Tune(*a); });
}

}  // namespace stof::app
