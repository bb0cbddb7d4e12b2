// `stof profile layer` and `stof profile ladder`.
//   layer: one transformer layer (a --plan's, or --model/--batch/--seq/--mask/--scheme as
//     `stof run` reads them: run_common.h ResolveLayerSource / ResolveLayerScheme) on the CUDA
//     backend, profiled segment by segment and as a whole (profiler/layer_profile.h); prints a
//     per-segment table (ops, template, latency, kernels, DRAM read/write, achieved FLOP/s) and
//     the layer line; --out writes the stof-layer-profile JSON, --json prints it. Needs a CUDA
//     build and a GPU; without them it resolves its inputs (so bad options are reported) and
//     then exits 1 saying why.
//   ladder: the attention block's four variants (engine/tune/ladder.h) measured on the GPU
//     (profiler/ladder_profile.h), or predicted by the analytical model (--device predict or a
//     built-in device name, or auto without a GPU), every predicted row labelled "predicted".
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/device_choice.h"
#include "app/cli/profile_output.h"
#include "app/cli/run_common.h"
#include "app/common/option_checks.h"
#include "app/common/run_choice.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/tune/ladder.h"
#include "profiler/ladder_profile.h"
#include "profiler/layer_profile.h"
#include "profiler/model/profile_export.h"
#include "profiler/profiler.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/cuda_backend.h"
#include "kernels/device_query.h"
#endif

namespace stof::app {

namespace {

constexpr const char* kNoCuda =
    "this build has no CUDA (STOF_CUDA=OFF): nothing can be measured; build with CUDA on a "
    "machine with a GPU";

struct LayerArgs {
  LayerSourceArgs src;
  ProfileArgs profile;
  std::string out;
  uint64_t weight_seed = 1;
};

std::string Cell(const char* format, const std::optional<double>& v, double scale = 1) {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v * scale);
  return buf;
}

// Used by the CUDA build only (the other prints nothing it could fill).
[[maybe_unused]] void PrintLayerTable(const profiler::LayerProfile& p) {
  std::printf("layer      %s\n", p.label.c_str());
  std::printf("mask       %s (%s)\n", p.mask_label.c_str(), p.mask_hash.c_str());
  std::printf("scheme     %s\n", p.scheme_code.c_str());
  std::printf("backend    %s; roofs %.0f GB/s, %.0f TFLOP/s fp16 (%s)\n", p.backend.c_str(),
              p.peak_dram_bytes_per_s * 1e-9, p.peak_flops_per_s * 1e-12, p.device_name.c_str());
  std::printf("\n  %-3s %-10s %-20s %10s %7s %10s %10s %9s\n", "#", "ops", "template", "us",
              "kernels", "DRAM rd MB", "DRAM wr MB", "TFLOP/s");
  double sum = 0;
  bool have_sum = true;
  auto row = [](const std::string& idx, const std::string& ops, const std::string& tmpl,
                const profiler::ProfileResult& r) {
    const profiler::ProfileSummary& s = r.summary;
    std::printf("  %-3s %-10s %-20s %10s %7s %10s %10s %9s\n", idx.c_str(), ops.c_str(),
                tmpl.empty() ? "-" : tmpl.c_str(), Cell("%.2f", s.latency_us).c_str(),
                r.availability.activity ? std::to_string(s.kernels_per_run).c_str() : "-",
                Cell("%.2f", s.dram_bytes_read, 1e-6).c_str(),
                Cell("%.2f", s.dram_bytes_write, 1e-6).c_str(),
                Cell("%.1f", s.achieved_flops_per_s, 1e-12).c_str());
  };
  for (const profiler::SegmentProfile& s : p.segments) {
    row(std::to_string(s.index + 1), s.ops, s.tmpl, s.profile);
    if (s.profile.summary.latency_us) sum += *s.profile.summary.latency_us;
    else have_sum = false;
  }
  if (!p.segments.empty() && have_sum) std::printf("  %-3s %-10s %-20s %10.2f\n", "", "sum", "", sum);
  row("", "layer", "", p.layer);
  auto part = [](const char* name, bool ok, const std::string& why) {
    if (!ok) std::printf("  %-9s unavailable: %s\n", name, why.c_str());
  };
  std::printf("\n");
  part("events", p.layer.availability.events, p.layer.availability.events_why_not);
  part("activity", p.layer.availability.activity, p.layer.availability.activity_why_not);
  part("counters", p.layer.availability.range, p.layer.availability.range_why_not);
  for (const std::string& n : p.notes) std::printf("note: %s\n", n.c_str());
}

int RunProfileLayer(const LayerArgs& a) {
  const std::string cmd = "profile layer";
  auto src = ResolveLayerSource(a.src);
  if (!src.IsOk()) return Fail(cmd, src.Message());
#ifndef STOF_WITH_KERNELS
  return Fail(cmd, kNoCuda);
#else
  auto count = kernels::CudaDeviceCount();
  if (!count.IsOk()) return Fail(cmd, count.Message());
  auto backend_or = kernels::CudaBackend::Create(0);
  if (!backend_or.IsOk()) return Fail(cmd, backend_or.Message());
  engine::Backend& backend = **backend_or;
  const engine::DeviceSpec here = backend.Device();
  auto ls = ResolveLayerScheme(*src, a.src.graph.scheme, engine::SegmentChoice{}, here);
  if (!ls.IsOk()) return Fail(cmd, ls.Message());
  for (const std::string& w : ls->warnings)
    std::fprintf(stderr, "stof %s: warning: %s\n", cmd.c_str(), w.c_str());
  engine::OpGraph g = src->graph;
  g.dtype = engine::StorageTypeFor(backend);
  if (!src->plan) {
    // The fused MHA's default: the kernels' own pick (Eq. 1, Eq. 2 in the preferred set).
    auto cfg = backend.MhaConfigChoices(g.AttentionWorkload(), src->mask.mask);
    if (!cfg.IsOk()) return Fail(cmd, cfg.Message());
    for (auto& c : ls->choices) c.mha_config = cfg->front();
  }
  // The layer's input and output; the runner owns the rest.
  const size_t io_bytes = static_cast<size_t>(g.batch * g.seq_len * g.hidden) *
                          static_cast<size_t>(engine::DTypeBytes(g.dtype));
  auto in = backend.Allocate(io_bytes);
  if (!in.IsOk()) return Fail(cmd, in.Message());
  auto out = backend.Allocate(io_bytes);
  if (!out.IsOk()) {
    backend.Free(*in);
    return Fail(cmd, out.Message());
  }
  struct Free {
    engine::Backend& b;
    void* p[2];
    ~Free() { b.Free(p[0]), b.Free(p[1]); }
  } free_io{backend, {*in, *out}};
  const std::vector<uint8_t> x = engine::PackForBackend(
      engine::UniformHalfValues(g.batch * g.seq_len * g.hidden, a.weight_seed + 1000, -1, 1),
      g.dtype);
  if (auto s = backend.CopyToDevice(*in, x.data(), x.size()); !s.IsOk())
    return Fail(cmd, s.Message());
  engine::LayerIo io;
  io.input = *in;
  io.output = *out;
  auto runner = engine::LayerRunner::Create(backend, g, src->mask.mask, ls->scheme, ls->choices,
                                            io, a.weight_seed);
  if (!runner.IsOk()) return Fail(cmd, runner.Message());

  std::unique_ptr<profiler::Profiler> prof = profiler::CreateProfiler();
  profiler::LayerProfileOptions o;
  o.measure = MeasureOptionsFrom(a.profile, here);
  const bool json = a.profile.json;
  o.progress = [json](const std::string& part, double f) {
    if (!json && part != "done") std::fprintf(stderr, "  [%3.0f %%] %s\n", 100 * f, part.c_str());
    return true;
  };
  auto p = profiler::ProfileLayer(**runner, *prof, here, o);
  if (!p.IsOk()) return Fail(cmd, p.Message());
  p->label = g.model + " " + std::to_string(g.batch) + "x" + std::to_string(g.seq_len) + " " +
             src->mask.label + (a.src.plan.empty() ? "" : " (plan " + a.src.plan + ")");
  p->mask_label = src->mask.label;
  p->mask_hash = src->mask.mask.HashHex();
  p->backend = backend.Name();
  p->source_plan = a.src.plan;
  p->created_by = "stof profile layer";
  if (!a.out.empty()) {
    engine::Status s = profiler::SaveLayerProfile(a.out, *p);
    if (!s.IsOk()) return Fail(cmd, s.Message());
  }
  if (!a.profile.trace.empty()) {
    engine::Status s =
        profiler::WriteJsonFile(a.profile.trace, profiler::ProfileToChromeTrace(p->layer));
    if (!s.IsOk()) return Fail(cmd, s.Message());
  }
  if (json) {
    PrintJson("layer-profile", profiler::LayerProfileToJson(*p));
  } else {
    PrintLayerTable(*p);
    if (!a.out.empty()) std::printf("wrote %s (stof-layer-profile JSON)\n", a.out.c_str());
  }
  if (!p->layer.availability.events)
    return Fail(cmd, "latency: " + p->layer.availability.events_why_not);
  return kExitOk;
#endif
}

struct LadderArgs {
  MaskSourceOptions mask;
  int64_t batch = 8, heads = 12, head_dim = 64;
  std::string device = "auto";
  int runs = 50;
  bool json = false;
};

int RunProfileLadder(const LadderArgs& a) {
  const std::string cmd = "profile ladder";
  auto src = ResolveMaskSource(a.mask);
  if (!src.IsOk()) return Fail(cmd, src.Message());
  engine::Workload w;
  w.batch = a.batch;
  w.heads = a.heads;
  w.seq_len = src->mask.Rows();
  w.head_dim = a.head_dim;
  w.dtype = engine::DType::kF16;
  if (engine::Status s = w.Validate("workload"); !s.IsOk()) return Fail(cmd, s.Message());
  if (src->mask.Rows() != src->mask.Cols())
    return Fail(cmd, "mask: must be square, got " + std::to_string(src->mask.Rows()) + " x " +
                         std::to_string(src->mask.Cols()));

  std::string device = a.device;
  if (device == "auto") device = LocalGpuAvailable() ? "local" : "predict";
  engine::Expected<std::vector<engine::LadderRung>> rungs = engine::MakeError("not run");
  std::string where;
  nlohmann::json runs;     // the fused rung's configuration (predict: what runs)
  std::string runs_text;
  if (device == "local") {
#ifndef STOF_WITH_KERNELS
    return Fail(cmd, std::string("--device local: ") + kNoCuda + " (or --device predict)");
#else
    auto count = kernels::CudaDeviceCount();
    if (!count.IsOk()) return Fail(cmd, count.Message() + " (or --device predict)");
    auto backend = kernels::CudaBackend::Create(0);
    if (!backend.IsOk()) return Fail(cmd, backend.Message());
    auto prof = profiler::CreateProfiler();
    profiler::MeasureOptions o;
    o.runs = a.runs;
    const bool json = a.json;
    rungs = profiler::MeasureLadder(
        **backend, *prof, w, src->mask,
        [json](const std::string& part, double f) {
          if (!json && part != "done") std::fprintf(stderr, "  [%3.0f %%] %s\n", 100 * f, part.c_str());
          return true;
        },
        o);
    where = (*backend)->Name();
    // MeasureLadder's fused rung is the backend's first choice: the kernels' own (ChooseRun).
    if (auto run = engine::ChooseRun(MakeMhaRunChooser(), src->mask, w, (*backend)->Device()); run.IsOk()) {
      runs = engine::MhaRunChoiceJson(*run);
      runs_text = engine::MhaRunChoiceText(*run);
    }
#endif
  } else {
    // predict: the H100 built-in (what the CPU backend models), or a named built-in.
    engine::DeviceSpec spec = engine::CpuBackend().Device();
    if (device != "predict") {
      auto named = engine::FindBuiltinDevice(device);
      if (!named.IsOk())
        return Fail(cmd, "--device: expected auto, local, predict or a built-in device (" +
                             named.Message() + ")");
      spec = *named;
    }
    // The fused rung runs what the engine runs (engine::ChooseRun), as every view shows it.
    auto run = engine::ChooseRun(MakeMhaRunChooser(), src->mask, w, spec);
    if (!run.IsOk()) return Fail(cmd, run.Message());
    const engine::MhaConfig fused = engine::RunConfig(*run);
    rungs = engine::PredictLadder(w, src->mask, spec, &fused);
    where = "predicted: " + spec.name;
    runs = engine::MhaRunChoiceJson(*run);
    runs_text = engine::MhaRunChoiceText(*run);
  }
  if (!rungs.IsOk()) return Fail(cmd, rungs.Message());
  if (a.json) {
    PrintJson("ladder", {{"mask", {{"label", src->label}, {"hash", src->mask.HashHex()},
                         {"density", src->mask.Density()}}},
               {"workload", {{"batch", w.batch}, {"heads", w.heads}, {"seq_len", w.seq_len},
                             {"head_dim", w.head_dim}}},
               {"device", where},
               {"fused_runs", runs},
               {"rungs", engine::LadderToJson(*rungs)}});
    return kExitOk;
  }
  std::printf("mask      %s (density %s)\n", src->label.c_str(),
              Percent(src->mask.Density()).c_str());
  std::printf("workload  batch %lld, heads %lld, L %lld, d %lld, f16\n",
              static_cast<long long>(w.batch), static_cast<long long>(w.heads),
              static_cast<long long>(w.seq_len), static_cast<long long>(w.head_dim));
  std::printf("device    %s\n", where.c_str());
  if (!runs_text.empty()) std::printf("fused     %s\n", runs_text.c_str());
  std::printf("\n  %-26s %10s %10s %7s  %s\n", "rung", "us", "DRAM MB", "kernels", "");
  for (const engine::LadderRung& r : *rungs) {
    const std::string mb = std::isfinite(r.dram_bytes) ? Cell("%.2f", r.dram_bytes, 1e-6) : "-";
    std::printf("  %-26s %10.2f %10s %7s  %s\n", r.name.c_str(), r.us, mb.c_str(),
                r.kernels > 0 ? std::to_string(r.kernels).c_str() : "-",
                r.measured ? "measured" : "predicted");
  }
  std::printf("\n");
  for (const engine::LadderRung& r : *rungs) std::printf("%s: %s\n", r.name.c_str(), r.basis.c_str());
  return kExitOk;
}

}  // namespace

void AddProfileLayerCommands(CLI::App* profile, int* exit_code) {
  auto la = std::make_shared<LayerArgs>();
  la->profile.workload = "layer";
  la->profile.runs = 20;
  la->profile.activity_runs = 2;
  CLI::App* l = profile->add_subcommand(
      "layer", "One transformer layer on the GPU, segment by segment and as a whole: latency, "
               "kernels, DRAM counters and FLOP/s per segment (stof-layer-profile JSON)");
  AddGraphOptions(l, &la->src.graph, /*with_plan=*/true);
  AddMaskSourceOptions(l, &la->src.mask, MaskFileUse::kFileOrName);
  l->get_option("--seq")->description("Sequence length L (1.." +
                                       std::to_string(engine::Mask::kMaxLen) +
                                       "; default 512; with --plan: the plan's)");
  l->get_option("--mask")->description(
      "Mask: a generator name (default bigbird, with --plan the plan's) or a file");
  CLI::Option* scheme = l->add_option(
      "--scheme", la->src.graph.scheme,
      "Fusion scheme: default, chains, all, unfused, or a code / hex form");
  scheme->capture_default_str()->check(NonEmpty("a fusion scheme"));
  CLI::Option* plan = l->add_option(
      "--plan", la->src.plan,
      "Profile a plan's layer (plan.json): its scheme, templates and parameters; model, batch, "
      "L and mask default to the plan's");
  plan->excludes(scheme)->check(NonEmpty());
  l->add_option("--out", la->out, "Write the stof-layer-profile JSON here")->check(NonEmpty());
  l->add_option("--weight-seed", la->weight_seed, "Seed of the random weights and input")
      ->capture_default_str()
      ->check(SeedValue());
  AddCommonOptions(l, &la->profile);
  l->callback([la, exit_code, l] {
    la->src.batch_given = l->get_option("--batch")->count() > 0;
    la->src.seq_given = l->get_option("--seq")->count() > 0;
    *exit_code = RunProfileLayer(*la);
  });

  auto da = std::make_shared<LadderArgs>();
  CLI::App* d = profile->add_subcommand(
      "ladder", "The attention block's four exact variants (unfused, sd, sdf, fully fused): "
                "measured on the GPU, or predicted by the analytical model");
  AddMaskSourceOptions(d, &da->mask, MaskFileUse::kNone);
  AddWorkloadOptions(d, &da->batch, &da->heads, &da->head_dim, "--head-dim,--dim");
  d->add_option("--device", da->device,
                DeviceOptionHelp("auto, local (measured), a built-in or predict (predicted)"))
      ->capture_default_str();
  d->add_option("--runs", da->runs, "Timed runs per rung (local; the median is reported)")
      ->capture_default_str()
      ->check(IntRange(1, std::numeric_limits<int>::max()));
  d->add_flag("--json", da->json, "Print JSON");
  d->callback([da, exit_code] { *exit_code = RunProfileLadder(*da); });
}

}  // namespace stof::app
