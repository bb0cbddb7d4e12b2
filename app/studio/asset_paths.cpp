// AssetsDir and ShippedProfiles (asset_paths.h).
#include "app/studio/asset_paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace stof::app {

namespace {
namespace fs = std::filesystem;

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return !p.empty() && fs::is_directory(p, ec);
}
}  // namespace

std::string AssetsDir() {
  if (const char* env = std::getenv("STOF_ASSETS_DIR"); env && IsDir(env)) return env;
#ifdef STOF_SOURCE_ASSETS
  if (IsDir(STOF_SOURCE_ASSETS)) return STOF_SOURCE_ASSETS;
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path near = exe.parent_path().parent_path().parent_path() / "assets";
    if (IsDir(near)) return near.lexically_normal().string();
  }
  return "";
}

std::vector<std::string> ShippedProfiles() {
  std::vector<std::string> out;
  const std::string dir = AssetsDir();
  if (dir.empty()) return out;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(dir) / "profiles", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string suffix = ".profile.json";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace stof::app
