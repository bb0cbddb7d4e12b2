// Recent files list (recent_files.h): bounding, JSON form, location and atomic saving. The JSON
// readers of json_read.h throw inside this file only; every public function catches.
#include "engine/core/recent_files.h"

#include <filesystem>

#include "engine/core/atomic_file.h"
#include "engine/core/file_read.h"
#include "engine/core/json_io.h"
#include "engine/core/json_read.h"

namespace stof::engine {

namespace {
constexpr const char* kFormat = "stof-studio-recent";
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 20;

bool Keep(const std::string& path) { return !path.empty() && path.size() <= kMaxRecentPathChars; }
}  // namespace

std::vector<std::string> AddRecentFile(const std::vector<std::string>& list, const std::string& path,
                                       size_t max) {
  std::vector<std::string> out;
  if (max == 0) return out;
  if (Keep(path)) out.push_back(path);
  for (const std::string& p : list) {
    if (out.size() >= max) break;
    if (!Keep(p)) continue;
    bool seen = false;
    for (const std::string& q : out) seen = seen || q == p;
    if (!seen) out.push_back(p);
  }
  return out;
}

std::string RecentFilesToJson(const std::vector<std::string>& list) {
  const nlohmann::json j = {{"format", kFormat}, {"version", 1}, {"files", list}};
  return DumpJson(j, 2) + "\n";
}

Expected<std::vector<std::string>> ParseRecentFiles(const std::string& text, const std::string& name,
                                                    size_t max) {
  const std::string prefix = name.empty() ? "" : name + ": ";
  STOF_ASSIGN_OR_RETURN(auto parsed, ParseJson(text, name));
  try {
    const json_read::Json& j = parsed;
    const json_read::ObjectReader r(j, name, prefix, {"format", "version", "files"});
    if (r.String("format") != kFormat)
      json_read::Fail(r.PathOf("format"), std::string("expected \"") + kFormat + "\", got " +
                                              json_read::Shown(r.Require("format")));
    r.Int("version", 1, 1);
    const json_read::Json& files = r.Array("files");
    std::vector<std::string> list;
    for (size_t i = 0; i < files.size(); ++i)
      list.push_back(json_read::ReadString(files[i], json_read::Index(r.PathOf("files"), i), true));
    // Dedup and bound through the same rule as adding (the first entry is just the newest).
    if (list.empty()) return list;
    const std::string first = list.front();
    list.erase(list.begin());
    return AddRecentFile(list, first, max);
  } catch (const json_read::JsonPathError& e) {
    return MakeError(e.what());
  } catch (const nlohmann::json::exception& e) {
    return MakeError(prefix + e.what());
  }
}

Expected<std::string> RecentFilesPath(const char* xdg_config_home, const char* home) {
  std::filesystem::path base;
  if (xdg_config_home && xdg_config_home[0] == '/') {
    base = xdg_config_home;
  } else if (home && home[0] != '\0') {
    base = std::filesystem::path(home) / ".config";
  } else {
    return MakeError("recent files: neither XDG_CONFIG_HOME (absolute) nor HOME is set");
  }
  return (base / "stof-studio" / "recent.json").string();
}

Expected<std::vector<std::string>> LoadRecentFiles(const std::string& path, size_t max) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::vector<std::string>{};
  STOF_ASSIGN_OR_RETURN(auto text, ReadFileBounded(path, {"recent-files lists", kMaxFileBytes}));
  return ParseRecentFiles(text, path, max);
}

Status SaveRecentFiles(const std::string& path, const std::vector<std::string>& list) {
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) return MakeError(target.parent_path().string() + ": cannot create: " + ec.message());
  }
  // Two studios saving at once each write their own temporary; the last rename wins whole.
  return WriteFileAtomic(path, RecentFilesToJson(list));
}

}  // namespace stof::engine
