// `stof bench chain`: MCFuser's GEMM chains (Table II, G1-G12, or any --shape) on our fused
// kernel against two cuBLASLt GEMMs back to back, both through CudaBackend and timed over a
// CUDA graph (same launch overhead on both sides). Every supported tile setting is measured;
// the report gives the kernel's default, the best measured, and the pick of MCFuser's
// analytical model (engine/mcfuser) among the supported settings with its measured time, so
// the model's ranking can be judged. On a compute capability 9.0 GPU the Hopper chain
// (kernels/gemm_chain_hopper/) is measured too, at each cluster size, its default reported.
// Our output is checked against cuBLAS's for each setting.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/common/option_checks.h"
#include "engine/mcfuser/chain_kernel_map.h"
#include "engine/mcfuser/chain_model.h"
#include "engine/mcfuser/chain_shape.h"
#include "engine/run/layer_runner.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/cuda_backend.h"
#include "kernels/gemm_chain/gemm_chain.h"
#include "kernels/gemm_chain_hopper/hopper_chain.h"
#endif

namespace stof::app {

namespace {

struct ChainBenchArgs {
  std::vector<std::string> shapes;  // preset names; empty = G1..G12 (unless ffn)
  bool ffn = false;                 // the model presets' FFN grid (FfnChainPresets)
  int repeats = 50;
  bool json = false;
};

#ifdef STOF_WITH_KERNELS
std::vector<float> Random(int64_t n, uint64_t seed, double scale) {
  return engine::UniformHalfValues(n, seed, -scale, scale);
}

// The presets --shape names and, with --ffn, the FFN grid; all of Table II without either.
engine::Expected<std::vector<engine::GemmChainPreset>> ChainPresets(const ChainBenchArgs& a) {
  if (a.shapes.empty() && !a.ffn) return engine::GemmChainPresets();
  std::vector<engine::GemmChainPreset> presets;
  if (a.ffn) presets = engine::FfnChainPresets();
  for (const auto& n : a.shapes) {
    auto s = engine::FindGemmChainPreset(n);
    if (!s.IsOk()) return engine::Error{"--shape: " + s.Message()};
    presets.push_back({n, *s});
  }
  return presets;
}

// One shape's fp16 device buffers, freed together when the shape is done or fails: A, B and D
// seeded, C (between the two cuBLAS GEMMs), E (ours) and the reference E (cuBLAS's).
struct ChainBuffers {
  ChainBuffers(engine::Backend& backend_in, const engine::GemmChainShape& s) : backend(backend_in) {
    const int64_t na = s.batch * s.m * s.k, nb = s.batch * s.k * s.n, nd = s.batch * s.n * s.h;
    const int64_t nc = s.batch * s.m * s.n;
    ne = s.batch * s.m * s.h;
    const auto A = Random(na, 1, 1.0), B = Random(nb, 2, 1.0 / std::sqrt(double(s.k)));
    const auto D = Random(nd, 3, 1.0 / std::sqrt(double(s.n)));
    da = Alloc(na, &A), db = Alloc(nb, &B), dd = Alloc(nd, &D);
    dc = Alloc(nc, nullptr), de = Alloc(ne, nullptr), dref = Alloc(ne, nullptr);
  }
  ~ChainBuffers() {
    for (void* x : bufs) backend.Free(x);
  }
  ChainBuffers(const ChainBuffers&) = delete;
  ChainBuffers& operator=(const ChainBuffers&) = delete;
  bool Ok() const { return da && db && dd && dc && de && dref; }
  // n elements, copied from `init` when given; nullptr when allocation or copy failed.
  void* Alloc(int64_t n, const std::vector<float>* init) {
    auto ptr = backend.Allocate(static_cast<size_t>(n) * 2);
    if (!ptr.IsOk()) return nullptr;
    bufs.push_back(*ptr);
    if (init) {
      auto host = engine::PackForBackend(*init, engine::DType::kF16);
      if (!backend.CopyToDevice(*ptr, host.data(), host.size()).IsOk()) return nullptr;
    }
    return *ptr;
  }
  engine::Backend& backend;
  std::vector<void*> bufs;
  void *da = nullptr, *db = nullptr, *dd = nullptr, *dc = nullptr, *de = nullptr, *dref = nullptr;
  int64_t ne = 0;  // elements of E
};

// cuBLAS back to back: C = A B, E = C D (C rounded to fp16 in between, as ours).
engine::Expected<engine::Measurement> MeasureCublas(engine::Backend& b,
                                                    const engine::GemmChainShape& s,
                                                    const ChainBuffers& d,
                                                    const engine::MeasureOptions& mo) {
  const auto cublas = [&](void* stream) -> engine::Status {
    engine::BatchedGemmCall g1;
    g1.batch = s.batch, g1.m = s.m, g1.n = s.n, g1.k = s.k, g1.a = d.da, g1.b = d.db, g1.c = d.dc;
    g1.stream = stream;
    STOF_RETURN_IF_ERROR(b.RunBatchedGemm(g1));
    engine::BatchedGemmCall g2;
    g2.batch = s.batch, g2.m = s.m, g2.n = s.h, g2.k = s.n, g2.a = d.dc, g2.b = d.dd, g2.c = d.dref;
    g2.stream = stream;
    return b.RunBatchedGemm(g2);
  };
  return b.Measure(cublas, mo);
}

// `n` fp16 elements of the device as floats.
engine::Expected<std::vector<float>> ReadBack(engine::Backend& b, const void* from, int64_t n) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * 2);
  STOF_RETURN_IF_ERROR(b.CopyToHost(bytes.data(), from, bytes.size()));
  return engine::UnpackFromBackend(bytes, engine::DType::kF16);
}

// Our E against cuBLAS's: the largest difference over the largest |reference| (at least
// 1e-3); a NaN counts as 1e9.
double RelativeError(const std::vector<float>& got, const std::vector<float>& ref) {
  double scale = 1e-3, err = 0;
  for (size_t j = 0; j < ref.size(); ++j) scale = std::max(scale, double(std::fabs(ref[j])));
  for (size_t j = 0; j < ref.size(); ++j)
    err = std::max(err, std::isnan(got[j]) ? 1e9 : double(std::fabs(got[j] - ref[j])));
  return err / scale;
}

// The shape of a preset as kernel arguments (no buffers: the supported lists need none).
kernels::GemmChainArgs ShapeArgs(const engine::GemmChainShape& s) {
  kernels::GemmChainArgs args;
  args.batch = s.batch, args.m = s.m, args.n = s.n, args.k = s.k, args.h = s.h;
  return args;
}

// One chain call with `params` on the shape's buffers: its time and the relative error of its E
// against cuBLAS's (E is overwritten by every run, so a stale E would equal the previous
// setting's; the reference rounds C to fp16 the same way). `what` names it in errors.
struct CheckedTime {
  double us = 0, err = 0;
};

engine::Expected<CheckedTime> MeasureChecked(engine::Backend& b, const engine::GemmChainShape& s,
                                             const ChainBuffers& d, const std::vector<float>& ref,
                                             const engine::MeasureOptions& mo,
                                             const engine::ParamMap& params,
                                             const std::string& what) {
  engine::GemmChainCall c;
  c.batch = s.batch, c.m = s.m, c.n = s.n, c.k = s.k, c.h = s.h;
  c.a = d.da, c.b = d.db, c.d = d.dd, c.e = d.de;
  c.params = params;
  auto m = b.Measure([&](void* stream) {
    c.stream = stream;
    return b.RunGemmChain(c);
  }, mo);
  if (!m.IsOk()) return engine::Error{what + ": " + m.Message()};
  auto got = ReadBack(b, d.de, d.ne);
  if (!got.IsOk()) return engine::Error{what + ": " + got.Message()};
  return CheckedTime{m->median_us, RelativeError(*got, ref)};
}

// Every supported tile setting of one shape: each one's time, the model's estimate and its
// error; the default (the first), the best measured and the model's pick.
struct ChainSettings {
  nlohmann::json settings = nlohmann::json::array();
  double best = 0, dflt = 0, model_best_est = 0, model_pick_us = 0, worst_err = 0;
  std::string best_name, model_name;
};

engine::Expected<ChainSettings> MeasureSettings(engine::Backend& b, const engine::DeviceSpec& dev,
                                                const engine::GemmChainPreset& p,
                                                const ChainBuffers& d,
                                                const std::vector<float>& ref,
                                                const engine::MeasureOptions& mo) {
  const auto& s = p.shape;
  const kernels::GemmChainArgs args = ShapeArgs(s);
  const auto supported = kernels::SupportedGemmChainParams(args, dev.smem_per_block_bytes);
  ChainSettings r;
  for (size_t i = 0; i < supported.size(); ++i) {
    const auto& sp = supported[i];
    const std::string name = kernels::GemmChainParamsName(sp);
    auto m = MeasureChecked(
        b, s, d, ref, mo,
        {{"bm", sp.bm}, {"bn", sp.bn}, {"bk", sp.bk}, {"bh", sp.bh}, {"warps", sp.warps}},
        p.name + " " + name);
    if (!m.IsOk()) return m.ToStatus();
    const double err = m->err;
    r.worst_err = std::max(r.worst_err, err);
    engine::Candidate cand{s, engine::ChainKernelExpr(),
                           engine::ChainTiles{sp.bm, sp.bn, sp.bk, sp.bh}};
    auto est = engine::EstimateChain(cand, dev);
    const double est_us = est.IsOk() ? est->seconds * 1e6 : 0;
    r.settings.push_back(
        {{"tiles", name}, {"us", m->us}, {"model_us", est_us}, {"max_error", err}});
    if (i == 0) r.dflt = m->us;
    if (r.best == 0 || m->us < r.best) r.best = m->us, r.best_name = name;
    if (est.IsOk() && (r.model_best_est == 0 || est_us < r.model_best_est)) {
      r.model_best_est = est_us;
      r.model_pick_us = m->us;
      r.model_name = name;
    }
  }
  return r;
}

// The Hopper chain (kernels/gemm_chain_hopper/) at each cluster size that runs the shape and
// each reduction (push, pull), with the default split groups of that cluster (ResolveHopperChain)
// and, where those are more than one, with one group too; checked against cuBLAS like the mhnk
// settings; its default (HopperChainClusterFor, the default reduction and groups) and the best
// measured.
struct HopperSettings {
  nlohmann::json settings = nlohmann::json::array();
  double dflt_us = 0, best_us = 0, worst_err = 0;
  int dflt_cluster = 0, best_cluster = 0, dflt_splits = 1, best_splits = 1;
  std::string best_reduce;
};

engine::Expected<HopperSettings> MeasureHopper(engine::Backend& b, const engine::DeviceSpec& dev,
                                               const engine::GemmChainPreset& p,
                                               const ChainBuffers& d,
                                               const std::vector<float>& ref,
                                               const engine::MeasureOptions& mo) {
  const auto& s = p.shape;
  const kernels::GemmChainArgs args = ShapeArgs(s);
  HopperSettings r;
  r.dflt_cluster = kernels::HopperChainClusterFor(args, dev.sm_count);
  const auto dflt_reduce = kernels::HopperChainParams{}.reduce;
  for (int cluster : kernels::HopperChainClusters(args)) {
    auto l = kernels::ResolveHopperChain(args, kernels::HopperChainParams{cluster}, dev.sm_count);
    if (!l.IsOk()) return l.ToStatus();
    std::vector<int> splits{l->splits};
    if (l->splits > 1) splits.push_back(1);
    for (int groups : splits) {
      for (auto reduce : {kernels::HopperChainReduce::kPush, kernels::HopperChainReduce::kPull}) {
        const char* reduce_name = reduce == kernels::HopperChainReduce::kPush ? "push" : "pull";
        auto m = MeasureChecked(
            b, s, d, ref, mo,
            {{"cluster", cluster}, {"reduce", static_cast<int>(reduce)}, {"splits", groups}},
            p.name + " Hopper cluster " + std::to_string(cluster) + " " + reduce_name + " " +
                std::to_string(groups) + " split groups");
        if (!m.IsOk()) return m.ToStatus();
        r.worst_err = std::max(r.worst_err, m->err);
        r.settings.push_back({{"cluster", cluster}, {"reduce", reduce_name}, {"splits", groups},
                              {"us", m->us}, {"max_error", m->err}});
        if (cluster == r.dflt_cluster && reduce == dflt_reduce && groups == l->splits)
          r.dflt_us = m->us, r.dflt_splits = groups;
        if (r.best_us == 0 || m->us < r.best_us)
          r.best_us = m->us, r.best_cluster = cluster, r.best_reduce = reduce_name,
          r.best_splits = groups;
      }
    }
  }
  return r;
}

// One shape: cuBLAS, then every tile setting checked against it; the shape's row of the report.
engine::Expected<nlohmann::json> MeasureShape(engine::Backend& b, const engine::DeviceSpec& dev,
                                              const engine::GemmChainPreset& p,
                                              const engine::MeasureOptions& mo) {
  const auto& s = p.shape;
  ChainBuffers d(b, s);
  if (!d.Ok()) return engine::Error{p.name + ": out of device memory"};
  auto base = MeasureCublas(b, s, d, mo);
  if (!base.IsOk()) return engine::Error{p.name + ": cuBLAS: " + base.Message()};
  auto ref = ReadBack(b, d.dref, d.ne);
  if (!ref.IsOk()) return engine::Error{p.name + ": " + ref.Message()};
  auto set = MeasureSettings(b, dev, p, d, *ref, mo);
  if (!set.IsOk()) return set.ToStatus();
  double ref_max = 0;
  for (float v : *ref) ref_max = std::max(ref_max, double(std::fabs(v)));
  nlohmann::json row{{"shape", p.name}, {"batch", s.batch}, {"ref_max_abs", ref_max},
                     {"m", s.m}, {"n", s.n}, {"k", s.k}, {"h", s.h},
                     {"cublas_us", base->median_us}, {"timing", base->method}};
  // The mhnk kernel's columns; null (and why_not) where no tile setting runs the shape.
  const bool mhnk = !set->settings.empty();
  row["default_us"] = mhnk ? nlohmann::json(set->dflt) : nlohmann::json(nullptr);
  row["best_us"] = mhnk ? nlohmann::json(set->best) : nlohmann::json(nullptr);
  row["best_tiles"] = set->best_name, row["model_pick"] = set->model_name;
  row["model_pick_us"] = mhnk ? nlohmann::json(set->model_pick_us) : nlohmann::json(nullptr);
  row["max_error"] = set->worst_err, row["settings"] = set->settings;
  if (!mhnk) row["why_not"] = "no tile setting of the mhnk kernel runs this shape";
  // The Hopper chain's: null where the device is not a 9.0 GPU, why_not where it refuses.
  row["hopper"] = nullptr;
  if (dev.cc_major == 9 && dev.cc_minor == 0) {
    // The shape's rules only: the benchmark's buffers are not in ShapeArgs.
    if (auto ok = kernels::ResolveHopperChain(ShapeArgs(s), {}, dev.sm_count); !ok.IsOk()) {
      row["hopper"] = {{"why_not", ok.Message()}};
    } else {
      auto h = MeasureHopper(b, dev, p, d, *ref, mo);
      if (!h.IsOk()) return h.ToStatus();
      row["hopper"] = {{"default_cluster", h->dflt_cluster}, {"default_splits", h->dflt_splits},
                       {"default_us", h->dflt_us}, {"best_cluster", h->best_cluster},
                       {"best_splits", h->best_splits}, {"best_reduce", h->best_reduce},
                       {"best_us", h->best_us}, {"max_error", h->worst_err},
                       {"settings", h->settings}};
    }
  }
  return row;
}

// A shape's row of the text table (the columns RunChain's header names).
// `name_width`: the widest shape name of the run (FFN names are longer than G1..G12's).
void PrintChainRow(const nlohmann::json& r, int name_width) {
  const double cublas_us = r["cublas_us"].get<double>();
  std::printf("%-*s (%lld,%lld,%lld,%lld,%lld)%*s %9.1f", name_width,
              r["shape"].get<std::string>().c_str(), r["batch"].get<long long>(),
              r["m"].get<long long>(), r["n"].get<long long>(), r["k"].get<long long>(),
              r["h"].get<long long>(), 4, "", cublas_us);
  if (r["best_us"].is_null()) {
    std::printf(" %11s %8s   %-20s %-18s %7s  %7s", "-", "-", "-", "-", "-", "-");
  } else {
    const double best = r["best_us"].get<double>();
    std::printf(" %11.1f %8.1f   %-20s %-18s %7.1f  %6.2fx", r["default_us"].get<double>(), best,
                r["best_tiles"].get<std::string>().c_str(),
                r["model_pick"].get<std::string>().c_str(), r["model_pick_us"].get<double>(),
                cublas_us / best);
  }
  const auto& h = r["hopper"];
  if (h.is_null() || h.contains("why_not")) {
    std::printf("   %-16s\n", "-");
    return;
  }
  std::printf("   %7.1f (x%d/%d) %6.2fx\n", h["default_us"].get<double>(),
              h["default_cluster"].get<int>(), h["default_splits"].get<int>(),
              cublas_us / h["default_us"].get<double>());
}

int RunChain(const ChainBenchArgs& a) {
  const std::string cmd = "bench chain";
  auto backend = kernels::CudaBackend::Create(0);
  if (!backend.IsOk()) return Fail(cmd, backend.Message());
  engine::Backend& b = **backend;
  const engine::DeviceSpec dev = b.Device();
  auto presets = ChainPresets(a);
  if (!presets.IsOk()) return Fail(cmd, presets.Message());
  engine::MeasureOptions mo;
  mo.graph = true, mo.repeats = a.repeats, mo.max_seconds = 2;
  nlohmann::json rows = nlohmann::json::array();
  int name_width = 6;
  for (const auto& p : *presets) name_width = std::max(name_width, static_cast<int>(p.name.size()));
  if (!a.json)
    std::printf("%-*s (batch,M,N,K,H)            cuBLAS us  default us  best us   best tiles"
                "           model pick (us)          best/cuBLAS   Hopper us (cluster/groups) "
                "cuBLAS/Hopper\n",
                name_width, "shape");
  for (const auto& p : *presets) {
    auto row = MeasureShape(b, dev, p, mo);
    if (!row.IsOk()) return Fail(cmd, row.Message());
    rows.push_back(*row);
    if (!a.json) PrintChainRow(*row, name_width);
  }
  if (a.json) PrintJson("bench-chain", {{"device", b.Name()}, {"rows", rows}});
  else
    std::printf("\nTimes: CUDA graph of the work, median of up to %d replays; both sides through "
                "CudaBackend. best/cuBLAS > 1: our fused chain is faster.\n", a.repeats);
  return kExitOk;
}
#endif

}  // namespace

void RegisterBenchChainCommand(CLI::App* bench, int* exit_code) {
  auto a = std::make_shared<ChainBenchArgs>();
  CLI::App* c = bench->add_subcommand(
      "chain", "MCFuser GEMM chains (G1-G12): our fused kernel vs cuBLAS back to back");
  c->add_flag("--ffn", a->ffn,
              "The FFN of each model preset's (hidden, ffn) at 1, 16, 128, 4096 and 32768 "
              "tokens, before any --shape (the GEMM pair, without its bias and GELU epilogues "
              "on either side)");
  c->add_option("--shape", a->shapes,
                "Preset names (G1..G12, or ffn:<model preset>:<tokens>); default all of G1..G12")
      ->delimiter(',')
      ->check(Accepts([](const std::string& name) {
        auto preset = engine::FindGemmChainPreset(name);
        return preset.IsOk() ? std::string() : preset.Message();
      }));
  c->add_option("--repeats", a->repeats, "Timed replays per measurement")
      ->capture_default_str()
      ->check(IntRange(1, std::numeric_limits<int>::max()));
  c->add_flag("--json", a->json, "Print machine-readable JSON");
  c->callback([a, exit_code] {
#ifdef STOF_WITH_KERNELS
    *exit_code = RunChain(*a);
#else
    *exit_code = Fail("bench chain", "this build has no CUDA (STOF_CUDA=OFF): nothing can be timed");
#endif
  });
}

}  // namespace stof::app
