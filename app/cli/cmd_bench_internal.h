// The pieces of `stof bench mha` and `stof profile mha` that their files share: the options
// (BenchArgs), and in CUDA builds the problem they name, the report's parts and the steps that
// cmd_bench.cpp runs in order: the report (cmd_bench_report.cpp) and the profiler's measurement
// (cmd_profile_mha.cpp). Included only by those three files.
#pragma once

#include <cstdint>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/profile_output.h"

#ifdef STOF_WITH_KERNELS
#include "app/common/mha_bench.h"
#include "engine/core/workload.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/cuda_backend.h"
#endif

namespace stof::app::bench_detail {

// The options of `bench mha` and `profile mha` (RegisterBenchCommand, AddProfileMhaCommand).
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

#ifdef STOF_WITH_KERNELS

// The options as a kernel request and a workload on the mask they name.
struct BenchProblem {
  kernels::MhaRequest request;
  MaskSource source;
  engine::Workload workload;
};

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

// ---- The report (cmd_bench_report.cpp) -------------------------------------------------

// The choice as it is made, before the check (text mode).
void PrintChoiceText(const BenchProblem& pb, const kernels::PreparedMha& mha,
                     const kernels::CudaBackend& backend, const engine::DeviceSpec& spec);
// The reference check's line (text mode).
void PrintCheckText(const MhaBenchCheck& chk);
// Everything measured as one JSON object (--json).
nlohmann::json BenchJson(const BenchReport& r);
// Everything measured after the check as text.
void PrintBenchText(const BenchReport& r);

// ---- `profile mha` (cmd_profile_mha.cpp) -----------------------------------------------

// `stof profile mha` after the reference check: one profiler measurement of `work` (rotating
// inputs) with the profile options, printed or exported like `profile copy|gemm`. Succeeds
// only when the latency was measured and no output of the measured launches is non-finite.
int ProfileMhaRun(const std::string& cmd, const ProfileArgs& p, MhaInputSets& sets,
                  const kernels::PreparedMha& mha, const engine::Workload& w,
                  const engine::DeviceSpec& spec, const std::string& label,
                  const MhaBenchCheck& check);

#endif  // STOF_WITH_KERNELS

}  // namespace stof::app::bench_detail
