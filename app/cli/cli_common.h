// Shared pieces of the `stof` CLI subcommands: the mask-source options (--mask FILE or
// --pattern NAME --seq L + generator parameters), --json output, and error reporting.
// Used by every cmd_*.cpp. Failures print one line "stof <cmd>: <message>" to stderr and map
// to exit code 1; CLI11 usage errors keep CLI11's codes (all within 1..127).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"

namespace stof::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;

struct MaskSourceOptions {
  std::string mask_file;
  std::string pattern;
  int64_t seq = 0;
  int64_t width = -1;
  int64_t global = -1;
  int64_t dilation = 1;
  double fill = -1;
  int64_t rand_block = -1;
  uint64_t seed = 0;
  std::vector<int64_t> docs;
  bool causal = false;
};

// A mask and where it came from (a spec when generated or loaded from a JSON spec file).
struct MaskSource {
  engine::Mask mask;
  bool has_spec = false;
  engine::MaskSpec spec;
  std::string label;  // "bigbird L=1024 ..." or the file name
};

// Adds --mask (when allow_file), --pattern, --seq, --width, --global, --dilation, --fill,
// --rand-block, --seed, --docs, --causal.
void AddMaskSourceOptions(CLI::App* cmd, MaskSourceOptions* o, bool allow_file = true);
engine::Expected<MaskSource> ResolveMaskSource(const MaskSourceOptions& o);

// Prints "stof <cmd>: <message>" to stderr and returns kExitFailure.
int Fail(const std::string& cmd, const std::string& message);
// Every --json output: 2-space JSON on stdout, invalid UTF-8 (a path's raw bytes, a message
// quoting a binary file) replaced by U+FFFD instead of aborting (engine::DumpJson).
void PrintJson(const nlohmann::json& j);
// "19.19 %"
std::string Percent(double fraction);

// Subcommand registration; each returns the exit code through *exit_code when it runs.
void RegisterMaskCommand(CLI::App& app, int* exit_code);
void RegisterLayoutCommand(CLI::App& app, int* exit_code);
void RegisterSelectCommand(CLI::App& app, int* exit_code);
void RegisterPlanCommand(CLI::App& app, int* exit_code);
void RegisterProfileCommand(CLI::App& app, int* exit_code);  // cmd_profile.cpp
void RegisterBenchCommand(CLI::App& app, int* exit_code);    // cmd_bench.cpp
void RegisterDeviceCommand(CLI::App& app, int* exit_code);
void RegisterGraphCommand(CLI::App& app, int* exit_code);    // cmd_graph.cpp
void RegisterRunCommand(CLI::App& app, int* exit_code);      // cmd_run.cpp
void RegisterTuneCommand(CLI::App& app, int* exit_code);     // cmd_tune.cpp
void RegisterBenchChainCommand(CLI::App* bench, int* exit_code);  // cmd_bench_chain.cpp

}  // namespace stof::app
