// The plan model's helpers (plan.h): the accepted chosen_by and tuning-method values, the
// names of segment measurements, and the mask a plan describes (PlanMaskToMask). The plan
// <-> JSON conversion is in plan_read.cpp (parse and validate) and plan_write.cpp (JSON and
// text), plan files in plan_file.cpp. Used by the loader, the tuner, the CLI, the GUI and
// replay (plan_choices.h).
#include "engine/plan/plan.h"

#include <string>

#include "engine/plan/plan_internal.h"

namespace stof::engine {

namespace {

using plan_detail::Prefix;

}  // namespace

const std::vector<std::string>& PlanChosenByValues() {
  static const std::vector<std::string> kValues = {"eq1+eq2", "eq2", "override", "tuned",
                                                    "shape"};
  return kValues;
}

int PlanSchemaVersionFor(const Plan& plan) { return plan.workload.IsSquareMha() ? 1 : 2; }

const std::vector<std::string>& PlanRunsDecidedByValues() {
  static const std::vector<std::string> kValues = {"kernels", "engine model", "tuned"};
  return kValues;
}

MhaConfig PlanRunningMha(const PlanMha& mha) {
  if (!mha.runs) return MhaConfig{mha.kernel, mha.block_m, mha.block_n, mha.num_warps};
  if (mha.runs->kernel == MhaKernel::kRowWise) return MhaConfig{MhaKernel::kRowWise, 64, 64, 4};
  return MhaConfig{MhaKernel::kBlockWise, mha.runs->block_m, mha.runs->block_n, mha.runs->num_warps};
}

std::string PlanSegmentWhat(size_t index) { return "segment " + std::to_string(index + 1); }

std::optional<int64_t> PlanSegmentNumber(const std::string& what) {
  constexpr size_t kPrefix = 8;  // "segment "
  if (what.size() <= kPrefix || what.size() > kPrefix + 9 || what.rfind("segment ", 0) != 0)
    return std::nullopt;
  int64_t n = 0;
  for (size_t i = kPrefix; i < what.size(); ++i) {
    if (what[i] < '0' || what[i] > '9') return std::nullopt;
    n = n * 10 + (what[i] - '0');
  }
  if (n < 1) return std::nullopt;
  return n;
}

const std::vector<std::string>& PlanTuningMethods() {
  static const std::vector<std::string> kValues = {"analytical", "stof", "gtco", "mcfuser",
                                                   "exhaustive"};
  return kValues;
}

Expected<Mask> PlanMaskToMask(const PlanMask& mask, const std::string& name) {
  const std::string prefix = Prefix(name);
  Mask m;
  if (mask.has_spec) {
    auto g = Generate(mask.spec);
    if (!g.IsOk()) {
      // Re-root the generator's "mask.width: ..." at this plan's "mask.spec.width: ...".
      const std::string& msg = g.Message();
      if (msg.rfind("mask.", 0) == 0) return MakeError(prefix + "mask.spec" + msg.substr(4));
      return MakeError(prefix + "mask.spec: " + msg);
    }
    m = std::move(*g);
  } else if (mask.inline_mask) {
    m = *mask.inline_mask;
  } else {
    return MakeError(prefix + "mask: has neither a spec nor inline data");
  }
  if (m.Rows() != mask.seq_len || m.Cols() != mask.seq_len) {
    return MakeError(prefix + "mask: the mask is " + std::to_string(m.Rows()) + " x " +
                     std::to_string(m.Cols()) + ", expected " + std::to_string(mask.seq_len) +
                     " x " + std::to_string(mask.seq_len) + " (mask.seq_len)");
  }
  const std::string hash = m.HashHex();
  if (hash != mask.hash) {
    return MakeError(prefix + "mask.hash: the plan was made for mask " + mask.hash + ", but " +
                     (mask.has_spec ? "its spec now generates " : "its inline data hashes to ") +
                     hash + (mask.has_spec ? " (did the generator change?)" : ""));
  }
  return m;
}

}  // namespace stof::engine
