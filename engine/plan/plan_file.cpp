// Plan files (plan.h): SavePlan (validate, then write atomically through atomic_file.h) and
// LoadPlan (a regular file of at most kMaxPlanFileBytes through file_read.h, strict parse
// through json_io.h, then PlanFromJson). Called by the
// CLI (`stof select --plan-out`, `stof plan validate`, `stof run --plan`), the tuner and the
// GUI. Every message names the file.
#include "engine/plan/plan.h"

#include <string>

#include "engine/core/atomic_file.h"
#include "engine/core/file_read.h"
#include "engine/core/json_io.h"
#include "engine/plan/plan_internal.h"

namespace stof::engine {

namespace {

using Json = nlohmann::json;
using plan_detail::Print;

}  // namespace

Status SavePlan(const std::string& path, const Plan& plan) {
  const Json j = PlanToJson(plan);
  auto check = PlanFromJson(j, path);
  if (!check.IsOk()) return MakeError(check.Message() + " (plan not written)");
  // mask.rows "last" keeps no count of its own: the rows are workload.q_len's.
  if (check->mask.last_rows != plan.mask.last_rows)
    return MakeError(path + ": mask.rows: the plan holds the last " +
                     std::to_string(plan.mask.last_rows) + " rows, workload.q_len says " +
                     std::to_string(check->mask.last_rows) + " (plan not written)");
  std::string text;
  Print(j, 0, text);
  text += "\n";

  // Readers never see half a plan, and a failed write keeps the old one (atomic_file.h).
  return WriteFileAtomic(path, text);
}

Expected<Plan> LoadPlan(const std::string& path) {
  STOF_ASSIGN_OR_RETURN(auto text, ReadFileBounded(path, {"plans", kMaxPlanFileBytes}));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return MakeError(path + ": file is empty" + (text.empty() ? "" : " (only whitespace)"));
  }
  STOF_ASSIGN_OR_RETURN(auto j, ParseJson(text, path));
  return PlanFromJson(j, path);
}

}  // namespace stof::engine
