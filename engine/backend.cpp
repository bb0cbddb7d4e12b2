// ValidateMhaCall: the checks every Backend runs on an MhaCall before touching memory (see
// backend.h). Used by CpuBackend and kernels/' CudaBackend. Messages start with "mha call: "
// and name the field ("mha call: config.block_m: ...") so the CLI and the GUI can show them.
// It checks only what holds for every backend; dtype support is each backend's own check.
#include "engine/backend.h"

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace stof::engine {

std::string MhaConfigText(int64_t block_m, int64_t block_n, int64_t num_warps) {
  return std::to_string(block_m) + "x" + std::to_string(block_n) + " warps " +
         std::to_string(num_warps);
}

namespace {

bool IsOneOf(int64_t v, std::initializer_list<int64_t> allowed) {
  for (int64_t a : allowed)
    if (v == a) return true;
  return false;
}

}  // namespace

Status ValidateMhaCall(const MhaCall& call) {
  const std::string what = "mha call: ";
  STOF_RETURN_IF_ERROR(call.workload.Validate("mha call: workload"));
  if (call.mask == nullptr) return MakeError(what + "mask: must not be null");
  const int64_t L = call.workload.seq_len;
  if (call.mask->Rows() != L || call.mask->Cols() != L) {
    return MakeError(what + "mask: size " + std::to_string(call.mask->Rows()) + " x " +
                     std::to_string(call.mask->Cols()) + " does not match workload.seq_len " +
                     std::to_string(L) + " (expected " + std::to_string(L) + " x " +
                     std::to_string(L) + ")");
  }
  if (call.q == nullptr) return MakeError(what + "q: must not be null");
  if (call.k == nullptr) return MakeError(what + "k: must not be null");
  if (call.v == nullptr) return MakeError(what + "v: must not be null");
  if (call.o == nullptr) return MakeError(what + "o: must not be null");
  for (auto [name, st] : {std::pair{"q_strides", call.q_strides}, {"kv_strides", call.kv_strides},
                          {"o_strides", call.o_strides}}) {
    if (st.Packed()) continue;
    if (st.batch < 0 || st.head < 0 || st.row < call.workload.head_dim)
      return MakeError(what + name + ": expected batch, head >= 0 and row >= head_dim " +
                       std::to_string(call.workload.head_dim) + ", got " +
                       std::to_string(st.batch) + ", " + std::to_string(st.head) + ", " +
                       std::to_string(st.row));
  }
  // The kernel parameters are checked whatever the kernel: a row-wise call ignores them, but a
  // plan carrying junk there is still a broken plan.
  const MhaConfig& c = call.config;
  if (!IsOneOf(c.block_m, {16, 32, 64, 128}))
    return MakeError(what + "config.block_m: expected one of 16, 32, 64, 128, got " +
                     std::to_string(c.block_m));
  if (!IsOneOf(c.block_n, {16, 32, 64, 128}))
    return MakeError(what + "config.block_n: expected one of 16, 32, 64, 128, got " +
                     std::to_string(c.block_n));
  if (!IsOneOf(c.num_warps, {1, 2, 4, 8}) && !IsHopperMhaWarps(c.num_warps))
    return MakeError(what + "config.num_warps: expected one of 1, 2, 4, 8 (mma.sync), 5, 12 "
                            "(Hopper), got " +
                     std::to_string(c.num_warps));
  if (c.kernel != MhaKernel::kRowWise && c.kernel != MhaKernel::kBlockWise)
    return MakeError(what + "config.kernel: unknown value " +
                     std::to_string(static_cast<int>(c.kernel)));
  return Status::Ok();
}

const char* MhaVariantName(MhaVariant v) {
  switch (v) {
    case MhaVariant::kUnfused: return "unfused";
    case MhaVariant::kDecomposed: return "sd";
    case MhaVariant::kRecomposed: return "sdf";
    default: return "fused";
  }
}

Expected<MhaVariant> ParseMhaVariant(const std::string& s, const std::string& what) {
  if (s == "fused" || s == "f") return MhaVariant::kFused;
  if (s == "unfused" || s == "u" || s == "native") return MhaVariant::kUnfused;
  if (s == "sd" || s == "decomposed") return MhaVariant::kDecomposed;
  if (s == "sdf" || s == "recomposed") return MhaVariant::kRecomposed;
  return MakeError(what + ": expected fused, unfused, sd or sdf, got '" + s + "'");
}

namespace {
Status NotSupported(const Backend& b, const char* op) {
  return MakeError(b.Name() + ": " + op + " is not supported by this backend");
}
}  // namespace

Status Backend::RunGemm(const GemmCall&) { return NotSupported(*this, "gemm"); }
Status Backend::RunBatchedGemm(const BatchedGemmCall&) {
  return NotSupported(*this, "batched gemm");
}
Status Backend::RunEpilogue(const EpilogueCall&) { return NotSupported(*this, "epilogue"); }
Status Backend::RunNorm(const NormCall&) { return NotSupported(*this, "norm"); }
Status Backend::RunGemmNorm(const GemmNormCall&) { return NotSupported(*this, "gemm_norm"); }
Status Backend::RunGemmChain(const GemmChainCall&) { return NotSupported(*this, "gemm_chain"); }
Status Backend::RunScores(const ScoresCall&) { return NotSupported(*this, "attention scores"); }
Status Backend::RunHeads(const HeadsCall&) { return NotSupported(*this, "head split/merge"); }

Expected<std::vector<ParamMap>> Backend::GemmParamChoices(const GemmCall&) {
  return std::vector<ParamMap>{ParamMap{}};
}
Expected<std::vector<ParamMap>> Backend::NormParamChoices(const NormCall&) {
  return std::vector<ParamMap>{ParamMap{}};
}
Expected<std::vector<ParamMap>> Backend::GemmNormParamChoices(const GemmNormCall&) {
  return std::vector<ParamMap>{ParamMap{}};
}
Expected<std::vector<ParamMap>> Backend::GemmChainParamChoices(const GemmChainCall&) {
  return std::vector<ParamMap>{ParamMap{}};
}
Expected<std::vector<MhaConfig>> Backend::MhaConfigChoices(const Workload&, const Mask&) {
  return std::vector<MhaConfig>{MhaConfig{}};
}

Expected<Measurement> Backend::Measure(const std::function<Status(void* stream)>& work,
                                       const MeasureOptions& options) {
  if (options.repeats < 1)
    return MakeError("measure: repeats: must be at least 1, got " +
                     std::to_string(options.repeats));
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < options.warmup; ++i) {
    STOF_RETURN_IF_ERROR(work(nullptr));
    STOF_RETURN_IF_ERROR(Synchronize());
  }
  std::vector<double> us;
  const auto begin = Clock::now();
  for (int i = 0; i < options.repeats; ++i) {
    const auto t0 = Clock::now();
    STOF_RETURN_IF_ERROR(work(nullptr));
    STOF_RETURN_IF_ERROR(Synchronize());
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (std::chrono::duration<double>(Clock::now() - begin).count() > options.max_seconds) break;
  }
  std::sort(us.begin(), us.end());
  Measurement m;
  m.median_us = us[us.size() / 2];
  m.min_us = us.front();
  m.repeats = static_cast<int>(us.size());
  m.method = "host clock";
  return m;
}

}  // namespace stof::engine
