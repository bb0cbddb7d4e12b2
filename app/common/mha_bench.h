// The sparse MHA benchmark as library steps, so a front end composes and reports them without
// re-implementing the measurement: `stof bench mha` and `stof profile mha` (app/cli/cmd_bench.cpp)
// call them in order and print between steps (the choice and the reference check appear
// before the timing starts); the studio can call the same steps. Built only with CUDA
// (STOF_WITH_KERNELS): every step runs on the GPU. The method is docs/kernels.md
// "Benchmarking":
//   1-2. PrepareMhaBench: the choice (Eq. 1 / Eq. 2 or the request) and the uploaded layout;
//   3.   ReferenceCheck: the exact configuration against engine::cpu::MaskedAttention on a
//        reduced problem (batch 1; all heads when L <= 1024, else one), output poisoned first;
//   4.   MeasureCeilings: DRAM bandwidth (256 MiB copy) and tensor rate (cuBLAS fp16 4096^3);
//   5.   MhaInputSets: rotating (Q, K, V, O) sets whose total exceeds 2x the L2 (capped by free
//        memory), launched through the prepared layout;
//   6.   TimeMhaBench: CUDA-event latency, the timed outputs checked for non-finite values, and
//        the DRAM bytes and tensor pipe of one launch from the CUPTI profiler (or why not).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/cuda_backend.h"
#include "profiler/profiler.h"

namespace stof::app {

// Steps 1-2.
struct MhaBenchSetup {
  std::unique_ptr<kernels::PreparedMha> mha;
  double select_ms = 0;  // the choice (Eq. 1 / Eq. 2), not the layout build
};
engine::Expected<MhaBenchSetup> PrepareMhaBench(const engine::Mask& mask,
                                                const engine::Workload& w,
                                                const engine::DeviceSpec& spec,
                                                const kernels::MhaRequest& request);

// Step 3.
struct MhaBenchCheck {
  engine::Workload workload;  // the reduced problem checked
  double row_err = 0, global_err = 0;
  int64_t worst_row = -1, worst_col = -1;
  double worst_out = 0, worst_ref = 0;
  int64_t non_finite = 0, nonzero_empty_rows = 0;
  double kernel_ms = 0, reference_ms = 0;
  double tolerance = 0;  // of the workload's element type (kernels::MhaTolerance)
  bool passed = false;
};
engine::Expected<MhaBenchCheck> ReferenceCheck(kernels::CudaBackend& backend,
                                               const kernels::PreparedMha& mha,
                                               const engine::Mask& mask,
                                               const engine::Workload& full, uint64_t seed);
nlohmann::json CheckJson(const MhaBenchCheck& c);

// Step 4.
struct MhaBenchCeilings {
  double copy_us = 0, dram_bytes_per_s = 0;
  double gemm_us = 0, tensor_flops_per_s = 0, gemm_check_err = 0;
};
engine::Expected<MhaBenchCeilings> MeasureCeilings();
int64_t CeilingCopyBytes();  // the bandwidth calibration's copy size

// Step 5: the rotating input sets and the launch that walks them.
struct MhaBenchRotation {
  int64_t set_bytes = 0, sets_wanted = 0, sets = 0, total_bytes = 0, l2_bytes = 0;
  int64_t free_bytes = 0;
  bool capped = false;  // fewer sets than 2x the L2 needs: not enough free memory
};
class MhaInputSets {
 public:
  static engine::Expected<std::unique_ptr<MhaInputSets>> Create(kernels::CudaBackend& backend,
                                                               const engine::Workload& w,
                                                               int64_t l2_bytes,
                                                               uint64_t input_seed);
  const MhaBenchRotation& Rotation() const { return rot_; }
  // Launches `mha` on the next set (the sets must outlive the returned function).
  profiler::WorkFn Work(const kernels::PreparedMha& mha);
  // Non-finite values in the outputs of the sets a launch of Work() has written so far (the
  // others still hold their poison: a short run walks only part of the rotation).
  engine::Expected<int64_t> CountNonFinite() const;

 private:
  struct Set {
    void *q, *k, *v, *o;
  };
  explicit MhaInputSets(kernels::CudaBackend& backend) : bufs_(backend) {}
  engine::BackendBuffers bufs_;
  std::vector<Set> sets_;
  size_t next_ = 0;
  size_t written_ = 0;  // sets written by some launch: min(launches, sets)
  int64_t elems_ = 0;
  engine::DType dtype_ = engine::DType::kF16;
  MhaBenchRotation rot_;
};

// Step 6.
struct MhaBenchTiming {
  profiler::LatencyStats latency;
  std::optional<double> kernel_activity_us;  // CUPTI activity: the kernel alone
  std::string activity_why_not;
  std::optional<double> dram_read, dram_write, lts_bytes, tensor_pipe_pct;
  std::string counters_why_not;  // when the DRAM bytes were not measured
};
struct MhaBenchTimingOptions {
  int warmup = 10, runs = 100;
  bool counters = true;  // false: no CUPTI pass (--no-counters)
  std::string label;     // the profiler's label
};
engine::Expected<MhaBenchTiming> TimeMhaBench(MhaInputSets& sets,
                                              const kernels::PreparedMha& mha,
                                              const engine::Workload& w,
                                              const MhaBenchCeilings& ceilings,
                                              const MhaBenchTimingOptions& o);

// The bytes one launch must move at least: Q, K, V and O once each (K and V of the key/value
// heads and keys, Q and O of the query heads and rows), fp16 or bf16.
double MhaMinBytes(const engine::Workload& w);

// The floor of one launch: max(Q+K+V+O bytes / DRAM ceiling, valid-block FLOPs / tensor).
struct MhaBenchFloor {
  double min_bytes = 0, useful_flops = 0, kernel_flops = 0;
  double bytes_s = 0, flops_s = 0, floor_s = 0;
  double effective_tflops = 0, ratio = 0;  // at the median latency
  bool memory_bound = false;
};
MhaBenchFloor ComputeFloor(const kernels::PreparedMha& mha, const engine::Workload& w,
                           const MhaBenchCeilings& c, double median_us);

// The choice as `bench mha --json` and the tools reading it (tests/compare/) expect it.
nlohmann::json ChoiceJson(const kernels::MhaChoice& c);

}  // namespace stof::app
