// `stof bench mha`: times our sparse MHA kernel on one mask and workload, the way the project
// times kernels (docs/architecture.md, docs/kernels.md "Benchmarking"):
//   1. choice: STOF Eq. 1 / Eq. 2 on the local device's spec, Eq. 2 ranked within the
//      block-wise kernel's preferred set (kernels/attention/prepared_mha.h), or the user's
//      overrides (--kernel native: the unfused cuBLAS + softmax baseline; --kernel sd|sdf:
//      softmax decomposition, and decomposition + fusion into the GEMMs, with --block BMxT;
//      none of the three is ever chosen by Eq. 1);
//   2. the device layout built and uploaded once (its time reported apart from the kernel's);
//   3. a reference check of that exact configuration on the same mask against
//      engine::cpu::MaskedAttention (batch 1; all heads when L <= 1024, else one), output
//      poisoned first; a failing kernel is never timed (exit 1);
//   4. the two ceilings measured in this process: DRAM bandwidth by the 256 MiB copy kernel,
//      tensor rate by a cuBLAS fp16 4096^3 GEMM (CUDA events);
//   5. timing: warm-up, then CUDA events around each launch, median of --runs (>= 50), rotating
//      over input sets (Q, K, V, O) whose total exceeds 2x the L2 (capped by free memory),
//      calling the launch function directly with the cached layout (no mask hashing per run);
//   6. DRAM bytes of one launch from the CUPTI profiler (auto range, a few runs), or why not.
// Output: a human summary or, with --json, everything. Only functional in a CUDA build; without
// CUDA the command says so and exits 1.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/profile_output.h"
#include "app/common/block_size.h"
#include "app/common/option_checks.h"
#include "engine/core/workload.h"
#include "engine/select/kernel_select.h"

#ifdef STOF_WITH_KERNELS
#include "engine/cpu/reference.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/cuda_backend.h"
#include "kernels/device_query.h"
#include "kernels/gemm/cublas_gemm.h"
#include "kernels/util/copy_kernel.h"
#include "kernels/util/device_memory.h"
#include "kernels/util/finite_check.h"
#include "kernels/util/mha_check.h"
#include "profiler/profiler.h"
#endif

namespace stof::app {

namespace {

struct BenchArgs {
  MaskSourceOptions source;
  int64_t batch = 8, heads = 12, head_dim = 64;
  std::string kernel = "auto";
  std::string block;
  int64_t warps = 0;
  int runs = 100, warmup = 10;
  uint64_t input_seed = 1;
  bool json = false, no_counters = false;
  // `stof profile mha`: the same choice, reference check and rotating inputs, then one full
  // profiler measurement (profile options) instead of the benchmark's latency and floor.
  bool profile_mode = false;
  ProfileArgs profile;
};

constexpr int kMinRuns = 50;  // the median of fewer runs is not reported (--runs)

#ifdef STOF_WITH_KERNELS

// Tolerance of the reference check: the GPU tests' rule (kernels/util/mha_check.h).
constexpr double kTolerance = kernels::kMhaTolerance;
constexpr size_t kCopyBytes = size_t{256} << 20;
constexpr int64_t kGemmSize = 4096;
// Left free beside the rotating sets (cuBLAS workspace, CUPTI buffers, the layout).
constexpr int64_t kMemoryMargin = int64_t{1} << 30;

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Bytes(double b) {
  if (b >= 1e9) return Fmt("%.3f GB", b * 1e-9);
  if (b >= 1e6) return Fmt("%.3f MB", b * 1e-6);
  if (b >= 1e3) return Fmt("%.3f kB", b * 1e-3);
  return Fmt("%.0f B", b);
}

struct CheckResult {
  engine::Workload workload;
  double row_err = 0, global_err = 0;
  int64_t worst_row = -1, worst_col = -1;
  double worst_out = 0, worst_ref = 0;
  int64_t non_finite = 0, nonzero_empty_rows = 0;
  double kernel_ms = 0, reference_ms = 0;
  bool passed = false;
};

// The reference check of `mha` on a reduced problem: batch 1, all heads when L <= 1024 (else
// one), fresh inputs, output poisoned with NaN, then compared with MaskedAttention per head.
engine::Expected<CheckResult> ReferenceCheck(kernels::CudaBackend& backend,
                                             const kernels::PreparedMha& mha,
                                             const engine::Mask& mask,
                                             const engine::Workload& full, uint64_t seed) {
  CheckResult c;
  c.workload = full;
  c.workload.batch = 1;
  c.workload.heads = full.seq_len <= 1024 ? full.heads : 1;
  const engine::Workload& w = c.workload;
  const int64_t elems = w.batch * w.heads * w.seq_len * w.head_dim;
  const size_t bytes = static_cast<size_t>(elems) * 2;
  const kernels::MhaInputs in = kernels::RandomInputs(elems, seed);

  engine::BackendBuffers bufs(backend);
  void* ptr[4];
  for (void*& p : ptr) {
    auto a = bufs.Add(bytes);
    if (!a.IsOk()) return engine::Error{"reference check: " + a.Message()};
    p = *a;
  }
  STOF_RETURN_IF_ERROR(backend.CopyToDevice(ptr[0], in.q.data(), bytes));
  STOF_RETURN_IF_ERROR(backend.CopyToDevice(ptr[1], in.k.data(), bytes));
  STOF_RETURN_IF_ERROR(backend.CopyToDevice(ptr[2], in.v.data(), bytes));
  STOF_RETURN_IF_ERROR(kernels::PoisonBuffer(ptr[3], bytes));
  STOF_RETURN_IF_ERROR(backend.Synchronize());
  const auto t0 = Clock::now();
  STOF_RETURN_IF_ERROR(mha.Launch(w, ptr[0], ptr[1], ptr[2], ptr[3], nullptr));
  STOF_RETURN_IF_ERROR(backend.Synchronize());
  c.kernel_ms = MsSince(t0);
  auto bad = kernels::CountNonFinite(ptr[3], elems, engine::DType::kF16);
  if (!bad.IsOk()) return engine::Error{"reference check: " + bad.Message()};
  c.non_finite = *bad;
  std::vector<uint16_t> out(static_cast<size_t>(elems));
  STOF_RETURN_IF_ERROR(backend.CopyToHost(out.data(), ptr[3], bytes));

  const auto t1 = Clock::now();
  std::vector<float> ref;
  if (engine::Status s = kernels::ThreadedReference(in, w, mask, ref); !s.IsOk())
    return engine::Error{"reference check: " + s.Message()};
  c.reference_ms = MsSince(t1);
  const kernels::MhaError e = kernels::CompareMha(out, ref, w, kernels::EmptyRows(mask));
  c.row_err = e.row_err;
  c.global_err = e.global_err;
  c.worst_row = e.worst_row;
  c.worst_col = e.worst_col;
  c.worst_out = e.worst_out;
  c.worst_ref = e.worst_ref;
  c.nonzero_empty_rows = e.nonzero_empty_rows;
  c.passed = c.non_finite == 0 && c.nonzero_empty_rows == 0 && c.row_err < kTolerance;
  return c;
}

struct Ceilings {
  double copy_us = 0, dram_bytes_per_s = 0;
  double gemm_us = 0, tensor_flops_per_s = 0, gemm_check_err = 0;
};

// The two ceilings of the floor, measured in this process with CUDA events (median of 20).
engine::Expected<Ceilings> MeasureCeilings() {
  Ceilings c;
  {
    auto w = kernels::CopyWorkload::Create(kCopyBytes);
    if (!w.IsOk()) return engine::Error{"bandwidth calibration: " + w.Message()};
    kernels::CopyWorkload* wl = w->get();
    auto t = profiler::TimeWithCudaEvents([wl](void* s) { return wl->Run(s); }, 3, 20);
    if (!t.IsOk()) return engine::Error{"bandwidth calibration: " + t.Message()};
    auto bad = wl->Verify();
    if (!bad.IsOk()) return engine::Error{"bandwidth calibration: " + bad.Message()};
    if (*bad != 0)
      return engine::Error{"bandwidth calibration: the copy kernel's output is wrong (" +
                           std::to_string(*bad) + " bytes differ)"};
    c.copy_us = t->median_us;
    c.dram_bytes_per_s = wl->MinBytes() / (t->median_us * 1e-6);
  }
  {
    auto w = kernels::GemmWorkload::Create(kGemmSize, kGemmSize, kGemmSize);
    if (!w.IsOk()) return engine::Error{"tensor-rate calibration: " + w.Message()};
    kernels::GemmWorkload* wl = w->get();
    auto t = profiler::TimeWithCudaEvents([wl](void* s) { return wl->Run(s); }, 3, 20);
    if (!t.IsOk()) return engine::Error{"tensor-rate calibration: " + t.Message()};
    auto err = wl->Verify();
    if (!err.IsOk()) return engine::Error{"tensor-rate calibration: " + err.Message()};
    c.gemm_check_err = *err;
    if (!(*err < kTolerance))
      return engine::Error{"tensor-rate calibration: the cuBLAS GEMM's output is wrong (relative "
                           "error " + Fmt("%.2e", *err) + ")"};
    c.gemm_us = t->median_us;
    c.tensor_flops_per_s = wl->Flops() / (t->median_us * 1e-6);
  }
  return c;
}

struct Rotation {
  int64_t set_bytes = 0, sets_wanted = 0, sets = 0, total_bytes = 0, l2_bytes = 0;
  int64_t free_bytes = 0;
  bool capped = false;
};

nlohmann::json ChoiceJson(const kernels::MhaChoice& c) {
  const engine::Eq1Result& e1 = c.selection.eq1;
  nlohmann::json j = {
      {"kernel", kernels::MhaChoiceKernelName(c)},
      {"block_m", c.config.block_m},
      {"block_n", c.config.block_n},
      {"num_warps", c.config.num_warps},
      {"kernel_source", c.kernel_source},
      {"params_source", c.params_source},
      {"fell_back", c.fell_back},
      {"eq2_score", c.score},
      {"eq1",
       {{"n", e1.n},
        {"valid_blocks_16x16", e1.valid_blocks},
        {"valid_ratio", e1.valid_ratio},
        {"threshold", std::isfinite(e1.threshold) ? nlohmann::json(e1.threshold)
                                                   : nlohmann::json("-inf")},
        {"kernel", engine::MhaKernelName(e1.kernel)}}},
      {"eq2_pick",
       {{"block_m", c.eq2_pick_block_m},
        {"block_n", c.eq2_pick_block_n},
        {"num_warps", c.eq2_pick_num_warps}}}};
  if (c.recompose)
    j["recompose"] = {{"variant", kernels::RecomposeVariantName(c.recompose_variant)},
                      {"sub_len", c.recompose_params.sub_len},
                      {"block_m", c.recompose_params.block_m}};
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

// " BMxT = ..." for sd/sdf, " BMxBN, W warps (source)" for the block-wise kernel, else "".
std::string ChoiceDetail(const kernels::MhaChoice& c) {
  if (c.recompose)
    return " BMxT " + std::to_string(c.recompose_params.block_m) + "x" +
           std::to_string(c.recompose_params.sub_len) + " (" + c.params_source + ")";
  if (!c.native && c.config.kernel == engine::MhaKernel::kBlockWise)
    return " " + std::to_string(c.config.block_m) + "x" + std::to_string(c.config.block_n) +
           ", " + std::to_string(c.config.num_warps) + " warps (" + c.params_source + ")";
  return std::string();
}

// `stof profile mha` after the reference check: one profiler measurement of `work` (rotating
// inputs) with the profile options, printed or exported like `profile copy|gemm`. Succeeds
// only when the latency was measured and no output of the measured launches is non-finite.
int ProfileMhaRun(const std::string& cmd, const ProfileArgs& p, const profiler::WorkFn& work,
                  const kernels::PreparedMha& mha, const engine::Workload& w,
                  const engine::DeviceSpec& spec, const std::string& label,
                  const nlohmann::json& check,
                  const std::function<engine::Expected<int64_t>()>& count_non_finite) {
  profiler::MeasureOptions o = MeasureOptionsFrom(p, spec);
  o.label = "sparse MHA " + label + ", B " + std::to_string(w.batch) + ", H " +
            std::to_string(w.heads) + ", d " + std::to_string(w.head_dim);
  o.flop_count = mha.UsefulFlops(w);
  o.min_bytes = 4.0 * static_cast<double>(w.batch * w.heads * w.seq_len * w.head_dim) * 2.0;
  auto result = profiler::CreateProfiler()->Measure(work, o);
  if (!result.IsOk()) return Fail(cmd, result.Message());
  profiler::ProfileResult& r = *result;
  const kernels::MhaChoice& c = mha.Choice();
  r.notes.push_back(std::string("kernel: ") + kernels::MhaChoiceKernelName(c) +
                    ChoiceDetail(c));
  r.notes.push_back("reference check before measuring: worst row error " +
                    Fmt("%.3e", check.value("row_err", 0.0)) + " (tolerance 2e-3), passed");
  auto bad = count_non_finite();
  if (!bad.IsOk()) return Fail(cmd, bad.Message());
  const std::string check_note =
      "output check: " + std::to_string(*bad) + " non-finite values in the measured launches' outputs";
  r.notes.push_back(check_note);
  return ReportProfile(cmd, p, r, *bad == 0, check_note);
}

int RunBench(const BenchArgs& a) {
  const std::string cmd = a.profile_mode ? "profile mha" : "bench mha";
  kernels::MhaRequest request;
  auto kernel_request = kernels::ParseMhaKernelRequest(a.kernel);
  if (!kernel_request.IsOk()) return Fail(cmd, "--kernel: " + kernel_request.Message());
  request.kernel = *kernel_request;
  if (!a.block.empty()) {
    auto b = ParseBlockSize(a.block, "--block");
    if (!b.IsOk()) return Fail(cmd, b.Message());
    request.block_m = b->block_m;
    request.block_n = b->block_n;
  }
  request.num_warps = a.warps;  // one of the values --warps' OneOf check admits

  auto src = ResolveMaskSource(a.source);
  if (!src.IsOk()) return Fail(cmd, src.Message());
  const engine::Mask& mask = src->mask;
  if (mask.Rows() != mask.Cols())
    return Fail(cmd, "mask: must be square, got " + std::to_string(mask.Rows()) + " x " +
                         std::to_string(mask.Cols()));
  engine::Workload w;
  w.batch = a.batch;
  w.heads = a.heads;
  w.seq_len = mask.Rows();
  w.head_dim = a.head_dim;
  w.dtype = engine::DType::kF16;
  if (engine::Status s = w.Validate("workload"); !s.IsOk()) return Fail(cmd, s.Message());
  if (w.head_dim != 64 && w.head_dim != 128)
    return Fail(cmd, "--dim: the sparse MHA kernels support 64 or 128, got " +
                         std::to_string(w.head_dim));

  auto count = kernels::CudaDeviceCount();
  if (!count.IsOk()) return Fail(cmd, count.Message());
  auto backend_or = kernels::CudaBackend::Create(0);
  if (!backend_or.IsOk()) return Fail(cmd, backend_or.Message());
  kernels::CudaBackend& backend = **backend_or;
  const engine::DeviceSpec spec = backend.Device();

  // 1-2. Choice and layout.
  const auto t_sel = Clock::now();
  auto choice = kernels::ChooseMhaConfig(mask, w, spec, request);
  if (!choice.IsOk()) return Fail(cmd, choice.Message());
  const double select_ms = MsSince(t_sel);
  auto prepared = kernels::PreparedMha::Create(mask, w, *choice);
  if (!prepared.IsOk()) return Fail(cmd, prepared.Message());
  const kernels::PreparedMha& mha = **prepared;
  if (!a.json) {
    const kernels::MhaChoice& c = mha.Choice();
    std::printf("mask        %s (nnz %lld, density %s)\n", src->label.c_str(),
                static_cast<long long>(mha.Nnz()), Percent(mask.Density()).c_str());
    std::printf("workload    batch %lld, heads %lld, L %lld, d %lld, f16\n",
                static_cast<long long>(w.batch), static_cast<long long>(w.heads),
                static_cast<long long>(w.seq_len), static_cast<long long>(w.head_dim));
    std::printf("device      %s (%d SMs, L2 %s)\n", backend.Name().c_str(), spec.sm_count,
                Bytes(static_cast<double>(spec.l2_bytes)).c_str());
    if (const kernels::RecomposedMha* rec = mha.Recomposed())
      std::printf("kernel      %s (%s; BM x T %d x %d from %s; %lld tiles per head; workspace "
                  "%s)\n",
                  kernels::RecomposeVariantName(rec->Variant()),
                  rec->Variant() == kernels::RecomposeVariant::kDecomposed
                      ? "softmax decomposed: cuBLAS Q K^T, LS, IR, GS kernels, cuBLAS P V"
                      : "softmax decomposed + fused: Q K^T + LS kernel, IR, GS + P V kernel",
                  rec->Params().block_m, rec->Params().sub_len, c.params_source.c_str(),
                  static_cast<long long>(rec->TilesPerHead()),
                  Bytes(static_cast<double>(rec->WorkspaceBytes())).c_str());
    else if (c.native)
      std::printf("kernel      native (unfused: cuBLAS Q K^T, scale+mask+softmax kernel, cuBLAS "
                  "P V; S workspace %s)\n",
                  Bytes(static_cast<double>(mha.Native()->WorkspaceBytes())).c_str());
    else if (c.config.kernel == engine::MhaKernel::kRowWise)
      std::printf("kernel      row_wise (kernel from %s)\n", c.kernel_source.c_str());
    else
      std::printf("kernel      block_wise %lldx%lld, %lld warps (kernel from %s, parameters from "
                  "%s)\n",
                  static_cast<long long>(c.config.block_m), static_cast<long long>(c.config.block_n),
                  static_cast<long long>(c.config.num_warps), c.kernel_source.c_str(),
                  c.params_source.c_str());
    std::printf("            Eq. 1 threshold %s -> %s; Eq. 2 pick %lldx%lld, %lld warps\n",
                Fmt("%.4f", c.selection.eq1.threshold).c_str(),
                engine::MhaKernelName(c.selection.eq1.kernel),
                static_cast<long long>(c.eq2_pick_block_m),
                static_cast<long long>(c.eq2_pick_block_n),
                static_cast<long long>(c.eq2_pick_num_warps));
    if (!c.note.empty()) std::printf("note        %s\n", c.note.c_str());
    std::fflush(stdout);
  }

  // 3. Reference check before any timing.
  auto check = ReferenceCheck(backend, mha, mask, w, a.input_seed);
  if (!check.IsOk()) return Fail(cmd, check.Message());
  const CheckResult& chk = *check;
  auto check_json = [&] {
    return nlohmann::json{{"batch", chk.workload.batch},
                          {"heads", chk.workload.heads},
                          {"tolerance", kTolerance},
                          {"row_err", chk.row_err},
                          {"global_err", chk.global_err},
                          {"worst_row", chk.worst_row},
                          {"worst_col", chk.worst_col},
                          {"worst_out", chk.worst_out},
                          {"worst_ref", chk.worst_ref},
                          {"non_finite", chk.non_finite},
                          {"nonzero_empty_rows", chk.nonzero_empty_rows},
                          {"reference_ms", chk.reference_ms},
                          {"passed", chk.passed}};
  };
  if (!a.json) {
    std::printf("check       %s: batch 1, %lld head(s), worst row error %s (tolerance %s), "
                "global %s, %lld non-finite, %lld non-zero empty rows\n",
                chk.passed ? "passed" : "FAILED", static_cast<long long>(chk.workload.heads),
                Fmt("%.3e", chk.row_err).c_str(), Fmt("%.0e", kTolerance).c_str(),
                Fmt("%.3e", chk.global_err).c_str(), static_cast<long long>(chk.non_finite),
                static_cast<long long>(chk.nonzero_empty_rows));
    std::fflush(stdout);
  }
  if (!chk.passed) {
    if (a.json) PrintJson({{"choice", ChoiceJson(mha.Choice())}, {"check", check_json()}});
    return Fail(cmd, "reference check failed (worst row error " + Fmt("%.3e", chk.row_err) +
                         ", " + std::to_string(chk.non_finite) + " non-finite, " +
                         std::to_string(chk.nonzero_empty_rows) +
                         " non-zero empty rows): not timing a wrong kernel");
  }

  // 4. Ceilings.
  // (The profiler's summary uses the device's peaks instead, like `profile copy|gemm`.)
  engine::Expected<Ceilings> ceil = Ceilings{};
  if (!a.profile_mode) ceil = MeasureCeilings();
  if (!ceil.IsOk()) return Fail(cmd, ceil.Message());

  // 5. Rotating input sets.
  const int64_t elems = w.batch * w.heads * w.seq_len * w.head_dim;
  const size_t tensor_bytes = static_cast<size_t>(elems) * 2;
  Rotation rot;
  rot.set_bytes = 4 * static_cast<int64_t>(tensor_bytes);
  rot.l2_bytes = spec.l2_bytes;
  rot.sets_wanted = std::max<int64_t>(2, (2 * rot.l2_bytes + rot.set_bytes - 1) / rot.set_bytes);
  auto mem = kernels::QueryDeviceMemory();
  if (!mem.IsOk()) return Fail(cmd, mem.Message());
  rot.free_bytes = mem->free_bytes;
  const int64_t fit = std::max<int64_t>(0, mem->free_bytes - kMemoryMargin) / rot.set_bytes;
  rot.sets = std::min(rot.sets_wanted, fit);
  rot.capped = rot.sets < rot.sets_wanted;
  if (rot.sets < 1)
    return Fail(cmd, "not enough device memory for one input set (" +
                         Bytes(static_cast<double>(rot.set_bytes)) + "; " +
                         Bytes(static_cast<double>(mem->free_bytes)) + " free)");
  rot.total_bytes = rot.sets * rot.set_bytes;
  struct Set {
    void *q, *k, *v, *o;
  };
  std::vector<Set> sets;
  engine::BackendBuffers bufs(backend);
  {
    const std::vector<uint16_t> hq = kernels::RandomHalves(elems, a.input_seed * 7 + 11);
    const std::vector<uint16_t> hk = kernels::RandomHalves(elems, a.input_seed * 7 + 12);
    const std::vector<uint16_t> hv = kernels::RandomHalves(elems, a.input_seed * 7 + 13);
    for (int64_t i = 0; i < rot.sets; ++i) {
      Set s{};
      void** ptrs[4] = {&s.q, &s.k, &s.v, &s.o};
      for (void** p : ptrs) {
        auto b = bufs.Add(tensor_bytes);
        if (!b.IsOk()) return Fail(cmd, "input set " + std::to_string(i) + ": " + b.Message());
        *p = *b;
      }
      engine::Status st = backend.CopyToDevice(s.q, hq.data(), tensor_bytes);
      if (st.IsOk()) st = backend.CopyToDevice(s.k, hk.data(), tensor_bytes);
      if (st.IsOk()) st = backend.CopyToDevice(s.v, hv.data(), tensor_bytes);
      if (st.IsOk()) st = kernels::PoisonBuffer(s.o, tensor_bytes);
      if (!st.IsOk()) return Fail(cmd, st.Message());
      sets.push_back(s);
    }
    if (engine::Status st = backend.Synchronize(); !st.IsOk()) return Fail(cmd, st.Message());
  }
  size_t next = 0;
  const kernels::PreparedMha* mp = &mha;
  profiler::WorkFn work = [&sets, &next, mp](void* stream) {
    const Set& s = sets[next];
    next = (next + 1) % sets.size();
    return mp->Launch(s.q, s.k, s.v, s.o, stream);
  };
  if (a.profile_mode) {
    return ProfileMhaRun(cmd, a.profile, work, mha, w, spec, src->label, check_json(), [&] {
      int64_t bad_total = 0;
      for (const Set& s : sets) {
        auto bad = kernels::CountNonFinite(s.o, elems, engine::DType::kF16);
        if (!bad.IsOk()) return engine::Expected<int64_t>(engine::Error{bad.Message()});
        bad_total += *bad;
      }
      return engine::Expected<int64_t>(bad_total);
    });
  }
  auto lat = profiler::TimeWithCudaEvents(work, a.warmup, a.runs);
  if (!lat.IsOk()) return Fail(cmd, lat.Message());
  // Every set was written by the timed launches: nothing may be NaN (a launch that faulted
  // silently would leave the poison).
  int64_t timed_non_finite = 0;
  for (size_t i = 0; i < std::min<size_t>(sets.size(), static_cast<size_t>(a.warmup + a.runs));
       ++i) {
    auto bad = kernels::CountNonFinite(sets[i].o, elems, engine::DType::kF16);
    if (!bad.IsOk()) return Fail(cmd, bad.Message());
    timed_non_finite += *bad;
  }
  if (timed_non_finite != 0)
    return Fail(cmd, "timed outputs hold " + std::to_string(timed_non_finite) +
                         " non-finite values: a timed launch did not complete");

  // 6. DRAM bytes of one launch (CUPTI range profiler, auto range: one range per kernel).
  const double useful_flops = mha.UsefulFlops(w);
  const double kernel_flops = mha.KernelFlops(w);
  const double min_bytes = 4.0 * static_cast<double>(tensor_bytes);
  nlohmann::json counters;
  std::string counters_why;
  std::optional<double> dram_read, dram_write, lts_bytes, tensor_pipe, kernel_activity_us;
  std::string activity_why;
  if (a.no_counters) {
    counters_why = activity_why = "skipped (--no-counters)";
  } else {
    auto prof = profiler::CreateProfiler();
    profiler::MeasureOptions o;
    o.label = "sparse MHA " + src->label;
    o.warmup = 1;
    o.runs = 3;
    o.activity_runs = 1;
    o.range_mode = profiler::RangeMode::kAuto;
    o.flop_count = useful_flops;
    o.min_bytes = min_bytes;
    o.peak_dram_bytes_per_s = ceil->dram_bytes_per_s;
    o.peak_flops_per_s = ceil->tensor_flops_per_s;
    auto r = prof->Measure(work, o);
    if (r.IsOk()) {
      kernel_activity_us = r->summary.kernel_time_us;
      if (!r->availability.activity) activity_why = r->availability.activity_why_not;
    } else {
      activity_why = "profiler: " + r.Message();
    }
    if (!r.IsOk()) {
      counters_why = "profiler: " + r.Message();
    } else if (!r->availability.range) {
      counters_why = r->availability.range_why_not;
    } else {
      dram_read = r->summary.dram_bytes_read;
      dram_write = r->summary.dram_bytes_write;
      lts_bytes = r->summary.lts_bytes;
      for (const profiler::MetricInfo& m : r->metrics)
        if (m.alias == profiler::kTensorPipeAlias && m.available) tensor_pipe = r->SumMetric(m.name);
      if (!dram_read || !dram_write) counters_why = "the DRAM byte counters were not collected";
    }
  }

  const double median_s = lat->median_us * 1e-6;
  const double floor_bytes_s = min_bytes / ceil->dram_bytes_per_s;
  const double floor_flops_s = kernel_flops / ceil->tensor_flops_per_s;
  const double floor_s = std::max(floor_bytes_s, floor_flops_s);
  const double eff_tflops = useful_flops / median_s * 1e-12;
  const double ratio = median_s / floor_s;

  if (a.json) {
    const kernels::LayoutPrepTiming& pt = mha.Timing();
    nlohmann::json j;
    j["command"] = "bench mha";
    j["mask"] = {{"source", src->label},
                 {"seq_len", w.seq_len},
                 {"nnz", mha.Nnz()},
                 {"density", mask.Density()},
                 {"hash", mask.HashHex()}};
    j["workload"] = {{"batch", w.batch},
                     {"heads", w.heads},
                     {"seq_len", w.seq_len},
                     {"head_dim", w.head_dim},
                     {"dtype", "f16"}};
    j["device"] = {{"name", backend.Name()},
                   {"sm_count", spec.sm_count},
                   {"l2_bytes", spec.l2_bytes},
                   {"peak_dram_bytes_per_s", spec.dram_bytes_per_s},
                   {"peak_fp16_tensor_flops", spec.fp16_tensor_flops}};
    j["choice"] = ChoiceJson(mha.Choice());
    j["layout"] = {{"valid_blocks", mha.ValidBlocks()},
                   {"part_blocks", mha.PartBlocks()},
                   {"device_bytes", mha.DeviceBytes()},
                   {"select_ms", select_ms},
                   {"host_build_ms", pt.host_build_ms},
                   {"upload_ms", pt.upload_ms}};
    if (const kernels::NativeMha* n = mha.Native())
      j["layout"]["native_workspace_bytes"] = n->WorkspaceBytes();
    if (const kernels::RecomposedMha* rec = mha.Recomposed()) {
      j["layout"]["recompose_workspace_bytes"] = rec->WorkspaceBytes();
      j["layout"]["recompose_tiles_per_head"] = rec->TilesPerHead();
    }
    j["check"] = check_json();
    j["ceilings"] = {{"copy_bytes", kCopyBytes},
                     {"copy_median_us", ceil->copy_us},
                     {"dram_bytes_per_s", ceil->dram_bytes_per_s},
                     {"gemm", "cuBLAS fp16 4096^3, fp32 accumulate"},
                     {"gemm_median_us", ceil->gemm_us},
                     {"tensor_flops_per_s", ceil->tensor_flops_per_s},
                     {"gemm_check_err", ceil->gemm_check_err}};
    j["rotation"] = {{"set_bytes", rot.set_bytes},
                     {"sets_wanted", rot.sets_wanted},
                     {"sets", rot.sets},
                     {"total_bytes", rot.total_bytes},
                     {"l2_bytes", rot.l2_bytes},
                     {"free_bytes_before", rot.free_bytes},
                     {"capped_by_free_memory", rot.capped}};
    j["latency"] = {{"runs", lat->runs},
                    {"warmup", a.warmup},
                    {"median_us", lat->median_us},
                    {"min_us", lat->min_us},
                    {"max_us", lat->max_us},
                    {"mean_us", lat->mean_us},
                    {"wall_us_per_run", lat->wall_us_per_run},
                    {"samples_us", lat->samples_us}};
    // The kernel alone (CUPTI activity, median of the traced runs): the event median above
    // also holds the launch gap that per-launch event pairs carry (docs/profiler.md).
    if (kernel_activity_us)
      j["latency"]["kernel_activity_us"] = *kernel_activity_us;
    else
      j["latency"]["kernel_activity_why_not"] = activity_why;
    j["flops"] = {{"useful", useful_flops},
                  {"kernel", kernel_flops},
                  {"effective_tflops", eff_tflops}};
    j["floor"] = {{"min_bytes", min_bytes},
                  {"bytes_us", floor_bytes_s * 1e6},
                  {"flops_us", floor_flops_s * 1e6},
                  {"floor_us", floor_s * 1e6},
                  {"bound", floor_bytes_s >= floor_flops_s ? "memory" : "compute"},
                  {"ratio_to_floor", ratio}};
    nlohmann::json cj;
    if (dram_read && dram_write) {
      cj = {{"available", true},
            {"dram_bytes_read", *dram_read},
            {"dram_bytes_write", *dram_write},
            {"dram_bytes", *dram_read + *dram_write},
            {"dram_over_min_bytes", (*dram_read + *dram_write) / min_bytes}};
      if (lts_bytes) cj["lts_bytes"] = *lts_bytes;
      if (tensor_pipe) cj["tensor_pipe_pct"] = *tensor_pipe;
    } else {
      cj = {{"available", false}, {"why_not", counters_why}};
    }
    j["counters"] = cj;
    PrintJson(j);
    return kExitOk;
  }

  const kernels::LayoutPrepTiming& pt = mha.Timing();
  std::printf("layout      %lld valid blocks (%lld part), %s on the device; selection %.3f ms, "
              "host build %.3f ms, upload %.3f ms (not in the latency)\n",
              static_cast<long long>(mha.ValidBlocks()), static_cast<long long>(mha.PartBlocks()),
              Bytes(static_cast<double>(mha.DeviceBytes())).c_str(), select_ms, pt.host_build_ms,
              pt.upload_ms);
  std::printf("ceilings    DRAM %.1f GB/s (256 MiB copy, %.2f us); tensor %.1f TFLOP/s (cuBLAS "
              "fp16 4096^3, %.2f us)\n",
              ceil->dram_bytes_per_s * 1e-9, ceil->copy_us, ceil->tensor_flops_per_s * 1e-12,
              ceil->gemm_us);
  std::printf("rotation    %lld input set(s) of %s = %s (L2 %s%s)\n",
              static_cast<long long>(rot.sets), Bytes(static_cast<double>(rot.set_bytes)).c_str(),
              Bytes(static_cast<double>(rot.total_bytes)).c_str(),
              Bytes(static_cast<double>(rot.l2_bytes)).c_str(),
              rot.capped ? "; capped by free memory: below 2x L2" : "");
  std::printf("latency     %.2f us median of %d runs (min %.2f, max %.2f), CUDA events, %d warm-up\n",
              lat->median_us, lat->runs, lat->min_us, lat->max_us, a.warmup);
  if (kernel_activity_us)
    std::printf("            kernel alone %.2f us (CUPTI activity); host %.2f us per launch\n",
                *kernel_activity_us, lat->wall_us_per_run);
  std::printf("throughput  %.2f TFLOP/s effective (4 B H nnz d = %s FLOP)\n", eff_tflops,
              Fmt("%.4g", useful_flops).c_str());
  std::printf("floor       %.2f us = max(bytes %s / DRAM = %.2f us, valid-block FLOPs %s / tensor "
              "= %.2f us) -> %s-bound; %.2f x the floor\n",
              floor_s * 1e6, Bytes(min_bytes).c_str(), floor_bytes_s * 1e6,
              Fmt("%.4g", kernel_flops).c_str(), floor_flops_s * 1e6,
              floor_bytes_s >= floor_flops_s ? "memory" : "compute", ratio);
  if (dram_read && dram_write)
    std::printf("DRAM        read %s, write %s per launch (CUPTI, auto range) = %.2f x Q+K+V+O%s\n",
                Bytes(*dram_read).c_str(), Bytes(*dram_write).c_str(),
                (*dram_read + *dram_write) / min_bytes,
                tensor_pipe ? (", tensor pipe " + Fmt("%.1f", *tensor_pipe) + " %").c_str() : "");
  else
    std::printf("DRAM        not measured: %s\n", counters_why.c_str());
  return kExitOk;
}

#endif  // STOF_WITH_KERNELS

int RunBenchEntry(const BenchArgs& a) {
#ifndef STOF_WITH_KERNELS
  (void)a;
  return Fail(a.profile_mode ? "profile mha" : "bench mha",
              "this build has no CUDA (STOF_CUDA=OFF): nothing can be timed; build with CUDA on a "
              "machine with a GPU");
#else
  return RunBench(a);
#endif
}

}  // namespace

static void AddMhaOptions(CLI::App* m, BenchArgs* args);

void RegisterBenchCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "Benchmark a kernel against its floor (needs a CUDA build and a GPU)");
  cmd->require_subcommand(1);
  auto args = std::make_shared<BenchArgs>();
  CLI::App* m = cmd->add_subcommand(
      "mha", "Sparse MHA: Eq. 1 / Eq. 2 choice, reference check, then CUDA-event latency over "
             "rotating inputs, effective TFLOP/s, floor and DRAM bytes");
  AddMhaOptions(m, args.get());
  m->add_option("--runs", args->runs, "Timed runs (>= 50; the median is reported)")
      ->capture_default_str()
      ->check(IntRange(kMinRuns, std::numeric_limits<int>::max()));
  m->add_option("--warmup", args->warmup, "Untimed runs first (>= 1)")
      ->capture_default_str()
      ->check(IntRange(1, std::numeric_limits<int>::max()));
  m->add_flag("--no-counters", args->no_counters,
              "Skip the CUPTI pass (DRAM bytes, kernel time by activity)");
  m->add_flag("--json", args->json, "Print everything as JSON");
  m->callback([args, exit_code] { *exit_code = RunBenchEntry(*args); });
  RegisterBenchChainCommand(cmd, exit_code);
}

// The MHA options shared by `bench mha` and `profile mha`.
static void AddMhaOptions(CLI::App* m, BenchArgs* args) {
  AddMaskSourceOptions(m, &args->source);
  AddWorkloadOptions(m, &args->batch, &args->heads, &args->head_dim, "--dim,--head-dim",
                     "; the kernels: 64 or 128");
  m->add_option("--kernel", args->kernel,
                "auto (Eq. 1), row_wise, block_wise, native (the unfused cuBLAS + softmax "
                "baseline; needs a B*H*L*L fp16 workspace), sd (softmax decomposed into LS, IR, "
                "GS kernels between cuBLAS GEMMs; same workspace) or sdf (LS fused into the Q K^T "
                "GEMM, GS into the P V GEMM; workspace x' of the mask's valid BM x T tiles)")
      ->capture_default_str()
      ->check(OneOf({"auto", "row_wise", "block_wise", "native", "sd", "sdf"}));
  m->add_option("--block", args->block,
                "Block-wise BLOCK_MxBLOCK_N (default: Eq. 2's best in the kernel's preferred set, "
                ">= 64x64; docs/kernels.md); sd/sdf: BMxT, rows per tile x sub-vector length, "
                "each 64 or 128 (default 64x64)")
      ->check(NonEmpty("a block size"));
  m->add_option("--warps", args->warps,
                "Block-wise num_warps: 1, 2, 4 or 8, or for the Hopper kernel (sm_90) 12 "
                "(--block 128x64 or 128x128) or 5 (--block 64x64, or 64x128 at --dim 64) "
                "(default: Eq. 2's best that the kernel supports)")
      ->check(OneOf({"1", "2", "4", "8", "5", "12"}));
  m->add_option("--input-seed", args->input_seed, "Seed of the random inputs")
      ->capture_default_str()
      ->check(SeedValue());
}

void AddProfileMhaCommand(CLI::App* profile, int* exit_code) {
  auto args = std::make_shared<BenchArgs>();
  args->profile_mode = true;
  args->profile.workload = "mha";
  CLI::App* m = profile->add_subcommand(
      "mha", "Sparse MHA (Eq. 1 / Eq. 2 choice or --kernel/--block/--warps), reference-checked, "
             "over rotating inputs larger than L2");
  AddMhaOptions(m, args.get());
  AddCommonOptions(m, &args->profile);
  m->callback([args, exit_code] {
    args->json = args->profile.json;
    *exit_code = RunBenchEntry(*args);
  });
}

}  // namespace stof::app
