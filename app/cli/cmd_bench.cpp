// `stof bench mha` and `stof profile mha`: time (or profile) our sparse MHA kernel on one mask
// and workload, the way the project times kernels (docs/architecture.md, docs/kernels.md
// "Benchmarking"). The measurement is the library steps of app/common/mha_bench.h: the choice
// (STOF Eq. 1 / Eq. 2 on the local device's spec, or the user's overrides: --kernel native,
// the unfused cuBLAS + softmax baseline; --kernel sd|sdf, softmax decomposition and
// decomposition + fusion, with --block BMxT; none of the three is ever chosen by Eq. 1), the
// device layout built and uploaded once (its time reported apart from the kernel's), the
// reference check (a failing kernel is never timed: exit 1), the DRAM and tensor ceilings,
// rotating input sets over 2x the L2, CUDA-event latency (median of --runs >= 50) and the DRAM
// bytes of one launch from CUPTI, or why not. This file parses the options and runs the steps
// in order; the report is cmd_bench_report.cpp, `profile mha`'s measurement
// cmd_profile_mha.cpp: a human summary as it goes, or everything as JSON with --json. Only
// functional in a CUDA build; without CUDA the command says so and exits 1.
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "app/cli/cmd_bench_internal.h"
#include "app/common/block_size.h"
#include "app/common/option_checks.h"
#include "engine/core/workload.h"
#include "engine/select/hopper_select.h"

#ifdef STOF_WITH_KERNELS
#include "engine/core/text_format.h"
#include "kernels/device_query.h"
#endif

namespace stof::app {

namespace {

using bench_detail::BenchArgs;

constexpr int kMinRuns = 50;  // the median of fewer runs is not reported (--runs)

#ifdef STOF_WITH_KERNELS

using bench_detail::BenchJson;
using bench_detail::BenchProblem;
using bench_detail::BenchReport;
using bench_detail::PrintBenchText;
using bench_detail::PrintCheckText;
using bench_detail::PrintChoiceText;
using bench_detail::ProfileMhaRun;
using engine::Fmt;

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
  auto src = ResolveCacheRowsSource(a.source, a.q_len);
  if (!src.IsOk()) return engine::Error{src.Message()};
  p.source = std::move(*src);
  const engine::Mask& mask = p.source.mask;
  // Past Mask::kMaxLen the mask holds only the last q_len rows (ResolveCacheRowsSource).
  if (mask.Rows() != mask.Cols() && mask.Cols() <= engine::Mask::kMaxLen)
    return engine::Error{"mask: must be square, got " + std::to_string(mask.Rows()) + " x " +
                         std::to_string(mask.Cols())};
  engine::Workload& w = p.workload;
  w.batch = a.batch;
  w.heads = a.heads;
  w.seq_len = mask.Cols();
  w.head_dim = a.head_dim;
  w.dtype = *engine::ParseDType(a.dtype);  // checked by AddKernelDtypeOption
  STOF_RETURN_IF_ERROR(ApplyShapeOptions(a.kv_heads, a.q_len, &w, &p.source.mask));
  STOF_RETURN_IF_ERROR(w.Validate("workload"));
  if (engine::HopperKernelHeadDim(w.head_dim) == 0)
    return engine::Error{"--dim: the sparse MHA kernels support multiples of 8 from 8 to 256 (64 "
                         "and 128 on every kernel, the others on the Hopper kernel), got " +
                         std::to_string(w.head_dim)};
  return p;
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
  args->source.max_seq = kLongSeqLen;  // past Mask::kMaxLen with --q-len (a KV cache's rows)
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
  AddKernelDtypeOption(m, &args->dtype);
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
