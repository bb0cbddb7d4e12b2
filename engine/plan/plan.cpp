// The plan model's helpers (plan.h): the accepted chosen_by and tuning-method values, the
// names of segment measurements, the schema version a plan is written at, and the mask a plan
// describes (PlanMaskToMask: the square mask, or a KV cache's last rows of a spec). The plan
// <-> JSON conversion is in plan_read.cpp (parse and validate) and plan_write.cpp (JSON and
// text), plan files in plan_file.cpp. Used by the loader, the tuner, the CLI, the GUI and
// replay (plan_choices.h).
#include "engine/plan/plan.h"

#include <string>

#include "engine/mask/row_runs.h"
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

int PlanSchemaVersionFor(const Plan& plan) {
  if (plan.mask.last_rows > 0 || plan.workload.seq_len > Mask::kMaxLen) return 3;
  return plan.workload.IsSquareMha() ? 1 : 2;
}

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

namespace {

// Re-roots a generator's "mask.width: ..." at this plan's "mask.spec.width: ...".
Status SpecError(const std::string& prefix, const std::string& msg) {
  if (msg.rfind("mask.", 0) == 0) return MakeError(prefix + "mask.spec" + msg.substr(4));
  return MakeError(prefix + "mask.spec: " + msg);
}

// The last mask.last_rows rows of the spec's mask, from the row runs of those rows only.
Expected<Mask> LastRowsOfSpec(const PlanMask& mask, const std::string& prefix) {
  if (!mask.has_spec)
    return MakeError(prefix + "mask.rows: \"last\" needs a generator spec (mask.spec)");
  auto resolved = Resolve(mask.spec, Mask::kMaxSide);
  if (!resolved.IsOk()) return SpecError(prefix, resolved.Message());
  auto m = RowRuns::LastRowsOfSpec(*resolved, mask.last_rows, "mask.rows (workload.q_len)");
  if (!m.IsOk()) {  // the row count ("mask.rows (workload.q_len): ...") or the generator's
    const std::string& msg = m.Message();
    if (msg.rfind("mask.rows", 0) == 0) return MakeError(prefix + msg);
    return SpecError(prefix, msg);
  }
  return m;
}

}  // namespace

Expected<Mask> PlanMaskToMask(const PlanMask& mask, const std::string& name) {
  const std::string prefix = Prefix(name);
  const bool last = mask.last_rows > 0;
  Mask m;
  if (last) {
    STOF_ASSIGN_OR_RETURN(m, LastRowsOfSpec(mask, prefix));
  } else if (mask.has_spec) {
    auto g = Generate(mask.spec);
    if (!g.IsOk()) return SpecError(prefix, g.Message());
    m = std::move(*g);
  } else if (mask.inline_mask) {
    m = *mask.inline_mask;
  } else {
    return MakeError(prefix + "mask: has neither a spec nor inline data");
  }
  const int64_t rows = last ? mask.last_rows : mask.seq_len;
  if (m.Rows() != rows || m.Cols() != mask.seq_len) {
    return MakeError(prefix + "mask: the mask is " + std::to_string(m.Rows()) + " x " +
                     std::to_string(m.Cols()) + ", expected " + std::to_string(rows) + " x " +
                     std::to_string(mask.seq_len) +
                     (last ? " (workload.q_len x mask.seq_len)" : " (mask.seq_len)"));
  }
  const std::string hash = m.HashHex();
  if (hash != mask.hash) {
    const std::string now =
        !mask.has_spec ? "its inline data hashes to "
        : last ? "its spec's last " + std::to_string(rows) + " rows now generate "
               : "its spec now generates ";
    return MakeError(prefix + "mask.hash: the plan was made for mask " + mask.hash + ", but " +
                     now + hash + (mask.has_spec ? " (did the generator change?)" : ""));
  }
  return m;
}

}  // namespace stof::engine
