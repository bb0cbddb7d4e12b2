// `stof mask`: generate a mask (or convert a mask file) and print its statistics; --out
// writes it as PNG, NPY or JSON (chosen by extension). A generator longer than Mask::kMaxLen
// (up to kLongSeqLen) is built as row runs (engine/mask/row_runs.h), never as L x L bits.
#include <cstdio>
#include <memory>

#include "app/cli/cli_common.h"
#include "app/common/option_checks.h"
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_json.h"

namespace stof::app {

namespace {
struct MaskArgs {
  MaskSourceOptions source;
  std::string out;
  bool json = false;
};

// What both forms print and write alike: where the mask came from, its size and counts.
struct MaskStats {
  std::string label;
  int64_t rows = 0, cols = 0, nnz = 0;
  double Density() const {
    const double cells = static_cast<double>(rows) * static_cast<double>(cols);
    return cells > 0 ? static_cast<double>(nnz) / cells : 0.0;
  }
};

nlohmann::json StatsJson(const MaskStats& m) {
  return {{"source", m.label}, {"rows", m.rows},          {"cols", m.cols},
          {"nnz", m.nnz},      {"density", m.Density()}, {"sparsity", 1.0 - m.Density()}};
}

void PrintStats(const MaskStats& m) {
  std::printf("mask      %s\n", m.label.c_str());
  std::printf("size      %lld x %lld\n", static_cast<long long>(m.rows),
              static_cast<long long>(m.cols));
  std::printf("nnz       %lld\n", static_cast<long long>(m.nnz));
  std::printf("density   %s\n", Percent(m.Density()).c_str());
  std::printf("sparsity  %s\n", Percent(1.0 - m.Density()).c_str());
}

// A generator past Mask::kMaxLen: its statistics from the row runs. No hash (the bits' hash
// would read L x L bits) and no file (every mask file form holds the bits).
int RunLongMask(const MaskArgs& a) {
  if (!a.out.empty())
    return Fail("mask", "--out: a mask longer than " + std::to_string(engine::Mask::kMaxLen) +
                            " has no file form (the files hold L x L bits); its generator "
                            "options (or --json's spec) describe it");
  auto src = ResolveRowRunsSource(a.source);
  if (!src.IsOk()) return Fail("mask", src.Message());
  const engine::RowRuns& r = src->runs;
  const MaskStats stats{src->label, r.Rows(), r.Cols(), r.Count()};
  if (a.json) {
    nlohmann::json j = StatsJson(stats);
    j["spec"] = engine::MaskSpecToJson(src->spec);
    j["form"] = "row_runs";
    j["runs"] = r.RunCount();
    j["memory_bytes"] = r.MemoryBytes();
    PrintJson("mask", j);
    return kExitOk;
  }
  PrintStats(stats);
  std::printf("form      row runs: %lld runs, %lld bytes (L x L bits would take %.0f MiB)\n",
              static_cast<long long>(r.RunCount()), static_cast<long long>(r.MemoryBytes()),
              static_cast<double>(r.Rows()) * static_cast<double>(r.Cols()) / 8 / (1 << 20));
  return kExitOk;
}

int RunMask(const MaskArgs& a) {
  if (IsLongGenerator(a.source)) return RunLongMask(a);
  auto src = ResolveMaskSource(a.source);
  if (!src.IsOk()) return Fail("mask", src.Message());
  const engine::Mask& m = src->mask;
  if (!a.out.empty()) {
    engine::Status s = engine::SaveMask(a.out, m, src->has_spec ? &src->spec : nullptr);
    if (!s.IsOk()) return Fail("mask", s.Message());
  }
  const MaskStats stats{src->label, m.Rows(), m.Cols(), m.Count()};
  if (a.json) {
    nlohmann::json j = StatsJson(stats);
    if (src->has_spec) j["spec"] = engine::MaskSpecToJson(src->spec);
    j["hash"] = m.HashHex();
    if (!a.out.empty()) j["out"] = a.out;
    PrintJson("mask", j);
    return kExitOk;
  }
  PrintStats(stats);
  std::printf("hash      %s\n", m.HashHex().c_str());
  if (!a.out.empty()) std::printf("wrote     %s\n", a.out.c_str());
  return kExitOk;
}
}  // namespace

void RegisterMaskCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<MaskArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mask", "Generate a mask (--pattern) or read one (--mask) and print nnz, density, sparsity");
  args->source.max_seq = kLongSeqLen;
  AddMaskSourceOptions(cmd, &args->source);
  cmd->add_option("--out", args->out, "Write the mask to FILE (.png, .npy or .json)")
      ->check(NonEmpty());
  cmd->add_flag("--json", args->json, "Print machine-readable JSON");
  cmd->callback([args, exit_code] { *exit_code = RunMask(*args); });
}

}  // namespace stof::app
