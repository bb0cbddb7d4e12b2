// Plan files (plan.h): SavePlan (validate, then write atomically through atomic_file.h) and
// LoadPlan (bounded read, strict parse through json_io.h, then PlanFromJson). Called by the
// CLI (`stof select --plan-out`, `stof plan validate`, `stof run --plan`), the tuner and the
// GUI. Every message names the file.
#include "engine/plan/plan.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "engine/core/atomic_file.h"
#include "engine/core/json_io.h"
#include "engine/plan/plan_internal.h"

namespace stof::engine {

namespace {

using Json = nlohmann::json;
using plan_detail::Print;

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

Status SavePlan(const std::string& path, const Plan& plan) {
  const Json j = PlanToJson(plan);
  auto check = PlanFromJson(j, path);
  if (!check.IsOk()) return MakeError(check.Message() + " (plan not written)");
  std::string text;
  Print(j, 0, text);
  text += "\n";

  // Readers never see half a plan, and a failed write keeps the old one (atomic_file.h).
  return WriteFileAtomic(path, text);
}

Expected<Plan> LoadPlan(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return MakeError(path + ": is a directory, not a plan file");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return MakeError(path + ": cannot open: " + ErrnoText());
  std::string text;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > static_cast<uintmax_t>(kMaxPlanFileBytes)) {
    std::fclose(f);
    return MakeError(path + ": file is too large (" + std::to_string(size) +
                     " bytes; plans are at most " + std::to_string(kMaxPlanFileBytes) + ")");
  }
  char buf[1 << 16];
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    text.append(buf, n);
    if (n < sizeof buf) break;
    if (text.size() > static_cast<size_t>(kMaxPlanFileBytes)) break;
  }
  const bool read_error = std::ferror(f) != 0;
  const std::string read_errno = read_error ? ErrnoText() : "";
  std::fclose(f);
  if (read_error) return MakeError(path + ": cannot read: " + read_errno);
  if (text.size() > static_cast<size_t>(kMaxPlanFileBytes)) {
    return MakeError(path + ": file is too large (plans are at most " +
                     std::to_string(kMaxPlanFileBytes) + " bytes)");
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return MakeError(path + ": file is empty" + (text.empty() ? "" : " (only whitespace)"));
  }
  STOF_ASSIGN_OR_RETURN(auto j, ParseJson(text, path));
  return PlanFromJson(j, path);
}

}  // namespace stof::engine
