// `stof bench chain`: MCFuser's GEMM chains (Table II, G1-G12, or any --shape) on our fused
// kernel against two cuBLASLt GEMMs back to back, both through CudaBackend and timed over a
// CUDA graph (same launch overhead on both sides). Every supported tile setting is measured;
// the report gives the kernel's default, the best measured, and the pick of MCFuser's
// analytical model (engine/mcfuser) among the supported settings with its measured time, so
// the model's ranking can be judged. Our output is checked against cuBLAS's for each setting.
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
#endif

namespace stof::app {

namespace {

struct ChainBenchArgs {
  std::vector<std::string> shapes;  // preset names; empty = G1..G12
  int repeats = 50;
  bool json = false;
};

#ifdef STOF_WITH_KERNELS
std::vector<float> Random(int64_t n, uint64_t seed, double scale) {
  return engine::UniformHalfValues(n, seed, -scale, scale);
}

int RunChain(const ChainBenchArgs& a) {
  const std::string cmd = "bench chain";
  auto backend = kernels::CudaBackend::Create(0);
  if (!backend.IsOk()) return Fail(cmd, backend.Message());
  engine::Backend& b = **backend;
  const engine::DeviceSpec dev = b.Device();
  std::vector<engine::GemmChainPreset> presets;
  if (a.shapes.empty()) {
    presets = engine::GemmChainPresets();
  } else {
    for (const auto& n : a.shapes) {
      auto s = engine::FindGemmChainPreset(n);
      if (!s.IsOk()) return Fail(cmd, "--shape: " + s.Message());
      presets.push_back({n, *s});
    }
  }
  engine::MeasureOptions mo;
  mo.graph = true, mo.repeats = a.repeats, mo.max_seconds = 2;
  nlohmann::json rows = nlohmann::json::array();
  if (!a.json)
    std::printf("shape  (batch,M,N,K,H)            cuBLAS us  default us  best us   best tiles"
                "           model pick (us)          best/cuBLAS\n");
  for (const auto& p : presets) {
    const auto& s = p.shape;
    const int64_t na = s.batch * s.m * s.k, nb = s.batch * s.k * s.n, nd = s.batch * s.n * s.h;
    const int64_t nc = s.batch * s.m * s.n, ne = s.batch * s.m * s.h;
    std::vector<void*> bufs;
    const auto alloc = [&](int64_t n, const std::vector<float>* init) -> void* {
      auto ptr = b.Allocate(static_cast<size_t>(n) * 2);
      if (!ptr.IsOk()) return nullptr;
      bufs.push_back(*ptr);
      if (init) {
        auto host = engine::PackForBackend(*init, engine::DType::kF16);
        if (!b.CopyToDevice(*ptr, host.data(), host.size()).IsOk()) return nullptr;
      }
      return *ptr;
    };
    const auto A = Random(na, 1, 1.0), B = Random(nb, 2, 1.0 / std::sqrt(double(s.k)));
    const auto D = Random(nd, 3, 1.0 / std::sqrt(double(s.n)));
    void *da = alloc(na, &A), *db = alloc(nb, &B), *dd = alloc(nd, &D);
    void *dc = alloc(nc, nullptr), *de = alloc(ne, nullptr), *dref = alloc(ne, nullptr);
    const auto free_all = [&] {
      for (void* x : bufs) b.Free(x);
    };
    if (!da || !db || !dd || !dc || !de || !dref) {
      free_all();
      return Fail(cmd, p.name + ": out of device memory");
    }
    // cuBLAS back to back: C = A B, E = C D (C rounded to fp16 in between, as ours).
    const auto cublas = [&](void* stream) -> engine::Status {
      engine::BatchedGemmCall g1;
      g1.batch = s.batch, g1.m = s.m, g1.n = s.n, g1.k = s.k, g1.a = da, g1.b = db, g1.c = dc;
      g1.stream = stream;
      STOF_RETURN_IF_ERROR(b.RunBatchedGemm(g1));
      engine::BatchedGemmCall g2;
      g2.batch = s.batch, g2.m = s.m, g2.n = s.h, g2.k = s.n, g2.a = dc, g2.b = dd, g2.c = dref;
      g2.stream = stream;
      return b.RunBatchedGemm(g2);
    };
    auto base = b.Measure(cublas, mo);
    if (!base.IsOk()) {
      free_all();
      return Fail(cmd, p.name + ": cuBLAS: " + base.Message());
    }
    std::vector<uint8_t> ref_bytes(static_cast<size_t>(ne) * 2), got_bytes(ref_bytes.size());
    if (auto st = b.CopyToHost(ref_bytes.data(), dref, ref_bytes.size()); !st.IsOk()) {
      free_all();
      return Fail(cmd, p.name + ": " + st.Message());
    }
    const auto ref = engine::UnpackFromBackend(ref_bytes, engine::DType::kF16);
    kernels::GemmChainArgs args;
    args.batch = s.batch, args.m = s.m, args.n = s.n, args.k = s.k, args.h = s.h;
    const auto supported = kernels::SupportedGemmChainParams(args, dev.smem_per_block_bytes);
    nlohmann::json settings = nlohmann::json::array();
    double best = 0, dflt = 0, model_best_est = 0, model_pick_us = 0, worst_err = 0;
    std::string best_name, model_name;
    for (size_t i = 0; i < supported.size(); ++i) {
      const auto& sp = supported[i];
      engine::GemmChainCall c;
      c.batch = s.batch, c.m = s.m, c.n = s.n, c.k = s.k, c.h = s.h;
      c.a = da, c.b = db, c.d = dd, c.e = de;
      c.params = {{"bm", sp.bm}, {"bn", sp.bn}, {"bk", sp.bk}, {"bh", sp.bh}, {"warps", sp.warps}};
      auto m = b.Measure([&](void* stream) {
        c.stream = stream;
        return b.RunGemmChain(c);
      }, mo);
      if (!m.IsOk()) {
        free_all();
        return Fail(cmd, p.name + " " + kernels::GemmChainParamsName(sp) + ": " + m.Message());
      }
      // Poison-free check: E is overwritten by every run, so a stale E would equal the
      // previous setting's; the reference is cuBLAS's (C rounded to fp16 the same way).
      if (auto st = b.CopyToHost(got_bytes.data(), de, got_bytes.size()); !st.IsOk()) {
        free_all();
        return Fail(cmd, p.name + ": " + st.Message());
      }
      const auto got = engine::UnpackFromBackend(got_bytes, engine::DType::kF16);
      double scale = 1e-3, err = 0;
      for (size_t j = 0; j < ref.size(); ++j) scale = std::max(scale, double(std::fabs(ref[j])));
      for (size_t j = 0; j < ref.size(); ++j)
        err = std::max(err, std::isnan(got[j]) ? 1e9 : double(std::fabs(got[j] - ref[j])));
      err /= scale;
      worst_err = std::max(worst_err, err);
      engine::Candidate cand{s, engine::ChainKernelExpr(),
                             engine::ChainTiles{sp.bm, sp.bn, sp.bk, sp.bh}};
      auto est = engine::EstimateChain(cand, dev);
      const double est_us = est.IsOk() ? est->seconds * 1e6 : 0;
      settings.push_back({{"tiles", kernels::GemmChainParamsName(sp)}, {"us", m->median_us},
                          {"model_us", est_us}, {"max_error", err}});
      if (i == 0) dflt = m->median_us;
      if (best == 0 || m->median_us < best) best = m->median_us, best_name = kernels::GemmChainParamsName(sp);
      if (est.IsOk() && (model_best_est == 0 || est_us < model_best_est)) {
        model_best_est = est_us;
        model_pick_us = m->median_us;
        model_name = kernels::GemmChainParamsName(sp);
      }
    }
    free_all();
    double ref_max = 0;
    for (float v : ref) ref_max = std::max(ref_max, double(std::fabs(v)));
    rows.push_back({{"shape", p.name}, {"batch", s.batch}, {"ref_max_abs", ref_max}, {"m", s.m}, {"n", s.n}, {"k", s.k},
                    {"h", s.h}, {"cublas_us", base->median_us}, {"default_us", dflt},
                    {"best_us", best}, {"best_tiles", best_name}, {"model_pick", model_name},
                    {"model_pick_us", model_pick_us}, {"max_error", worst_err},
                    {"settings", settings}, {"timing", base->method}});
    if (!a.json)
      std::printf("%-6s (%lld,%lld,%lld,%lld,%lld)%*s %9.1f %11.1f %8.1f   %-20s %-18s %7.1f  %6.2fx\n",
                  p.name.c_str(), (long long)s.batch, (long long)s.m, (long long)s.n,
                  (long long)s.k, (long long)s.h, 4, "", base->median_us, dflt, best,
                  best_name.c_str(), model_name.c_str(), model_pick_us, base->median_us / best);
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
  c->add_option("--shape", a->shapes, "Preset names (G1..G12); default all")
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
