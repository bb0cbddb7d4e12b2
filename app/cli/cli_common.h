// Shared pieces of the `stof` CLI subcommands: the mask-source options (--mask FILE or
// --pattern NAME --seq L + generator parameters), --json output, and error reporting.
// Used by every cmd_*.cpp. Failures print one line "stof <cmd>: <message>" to stderr. Exit
// codes (docs/user-guide.md, "Exit codes"): 0 ok, 2 a usage error (CLI11's parse errors, and a
// message that starts with the option it is about: "--width: must be in 1..64, got 100"),
// 1 failed work (a file that cannot be read or written, a refused plan, no GPU).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/mask/row_runs.h"

namespace stof::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// The longest --seq of the commands that work from a generator's row runs without its L x L
// bits (`mask`, `layout`: engine/mask/row_runs.h); the others stop at Mask::kMaxLen.
inline constexpr int64_t kLongSeqLen = int64_t{1} << 18;  // 262144

// Where --mask is offered: not at all (a generator only), as a file, or as a file or a
// generator name (`run`, `tune`, `profile layer`: --mask bigbird).
enum class MaskFileUse { kNone, kFile, kFileOrName };

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
  MaskFileUse file_use = MaskFileUse::kFile;
  // The longest --seq the command takes (set before AddMaskSourceOptions): Mask::kMaxLen, or
  // kLongSeqLen where a generator past Mask::kMaxLen is built as row runs.
  int64_t max_seq = engine::Mask::kMaxLen;
  // The generator's options as registered (--width .. --causal; --pattern and --seq apart):
  // none of them applies to a mask file, so one given with --mask is refused. The options
  // belong to the CLI::App, which outlives every copy of these settings.
  std::vector<const CLI::Option*> generator_options;
};

// A mask and where it came from (a spec when generated or loaded from a JSON spec file).
struct MaskSource {
  engine::Mask mask;
  bool has_spec = false;
  engine::MaskSpec spec;
  std::string label;  // "bigbird L=1024 ..." or the file name
};

// Adds --mask (unless kNone), --pattern, --seq, --width, --global, --dilation, --fill,
// --rand-block, --seed, --docs, --causal, each with its range check (app/common).
void AddMaskSourceOptions(CLI::App* cmd, MaskSourceOptions* o,
                          MaskFileUse file_use = MaskFileUse::kFile);
// Adds --batch, --heads and --head-dim (named `head_dim_names`, e.g. "--dim,--head-dim") with
// the engine's ranges (engine::Workload); `head_dim_note` is added to that option's help.
void AddWorkloadOptions(CLI::App* cmd, int64_t* batch, int64_t* heads, int64_t* head_dim,
                        const std::string& head_dim_names = "--head-dim",
                        const std::string& head_dim_note = "");
// Adds --kv-heads (key/value heads: GQA / MQA when fewer than --heads; 0 = --heads) and --q-len
// (query rows: a KV cache's last N positions over the --seq keys; 0 = the key length).
void AddShapeOptions(CLI::App* cmd, int64_t* kv_heads, int64_t* q_len);
// --dtype f16 | bf16 (the Hopper kernel only) of `stof select` and `stof bench mha`; the
// value is checked, so engine::ParseDType of it succeeds.
void AddKernelDtypeOption(CLI::App* cmd, std::string* dtype);
// Applies --kv-heads and --q-len to a workload whose seq_len is the mask's key length and to
// its mask: a square mask keeps its last q_len rows (causal stays aligned to the bottom right);
// one that already holds q_len rows (ResolveCacheRowsSource past Mask::kMaxLen) is kept.
// Errors name the option.
engine::Status ApplyShapeOptions(int64_t kv_heads, int64_t q_len, engine::Workload* w,
                                 engine::Mask* mask);

// The first generator option given on the command line ("--causal"), or "".
std::string GivenGeneratorOption(const MaskSourceOptions& o);
// The mask of --mask FILE or of the generator. Refused: a generator option given with a file,
// --seq given and not the file's L, a missing file (with a hint when the name is a
// generator's). The generator's own checks name the option ("--width: must be in 1..64").
engine::Expected<MaskSource> ResolveMaskSource(const MaskSourceOptions& o);
// Whether the options ask for a generator longer than Mask::kMaxLen (built as row runs):
// --pattern with a longer --seq, or (where o.max_seq allows) --mask FILE.json holding such a
// spec (read once here and again by ResolveLongSpec).
bool IsLongGenerator(const MaskSourceOptions& o);
// The mask of a call of `q_len` query rows (0: as many as keys) over the source's keys: up to
// Mask::kMaxLen what ResolveMaskSource gives (square; ApplyShapeOptions cuts its rows); a
// generator past it (o.max_seq up to kLongSeqLen: a KV cache's decode or prefill rows) built
// as row runs, of which only the last q_len rows become bits, so q_len must be given and
// q_len x L stay within a mask's cells (Mask::kMaxCells); the messages name --seq / --q-len.
engine::Expected<MaskSource> ResolveCacheRowsSource(const MaskSourceOptions& o, int64_t q_len);
// A generator up to o.max_seq as row runs (never its L x L bits), with its resolved spec and
// label; the same checks and messages as ResolveMaskSource.
struct RowRunsSource {
  engine::RowRuns runs;
  engine::MaskSpec spec;
  std::string label;
};
engine::Expected<RowRunsSource> ResolveRowRunsSource(const MaskSourceOptions& o);
// The resolved spec of a generator up to o.max_seq (what ResolveRowRunsSource builds runs
// from), for the forms that need neither bits nor runs (engine/layout/block_rule.h); from
// --pattern, or from a JSON spec file (--mask) past Mask::kMaxLen.
engine::Expected<engine::MaskSpec> ResolveLongSpec(const MaskSourceOptions& o);

// Prints "stof <cmd>: <message>" to stderr and returns kExitUsage when the message starts
// with an option's name ("--seq: ..."), else kExitFailure.
int Fail(const std::string& cmd, const std::string& message);
// Every --json output: 2-space JSON on stdout, invalid UTF-8 (a path's raw bytes, a message
// quoting a binary file) replaced by U+FFFD instead of aborting (engine::DumpJson). An object
// gets "format": "stof-<format>" and "format_version": kJsonFormatVersion, unless it names its
// own schema (profiles: "schema" and "version").
inline constexpr int kJsonFormatVersion = 1;
void PrintJson(const std::string& format, const nlohmann::json& j);
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
