// Recent files: the bounded, most-recent-first list of mask files that stof-studio keeps
// across sessions in $XDG_CONFIG_HOME/stof-studio/recent.json (else ~/.config/...). Called by
// the studio (app/studio/studio.cpp) at start and after each open / save; tested by
// tests/engine/recent_files_test.cpp. Invariants of every list these functions return: at
// most `max` entries, no empty or duplicate paths, no path longer than kMaxRecentPathChars.
// A missing file is an empty list, not an error; a corrupt one is an error naming the file
// and the field, and the caller carries on with an empty list. Saving writes a temporary file
// beside the target and renames it over, so a crash never leaves a half-written list.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace stof::engine {

inline constexpr size_t kMaxRecentFiles = 10;
inline constexpr size_t kMaxRecentPathChars = 4096;  // PATH_MAX on Linux

// `path` moved (or added) to the front; duplicates, empty or over-long paths dropped; cut to
// `max` entries.
std::vector<std::string> AddRecentFile(const std::vector<std::string>& list, const std::string& path,
                                       size_t max = kMaxRecentFiles);

// {"format": "stof-studio-recent", "version": 1, "files": ["/a/m.npy", ...]}
std::string RecentFilesToJson(const std::vector<std::string>& list);
// Parses that text (`name` prefixes the messages: "recent.json: files[2]: expected a string,
// got 3"); duplicates and empty entries are dropped and the list cut to `max`.
Expected<std::vector<std::string>> ParseRecentFiles(const std::string& text, const std::string& name,
                                                    size_t max = kMaxRecentFiles);

// The file's path from the environment's values (null when unset): XDG_CONFIG_HOME when it is
// an absolute path (the XDG spec ignores relative ones), else HOME + "/.config".
Expected<std::string> RecentFilesPath(const char* xdg_config_home, const char* home);

// Reads the list; a missing file gives an empty list. Files over 1 MiB are refused.
Expected<std::vector<std::string>> LoadRecentFiles(const std::string& path, size_t max = kMaxRecentFiles);
// Creates the parent directory, writes `path`.tmp.<unique> and renames it to `path`.
Status SaveRecentFiles(const std::string& path, const std::vector<std::string>& list);

}  // namespace stof::engine
