// Writing and reading measured profiles: our JSON schema ("stof-profile", version 1,
// docs/profiler.md) and the Chrome trace-event format that Perfetto and chrome://tracing open.
// CUDA-free; used by `stof profile --json/--trace`, the tests, and later the studio (to open a
// profile measured on another machine).
// Invariants: ProfileFromJson(ProfileToJson(r)) == r for any result (non-finite doubles are
// written as null and read back as NaN); trace timestamps are microseconds from the first
// kernel's start, durations microseconds, one "X" event per kernel record.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/status.h"
#include "profiler/model/profile_result.h"

namespace stof::profiler {

inline constexpr const char* kProfileSchemaName = "stof-profile";

nlohmann::json ProfileToJson(const ProfileResult& result);
// Errors name the JSON path ("profile.json: activity.kernels[3].grid: expected 3 integers").
engine::Expected<ProfileResult> ProfileFromJson(const nlohmann::json& j,
                                                const std::string& what = "profile");

// {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}: per kernel an "X" event
// (pid = device, tid = stream, ts/dur in us, args: grid, block, registers, shared memory,
// correlation id, run); "M" events name the process and threads; otherData holds the label,
// device and summary so the file alone says what was run.
nlohmann::json ProfileToChromeTrace(const ProfileResult& result);

// Write (pretty-printed, invalid UTF-8 replaced) to `path` atomically (atomic_file.h); the
// error names the file.
engine::Status WriteJsonFile(const std::string& path, const nlohmann::json& j);

}  // namespace stof::profiler
