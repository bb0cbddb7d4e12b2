// Pieces shared by the `stof profile` subcommands: copy and gemm live in cmd_profile.cpp, mha in
// cmd_bench.cpp and cmd_profile_mha.cpp (it reuses the MHA benchmark's choice, reference check
// and rotating inputs), layer and ladder in cmd_profile_layer.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/device/device_spec.h"
#include "profiler/model/profile_result.h"

namespace stof::app {

// Options of every `stof profile` subcommand (the workload's own fields aside).
struct ProfileArgs {
  std::string workload;  // "copy", "gemm" or "mha"
  int64_t bytes = int64_t{256} << 20;
  int64_t m = 4096, n = 4096, k = 4096;
  std::string metrics;
  int runs = 50, warmup = 5, activity_runs = 5, max_ranges = 64;
  std::string range = "auto";
  bool json = false, overhead = false, no_activity = false, no_counters = false;
  std::string trace;
};
// --metrics, --runs, --warmup, --activity-runs, --range, --max-ranges, --overhead,
// --no-activity, --no-counters, --json, --trace.
void AddCommonOptions(CLI::App* c, ProfileArgs* a);

// "a,b,default" -> metric names; "default" expands to profiler::DefaultMetricNames().
std::vector<std::string> SplitMetrics(const std::string& text);
// The human-readable report of one measurement (latency, kernels, counters, summary, parts).
void PrintProfileHuman(const profiler::ProfileResult& r);
// The measurement options the profile flags ask for (--range already checked to be auto or
// user), with the device's peaks for the summary.
profiler::MeasureOptions MeasureOptionsFrom(const ProfileArgs& a, const engine::DeviceSpec& spec);
// Writes --trace, prints the result (--json or human), and maps it to the exit code: 0 only
// when the latency was measured and the workload's output check (`check`, a note) passed.
int ReportProfile(const std::string& cmd, const ProfileArgs& a, const profiler::ProfileResult& r,
                  bool check_ok, const std::string& check);
// Adds `mha` under the `profile` subcommand (defined in cmd_bench.cpp).
void AddProfileMhaCommand(CLI::App* profile, int* exit_code);
// Adds `layer` and `ladder` under the `profile` subcommand (cmd_profile_layer.cpp).
void AddProfileLayerCommands(CLI::App* profile, int* exit_code);

}  // namespace stof::app
