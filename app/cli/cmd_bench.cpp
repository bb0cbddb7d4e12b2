// `stof bench mha` and `stof profile mha`: time (or profile) our sparse MHA kernel on one mask
// and workload, the way the project times kernels (docs/architecture.md, docs/kernels.md
// "Benchmarking"). The measurement is the library steps of app/common/mha_bench.h: the choice
// (STOF Eq. 1 / Eq. 2 on the local device's spec, or the user's overrides: --kernel native,
// the unfused cuBLAS + softmax baseline; --kernel sd|sdf, softmax decomposition and
// decomposition + fusion, with --block BMxT; none of the three is ever chosen by Eq. 1), the
// device layout built and uploaded once (its time reported apart from the kernel's), the
// reference check (a failing kernel is never timed: exit 1), the DRAM and tensor ceilings,
// rotating input sets over 2x the L2, CUDA-event latency (median of --runs >= 50) and the DRAM
// bytes of one launch from CUPTI, or why not. This file parses the options, runs the steps in
// order and prints: a human summary as it goes, or everything as JSON with --json. Only
// functional in a CUDA build; without CUDA the command says so and exits 1.
#include <cstdio>
#include <limits>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/profile_output.h"
#include "app/common/block_size.h"
#include "app/common/option_checks.h"
#include "engine/core/workload.h"
#include "engine/select/hopper_select.h"
#include "engine/select/kernel_select.h"

#ifdef STOF_WITH_KERNELS
#include "app/common/mha_bench.h"
#include "engine/core/text_format.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/cuda_backend.h"
#include "kernels/device_query.h"
#include "profiler/profiler.h"
#endif

namespace stof::app {

namespace {

struct BenchArgs {
  MaskSourceOptions source;
  int64_t batch = 8, heads = 12, head_dim = 64;
  int64_t kv_heads = 0, q_len = 0;  // --kv-heads, --q-len (0: --heads, the key length)
  std::string dtype = "f16";  // or bf16 (the Hopper kernel only)
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

using engine::Fmt;
using engine::FormatBytes;

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
int ProfileMhaRun(const std::string& cmd, const ProfileArgs& p, MhaInputSets& sets,
                  const kernels::PreparedMha& mha, const engine::Workload& w,
                  const engine::DeviceSpec& spec, const std::string& label,
                  const MhaBenchCheck& check) {
  profiler::MeasureOptions o = MeasureOptionsFrom(p, spec);
  o.label = "sparse MHA " + label + ", B " + std::to_string(w.batch) + ", H " +
            std::to_string(w.heads) + ", d " + std::to_string(w.head_dim);
  o.flop_count = mha.UsefulFlops(w);
  o.min_bytes = MhaMinBytes(w);
  auto result = profiler::CreateProfiler()->Measure(sets.Work(mha), o);
  if (!result.IsOk()) return Fail(cmd, result.Message());
  profiler::ProfileResult& r = *result;
  const kernels::MhaChoice& c = mha.Choice();
  r.notes.push_back(std::string("kernel: ") + kernels::MhaChoiceKernelName(c) +
                    ChoiceDetail(c));
  r.notes.push_back("reference check before measuring: worst row error " +
                    Fmt("%.3e", check.row_err) + " (tolerance " + Fmt("%.0e", check.tolerance) +
                    "), passed");
  auto bad = sets.CountNonFinite();
  if (!bad.IsOk()) return Fail(cmd, bad.Message());
  const std::string check_note =
      "output check: " + std::to_string(*bad) + " non-finite values in the measured launches' outputs";
  r.notes.push_back(check_note);
  return ReportProfile(cmd, p, r, *bad == 0, check_note);
}

// ", 8 key/value heads, L_q 1" where the workload is not square MHA, else "".
std::string ShapeText(const engine::Workload& w) {
  std::string t;
  if (w.KvHeads() != w.heads) t += ", " + std::to_string(w.KvHeads()) + " key/value heads";
  if (w.QLen() != w.seq_len) t += ", L_q " + std::to_string(w.QLen());
  return t;
}

// The options as a kernel request and a workload on the mask they name.
struct BenchProblem {
  kernels::MhaRequest request;
  MaskSource source;
  engine::Workload workload;
};
engine::Expected<BenchProblem> ParseBenchProblem(const BenchArgs& a) {
  BenchProblem p;
  auto kernel_request = kernels::ParseMhaKernelRequest(a.kernel);
  if (!kernel_request.IsOk()) return engine::Error{"--kernel: " + kernel_request.Message()};
  p.request.kernel = *kernel_request;
  if (!a.block.empty()) {
    auto b = ParseBlockSize(a.block, "--block");
    if (!b.IsOk()) return engine::Error{b.Message()};
    p.request.block_m = b->block_m;
    p.request.block_n = b->block_n;
  }
  p.request.num_warps = a.warps;  // one of the values --warps' OneOf check admits
  auto src = ResolveMaskSource(a.source);
  if (!src.IsOk()) return engine::Error{src.Message()};
  p.source = std::move(*src);
  const engine::Mask& mask = p.source.mask;
  if (mask.Rows() != mask.Cols())
    return engine::Error{"mask: must be square, got " + std::to_string(mask.Rows()) + " x " +
                         std::to_string(mask.Cols())};
  engine::Workload& w = p.workload;
  w.batch = a.batch;
  w.heads = a.heads;
  w.seq_len = mask.Rows();
  w.head_dim = a.head_dim;
  w.dtype = a.dtype == "bf16" ? engine::DType::kBF16 : engine::DType::kF16;
  STOF_RETURN_IF_ERROR(ApplyShapeOptions(a.kv_heads, a.q_len, &w, &p.source.mask));
  STOF_RETURN_IF_ERROR(w.Validate("workload"));
  if (engine::HopperKernelHeadDim(w.head_dim) == 0)
    return engine::Error{"--dim: the sparse MHA kernels support multiples of 8 from 8 to 256 (64 "
                         "and 128 on every kernel, the others on the Hopper kernel), got " +
                         std::to_string(w.head_dim)};
  return p;
}

void PrintChoiceText(const BenchProblem& pb, const kernels::PreparedMha& mha,
                     const kernels::CudaBackend& backend, const engine::DeviceSpec& spec) {
  const kernels::MhaChoice& c = mha.Choice();
  const engine::Workload& w = pb.workload;
  std::printf("mask        %s (nnz %lld, density %s)\n", pb.source.label.c_str(),
              static_cast<long long>(mha.Nnz()), Percent(pb.source.mask.Density()).c_str());
  std::printf("workload    batch %lld, heads %lld, L %lld, d %lld, %s%s\n",
              static_cast<long long>(w.batch), static_cast<long long>(w.heads),
              static_cast<long long>(w.seq_len), static_cast<long long>(w.head_dim),
              engine::DTypeName(w.dtype), ShapeText(w).c_str());
  std::printf("device      %s (%d SMs, L2 %s)\n", backend.Name().c_str(), spec.sm_count,
              FormatBytes(static_cast<double>(spec.l2_bytes)).c_str());
  if (const kernels::RecomposedMha* rec = mha.Recomposed())
    std::printf("kernel      %s (%s; BM x T %d x %d from %s; %lld tiles per head; workspace "
                "%s)\n",
                kernels::RecomposeVariantName(rec->Variant()),
                rec->Variant() == kernels::RecomposeVariant::kDecomposed
                    ? "softmax decomposed: cuBLAS Q K^T, LS, IR, GS kernels, cuBLAS P V"
                    : "softmax decomposed + fused: Q K^T + LS kernel, IR, GS + P V kernel",
                rec->Params().block_m, rec->Params().sub_len, c.params_source.c_str(),
                static_cast<long long>(rec->TilesPerHead()),
                FormatBytes(static_cast<double>(rec->WorkspaceBytes())).c_str());
  else if (c.native)
    std::printf("kernel      native (unfused: cuBLAS Q K^T, scale+mask+softmax kernel, cuBLAS "
                "P V; S workspace %s)\n",
                FormatBytes(static_cast<double>(mha.Native()->WorkspaceBytes())).c_str());
  else if (c.config.kernel == engine::MhaKernel::kRowWise)
    std::printf("kernel      row_wise (kernel from %s)\n", c.kernel_source.c_str());
  else
    std::printf("kernel      block_wise %lldx%lld, %lld warps (kernel from %s, parameters from "
                "%s)\n",
                static_cast<long long>(c.config.block_m), static_cast<long long>(c.config.block_n),
                static_cast<long long>(c.config.num_warps), c.kernel_source.c_str(),
                c.params_source.c_str());
  if (!w.IsSquareMha()) {
    if (!c.note.empty()) std::printf("note        %s\n", c.note.c_str());
    std::fflush(stdout);
    return;
  }
  std::printf("            Eq. 1 threshold %s -> %s; Eq. 2 pick %lldx%lld, %lld warps\n",
              Fmt("%.4f", c.selection.eq1.threshold).c_str(),
              engine::MhaKernelName(c.selection.eq1.kernel),
              static_cast<long long>(c.eq2_pick_block_m),
              static_cast<long long>(c.eq2_pick_block_n),
              static_cast<long long>(c.eq2_pick_num_warps));
  if (!c.note.empty()) std::printf("note        %s\n", c.note.c_str());
  std::fflush(stdout);
}

void PrintCheckText(const MhaBenchCheck& chk) {
  std::printf(
      "check       %s: batch 1, %lld head(s), worst row error %s (tolerance %s), "
      "global %s, %lld non-finite, %lld non-zero empty rows\n",
      chk.passed ? "passed" : "FAILED", static_cast<long long>(chk.workload.heads),
      Fmt("%.3e", chk.row_err).c_str(), Fmt("%.0e", chk.tolerance).c_str(),
      Fmt("%.3e", chk.global_err).c_str(), static_cast<long long>(chk.non_finite),
      static_cast<long long>(chk.nonzero_empty_rows));
  std::fflush(stdout);
}

// Everything one `bench mha` measured, for --json and the text report.
struct BenchReport {
  const BenchProblem& problem;
  const MhaBenchSetup& setup;
  const kernels::CudaBackend& backend;
  const engine::DeviceSpec& spec;
  const MhaBenchCheck& check;
  const MhaBenchCeilings& ceilings;
  const MhaBenchRotation& rotation;
  const MhaBenchTiming& timing;
  const MhaBenchFloor& floor;
  int warmup;
};

nlohmann::json CountersJson(const MhaBenchTiming& t, double min_bytes) {
  if (!t.dram_read || !t.dram_write)
    return {{"available", false}, {"why_not", t.counters_why_not}};
  nlohmann::json cj = {{"available", true},
                       {"dram_bytes_read", *t.dram_read},
                       {"dram_bytes_write", *t.dram_write},
                       {"dram_bytes", *t.dram_read + *t.dram_write},
                       {"dram_over_min_bytes", (*t.dram_read + *t.dram_write) / min_bytes}};
  if (t.lts_bytes) cj["lts_bytes"] = *t.lts_bytes;
  if (t.tensor_pipe_pct) cj["tensor_pipe_pct"] = *t.tensor_pipe_pct;
  return cj;
}

nlohmann::json BenchJson(const BenchReport& r) {
  const kernels::PreparedMha& mha = *r.setup.mha;
  const engine::Workload& w = r.problem.workload;
  const engine::Mask& mask = r.problem.source.mask;
  const kernels::LayoutPrepTiming& pt = mha.Timing();
  const profiler::LatencyStats& lat = r.timing.latency;
  const MhaBenchFloor& f = r.floor;
  nlohmann::json j;
  j["command"] = "bench mha";
  j["mask"] = {{"source", r.problem.source.label},
               {"seq_len", w.seq_len},
               {"nnz", mha.Nnz()},
               {"density", mask.Density()},
               {"hash", mask.HashHex()}};
  j["workload"] = {{"batch", w.batch},
                   {"heads", w.heads},
                   {"kv_heads", w.KvHeads()},
                   {"seq_len", w.seq_len},
                   {"q_len", w.QLen()},
                   {"head_dim", w.head_dim},
                   {"dtype", engine::DTypeName(w.dtype)}};
  j["device"] = {{"name", r.backend.Name()},
                 {"sm_count", r.spec.sm_count},
                 {"l2_bytes", r.spec.l2_bytes},
                 {"peak_dram_bytes_per_s", r.spec.dram_bytes_per_s},
                 {"peak_fp16_tensor_flops", r.spec.fp16_tensor_flops}};
  j["choice"] = ChoiceJson(mha.Choice());
  j["layout"] = {{"valid_blocks", mha.ValidBlocks()},
                 {"part_blocks", mha.PartBlocks()},
                 {"device_bytes", mha.DeviceBytes()},
                 {"select_ms", r.setup.select_ms},
                 {"host_build_ms", pt.host_build_ms},
                 {"upload_ms", pt.upload_ms}};
  if (const kernels::NativeMha* n = mha.Native())
    j["layout"]["native_workspace_bytes"] = n->WorkspaceBytes();
  if (const kernels::RecomposedMha* rec = mha.Recomposed()) {
    j["layout"]["recompose_workspace_bytes"] = rec->WorkspaceBytes();
    j["layout"]["recompose_tiles_per_head"] = rec->TilesPerHead();
  }
  j["check"] = CheckJson(r.check);
  j["ceilings"] = {{"copy_bytes", CeilingCopyBytes()},
                   {"copy_median_us", r.ceilings.copy_us},
                   {"dram_bytes_per_s", r.ceilings.dram_bytes_per_s},
                   {"gemm", "cuBLAS fp16 4096^3, fp32 accumulate"},
                   {"gemm_median_us", r.ceilings.gemm_us},
                   {"tensor_flops_per_s", r.ceilings.tensor_flops_per_s},
                   {"gemm_check_err", r.ceilings.gemm_check_err}};
  j["rotation"] = {{"set_bytes", r.rotation.set_bytes},
                   {"sets_wanted", r.rotation.sets_wanted},
                   {"sets", r.rotation.sets},
                   {"total_bytes", r.rotation.total_bytes},
                   {"l2_bytes", r.rotation.l2_bytes},
                   {"free_bytes_before", r.rotation.free_bytes},
                   {"capped_by_free_memory", r.rotation.capped}};
  j["latency"] = {{"runs", lat.runs},
                  {"warmup", r.warmup},
                  {"median_us", lat.median_us},
                  {"min_us", lat.min_us},
                  {"max_us", lat.max_us},
                  {"mean_us", lat.mean_us},
                  {"wall_us_per_run", lat.wall_us_per_run},
                  {"samples_us", lat.samples_us}};
  // The kernel alone (CUPTI activity, median of the traced runs): the event median above
  // also holds the launch gap that per-launch event pairs carry (docs/profiler.md).
  if (r.timing.kernel_activity_us)
    j["latency"]["kernel_activity_us"] = *r.timing.kernel_activity_us;
  else
    j["latency"]["kernel_activity_why_not"] = r.timing.activity_why_not;
  j["flops"] = {{"useful", f.useful_flops},
                {"kernel", f.kernel_flops},
                {"effective_tflops", f.effective_tflops}};
  j["floor"] = {{"min_bytes", f.min_bytes},
                {"bytes_us", f.bytes_s * 1e6},
                {"flops_us", f.flops_s * 1e6},
                {"floor_us", f.floor_s * 1e6},
                {"bound", f.memory_bound ? "memory" : "compute"},
                {"ratio_to_floor", f.ratio}};
  j["counters"] = CountersJson(r.timing, f.min_bytes);
  return j;
}

void PrintBenchText(const BenchReport& r) {
  const kernels::PreparedMha& mha = *r.setup.mha;
  const kernels::LayoutPrepTiming& pt = mha.Timing();
  const MhaBenchCeilings& ceil = r.ceilings;
  const MhaBenchRotation& rot = r.rotation;
  const profiler::LatencyStats& lat = r.timing.latency;
  const MhaBenchTiming& t = r.timing;
  const MhaBenchFloor& f = r.floor;
  std::printf("layout      %lld valid blocks (%lld part), %s on the device; selection %.3f ms, "
              "host build %.3f ms, upload %.3f ms (not in the latency)\n",
              static_cast<long long>(mha.ValidBlocks()), static_cast<long long>(mha.PartBlocks()),
              FormatBytes(static_cast<double>(mha.DeviceBytes())).c_str(), r.setup.select_ms,
              pt.host_build_ms, pt.upload_ms);
  std::printf("ceilings    DRAM %.1f GB/s (256 MiB copy, %.2f us); tensor %.1f TFLOP/s (cuBLAS "
              "fp16 4096^3, %.2f us)\n",
              ceil.dram_bytes_per_s * 1e-9, ceil.copy_us, ceil.tensor_flops_per_s * 1e-12,
              ceil.gemm_us);
  std::printf("rotation    %lld input set(s) of %s = %s (L2 %s%s)\n",
              static_cast<long long>(rot.sets), FormatBytes(static_cast<double>(rot.set_bytes)).c_str(),
              FormatBytes(static_cast<double>(rot.total_bytes)).c_str(),
              FormatBytes(static_cast<double>(rot.l2_bytes)).c_str(),
              rot.capped ? "; capped by free memory: below 2x L2" : "");
  std::printf("latency     %.2f us median of %d runs (min %.2f, max %.2f), CUDA events, %d warm-up\n",
              lat.median_us, lat.runs, lat.min_us, lat.max_us, r.warmup);
  if (t.kernel_activity_us)
    std::printf("            kernel alone %.2f us (CUPTI activity); host %.2f us per launch\n",
                *t.kernel_activity_us, lat.wall_us_per_run);
  std::printf("throughput  %.2f TFLOP/s effective (4 B H nnz d = %s FLOP)\n", f.effective_tflops,
              Fmt("%.4g", f.useful_flops).c_str());
  std::printf("floor       %.2f us = max(bytes %s / DRAM = %.2f us, valid-block FLOPs %s / tensor "
              "= %.2f us) -> %s-bound; %.2f x the floor\n",
              f.floor_s * 1e6, FormatBytes(f.min_bytes).c_str(), f.bytes_s * 1e6,
              Fmt("%.4g", f.kernel_flops).c_str(), f.flops_s * 1e6,
              f.memory_bound ? "memory" : "compute", f.ratio);
  if (t.dram_read && t.dram_write)
    std::printf("DRAM        read %s, write %s per launch (CUPTI, auto range) = %.2f x Q+K+V+O%s\n",
                FormatBytes(*t.dram_read).c_str(), FormatBytes(*t.dram_write).c_str(),
                (*t.dram_read + *t.dram_write) / f.min_bytes,
                t.tensor_pipe_pct ? (", tensor pipe " + Fmt("%.1f", *t.tensor_pipe_pct) + " %").c_str()
                                  : "");
  else
    std::printf("DRAM        not measured: %s\n", t.counters_why_not.c_str());
}

// The steps of app/common/mha_bench.h in order, printing between them (text) or once at the
// end (--json); a failing reference check stops before any timing.
int RunBench(const BenchArgs& a) {
  const std::string cmd = a.profile_mode ? "profile mha" : "bench mha";
  auto problem = ParseBenchProblem(a);
  if (!problem.IsOk()) return Fail(cmd, problem.Message());
  const BenchProblem& pb = *problem;
  const engine::Workload& w = pb.workload;
  auto count = kernels::CudaDeviceCount();
  if (!count.IsOk()) return Fail(cmd, count.Message());
  auto backend_or = kernels::CudaBackend::Create(0);
  if (!backend_or.IsOk()) return Fail(cmd, backend_or.Message());
  kernels::CudaBackend& backend = **backend_or;
  const engine::DeviceSpec spec = backend.Device();

  auto setup = PrepareMhaBench(pb.source.mask, w, spec, pb.request);  // 1-2
  if (!setup.IsOk()) return Fail(cmd, setup.Message());
  const kernels::PreparedMha& mha = *setup->mha;
  if (!a.json) PrintChoiceText(pb, mha, backend, spec);

  auto check = ReferenceCheck(backend, mha, pb.source.mask, w, a.input_seed);  // 3
  if (!check.IsOk()) return Fail(cmd, check.Message());
  if (!a.json) PrintCheckText(*check);
  if (!check->passed) {
    if (a.json) PrintJson("bench-mha", {{"choice", ChoiceJson(mha.Choice())}, {"check", CheckJson(*check)}});
    return Fail(cmd, "reference check failed (worst row error " + Fmt("%.3e", check->row_err) +
                         ", " + std::to_string(check->non_finite) + " non-finite, " +
                         std::to_string(check->nonzero_empty_rows) +
                         " non-zero empty rows): not timing a wrong kernel");
  }

  // 4. Ceilings (the profiler's summary uses the device's peaks instead, like `profile
  // copy|gemm`).
  engine::Expected<MhaBenchCeilings> ceil = MhaBenchCeilings{};
  if (!a.profile_mode) ceil = MeasureCeilings();
  if (!ceil.IsOk()) return Fail(cmd, ceil.Message());
  auto sets = MhaInputSets::Create(backend, w, spec.l2_bytes, a.input_seed);  // 5
  if (!sets.IsOk()) return Fail(cmd, sets.Message());
  if (a.profile_mode)
    return ProfileMhaRun(cmd, a.profile, **sets, mha, w, spec, pb.source.label, *check);

  MhaBenchTimingOptions o;  // 6
  o.warmup = a.warmup;
  o.runs = a.runs;
  o.counters = !a.no_counters;
  o.label = "sparse MHA " + pb.source.label;
  auto timing = TimeMhaBench(**sets, mha, w, *ceil, o);
  if (!timing.IsOk()) return Fail(cmd, timing.Message());
  const MhaBenchFloor floor = ComputeFloor(mha, w, *ceil, timing->latency.median_us);
  const BenchReport report{pb,     *setup, backend, spec, *check, *ceil, (*sets)->Rotation(),
                           *timing, floor,  a.warmup};
  if (a.json)
    PrintJson("bench-mha", BenchJson(report));
  else
    PrintBenchText(report);
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
                     "; the kernels: 64 or 128, the Hopper kernel any multiple of 8 up to 256");
  AddShapeOptions(m, &args->kv_heads, &args->q_len);
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
  m->add_option("--dtype", args->dtype,
                "Element type of q, k, v and o: f16, or bf16 (the Hopper kernel only, sm_90)")
      ->capture_default_str()
      ->check(OneOf({"f16", "bf16"}));
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
