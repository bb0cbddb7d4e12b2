// The sparse MHA benchmark's steps (mha_bench.h): choice and layout, reference check,
// ceilings, rotating input sets, timing and counters, floor. Moved out of `stof bench mha`
// (app/cli/cmd_bench.cpp) so the measurement lives in one place; built only with CUDA.
#include "app/common/mha_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/backend.h"
#include "engine/core/text_format.h"
#include "engine/select/kernel_select.h"
#include "kernels/gemm/cublas_gemm.h"
#include "kernels/util/copy_kernel.h"
#include "kernels/util/device_memory.h"
#include "kernels/util/finite_check.h"
#include "kernels/util/mha_check.h"

namespace stof::app {

namespace {

using engine::Fmt;
using engine::FormatBytes;
using Clock = std::chrono::steady_clock;

// Tolerance of the cuBLAS check of the tensor-rate calibration (fp16 GEMM). The reference check
// of the MHA uses the GPU tests' rule for its element type (kernels::MhaTolerance).
constexpr double kTolerance = kernels::kMhaTolerance;
constexpr size_t kCopyBytes = size_t{256} << 20;
constexpr int64_t kGemmSize = 4096;
// Left free beside the rotating sets (cuBLAS workspace, CUPTI buffers, the layout).
constexpr int64_t kMemoryMargin = int64_t{1} << 30;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int64_t CeilingCopyBytes() { return static_cast<int64_t>(kCopyBytes); }

engine::Expected<MhaBenchSetup> PrepareMhaBench(const engine::Mask& mask,
                                                const engine::Workload& w,
                                                const engine::DeviceSpec& spec,
                                                const kernels::MhaRequest& request) {
  MhaBenchSetup s;
  const auto t_sel = Clock::now();
  STOF_ASSIGN_OR_RETURN(auto choice, kernels::ChooseMhaConfig(mask, w, spec, request));
  s.select_ms = MsSince(t_sel);
  STOF_ASSIGN_OR_RETURN(auto prepared, kernels::PreparedMha::Create(mask, w, choice));
  s.mha = std::move(prepared);
  return s;
}

engine::Expected<MhaBenchCheck> ReferenceCheck(kernels::CudaBackend& backend,
                                               const kernels::PreparedMha& mha,
                                               const engine::Mask& mask,
                                               const engine::Workload& full, uint64_t seed) {
  MhaBenchCheck c;
  c.workload = full;
  c.workload.batch = 1;
  if (full.seq_len > 1024) {  // one key/value head and the query heads it serves
    c.workload.heads = full.GroupSize();
    c.workload.kv_heads = full.GroupSize() > 1 ? 1 : 0;
  }
  const engine::Workload& w = c.workload;
  const int64_t elems = kernels::QueryElements(w), kv_elems = kernels::KeyElements(w);
  const size_t bytes = static_cast<size_t>(elems) * 2, kv_bytes = static_cast<size_t>(kv_elems) * 2;
  const kernels::MhaInputs in = kernels::RandomInputs(elems, seed, w.dtype, kv_elems);

  engine::BackendBuffers bufs(backend);
  void* ptr[4];
  for (int i = 0; i < 4; ++i) {
    auto a = bufs.Add(i == 1 || i == 2 ? kv_bytes : bytes);
    if (!a.IsOk()) return engine::Error{"reference check: " + a.Message()};
    ptr[i] = *a;
  }
  STOF_RETURN_IF_ERROR(backend.CopyToDevice(ptr[0], in.q.data(), bytes));
  STOF_RETURN_IF_ERROR(backend.CopyToDevice(ptr[1], in.k.data(), kv_bytes));
  STOF_RETURN_IF_ERROR(backend.CopyToDevice(ptr[2], in.v.data(), kv_bytes));
  STOF_RETURN_IF_ERROR(kernels::PoisonBuffer(ptr[3], bytes));
  STOF_RETURN_IF_ERROR(backend.Synchronize());
  const auto t0 = Clock::now();
  STOF_RETURN_IF_ERROR(mha.Launch(w, ptr[0], ptr[1], ptr[2], ptr[3], nullptr));
  STOF_RETURN_IF_ERROR(backend.Synchronize());
  c.kernel_ms = MsSince(t0);
  auto bad = kernels::CountNonFinite(ptr[3], elems, w.dtype);
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
  c.tolerance = kernels::MhaTolerance(w.dtype);
  c.passed = c.non_finite == 0 && c.nonzero_empty_rows == 0 && c.row_err < c.tolerance;
  return c;
}

nlohmann::json CheckJson(const MhaBenchCheck& c) {
  return nlohmann::json{{"batch", c.workload.batch},
                        {"heads", c.workload.heads},
                        {"tolerance", c.tolerance},
                        {"row_err", c.row_err},
                        {"global_err", c.global_err},
                        {"worst_row", c.worst_row},
                        {"worst_col", c.worst_col},
                        {"worst_out", c.worst_out},
                        {"worst_ref", c.worst_ref},
                        {"non_finite", c.non_finite},
                        {"nonzero_empty_rows", c.nonzero_empty_rows},
                        {"reference_ms", c.reference_ms},
                        {"passed", c.passed}};
}

// The two ceilings of the floor, measured in this process with CUDA events (median of 20).
engine::Expected<MhaBenchCeilings> MeasureCeilings() {
  MhaBenchCeilings c;
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

engine::Expected<std::unique_ptr<MhaInputSets>> MhaInputSets::Create(
    kernels::CudaBackend& backend, const engine::Workload& w, int64_t l2_bytes,
    uint64_t input_seed) {
  std::unique_ptr<MhaInputSets> in(new MhaInputSets(backend));
  in->elems_ = kernels::QueryElements(w);
  const int64_t kv_elems = kernels::KeyElements(w);
  in->dtype_ = w.dtype;
  const size_t tensor_bytes = static_cast<size_t>(in->elems_) * 2;
  const size_t kv_tensor_bytes = static_cast<size_t>(kv_elems) * 2;
  MhaBenchRotation& rot = in->rot_;
  rot.set_bytes = 2 * static_cast<int64_t>(tensor_bytes + kv_tensor_bytes);
  rot.l2_bytes = l2_bytes;
  rot.sets_wanted = std::max<int64_t>(2, (2 * rot.l2_bytes + rot.set_bytes - 1) / rot.set_bytes);
  STOF_ASSIGN_OR_RETURN(auto mem, kernels::QueryDeviceMemory());
  rot.free_bytes = mem.free_bytes;
  const int64_t fit = std::max<int64_t>(0, mem.free_bytes - kMemoryMargin) / rot.set_bytes;
  rot.sets = std::min(rot.sets_wanted, fit);
  rot.capped = rot.sets < rot.sets_wanted;
  if (rot.sets < 1)
    return engine::Error{"not enough device memory for one input set (" +
                         FormatBytes(static_cast<double>(rot.set_bytes)) + "; " +
                         FormatBytes(static_cast<double>(mem.free_bytes)) + " free)"};
  rot.total_bytes = rot.sets * rot.set_bytes;
  const std::vector<uint16_t> hq =
      kernels::RandomValues16(in->elems_, input_seed * 7 + 11, w.dtype);
  const std::vector<uint16_t> hk = kernels::RandomValues16(kv_elems, input_seed * 7 + 12, w.dtype);
  const std::vector<uint16_t> hv = kernels::RandomValues16(kv_elems, input_seed * 7 + 13, w.dtype);
  for (int64_t i = 0; i < rot.sets; ++i) {
    Set s{};
    void** ptrs[4] = {&s.q, &s.k, &s.v, &s.o};
    for (void** p : ptrs) {
      auto b = in->bufs_.Add(p == &s.k || p == &s.v ? kv_tensor_bytes : tensor_bytes);
      if (!b.IsOk()) return engine::Error{"input set " + std::to_string(i) + ": " + b.Message()};
      *p = *b;
    }
    STOF_RETURN_IF_ERROR(backend.CopyToDevice(s.q, hq.data(), tensor_bytes));
    STOF_RETURN_IF_ERROR(backend.CopyToDevice(s.k, hk.data(), kv_tensor_bytes));
    STOF_RETURN_IF_ERROR(backend.CopyToDevice(s.v, hv.data(), kv_tensor_bytes));
    STOF_RETURN_IF_ERROR(kernels::PoisonBuffer(s.o, tensor_bytes));
    in->sets_.push_back(s);
  }
  STOF_RETURN_IF_ERROR(backend.Synchronize());
  return in;
}

profiler::WorkFn MhaInputSets::Work(const kernels::PreparedMha& mha) {
  const kernels::PreparedMha* mp = &mha;
  return [this, mp](void* stream) {
    const Set& s = sets_[next_];
    next_ = (next_ + 1) % sets_.size();
    written_ = std::max(written_, next_ == 0 ? sets_.size() : next_);
    return mp->Launch(s.q, s.k, s.v, s.o, stream);
  };
}

engine::Expected<int64_t> MhaInputSets::CountNonFinite() const {
  int64_t total = 0;
  for (size_t i = 0; i < written_; ++i) {
    STOF_ASSIGN_OR_RETURN(auto bad,
                          kernels::CountNonFinite(sets_[i].o, elems_, dtype_));
    total += bad;
  }
  return total;
}

engine::Expected<MhaBenchTiming> TimeMhaBench(MhaInputSets& sets,
                                              const kernels::PreparedMha& mha,
                                              const engine::Workload& w,
                                              const MhaBenchCeilings& ceilings,
                                              const MhaBenchTimingOptions& o) {
  MhaBenchTiming t;
  const profiler::WorkFn work = sets.Work(mha);
  STOF_ASSIGN_OR_RETURN(auto lat, profiler::TimeWithCudaEvents(work, o.warmup, o.runs));
  t.latency = lat;
  // Every set was written by the timed launches: nothing may be NaN (a launch that faulted
  // silently would leave the poison).
  STOF_ASSIGN_OR_RETURN(auto bad, sets.CountNonFinite());
  if (bad != 0)
    return engine::Error{"timed outputs hold " + std::to_string(bad) +
                         " non-finite values: a timed launch did not complete"};

  // DRAM bytes of one launch (CUPTI range profiler, auto range: one range per kernel).
  if (!o.counters) {
    t.counters_why_not = t.activity_why_not = "skipped (--no-counters)";
    return t;
  }
  auto prof = profiler::CreateProfiler();
  profiler::MeasureOptions mo;
  mo.label = o.label;
  mo.warmup = 1;
  mo.runs = 3;
  mo.activity_runs = 1;
  mo.range_mode = profiler::RangeMode::kAuto;
  mo.flop_count = mha.UsefulFlops(w);
  mo.min_bytes = MhaMinBytes(w);
  mo.peak_dram_bytes_per_s = ceilings.dram_bytes_per_s;
  mo.peak_flops_per_s = ceilings.tensor_flops_per_s;
  auto r = prof->Measure(work, mo);
  if (!r.IsOk()) {
    t.activity_why_not = t.counters_why_not = "profiler: " + r.Message();
    return t;
  }
  t.kernel_activity_us = r->summary.kernel_time_us;
  if (!r->availability.activity) t.activity_why_not = r->availability.activity_why_not;
  if (!r->availability.range) {
    t.counters_why_not = r->availability.range_why_not;
    return t;
  }
  t.dram_read = r->summary.dram_bytes_read;
  t.dram_write = r->summary.dram_bytes_write;
  t.lts_bytes = r->summary.lts_bytes;
  for (const profiler::MetricInfo& m : r->metrics)
    if (m.alias == profiler::kTensorPipeAlias && m.available) t.tensor_pipe_pct = r->SumMetric(m.name);
  if (!t.dram_read || !t.dram_write) t.counters_why_not = "the DRAM byte counters were not collected";
  return t;
}

double MhaMinBytes(const engine::Workload& w) {
  return 2.0 * 2.0 * static_cast<double>(kernels::QueryElements(w) + kernels::KeyElements(w));
}

MhaBenchFloor ComputeFloor(const kernels::PreparedMha& mha, const engine::Workload& w,
                           const MhaBenchCeilings& c, double median_us) {
  MhaBenchFloor f;
  f.useful_flops = mha.UsefulFlops(w);
  f.kernel_flops = mha.KernelFlops(w);
  f.min_bytes = MhaMinBytes(w);
  const double median_s = median_us * 1e-6;
  f.bytes_s = f.min_bytes / c.dram_bytes_per_s;
  f.flops_s = f.kernel_flops / c.tensor_flops_per_s;
  f.floor_s = std::max(f.bytes_s, f.flops_s);
  f.effective_tflops = f.useful_flops / median_s * 1e-12;
  f.ratio = median_s / f.floor_s;
  f.memory_bound = f.bytes_s >= f.flops_s;
  return f;
}

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
  if (c.packing.Packed())
    j["packed_gqa"] = {{"query_heads_per_tile", c.packing.group},
                       {"rows_per_head", c.packing.rows}};
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

}  // namespace stof::app
