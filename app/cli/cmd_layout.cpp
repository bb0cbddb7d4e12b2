// `stof layout`: a mask's block-sparse (BSR) layout at BM x BN: full / part / empty blocks,
// index bytes, wasted work, load balance; --export writes the layout (or, with --flex, the
// FlexAttention block-mask form) as JSON. A generator longer than Mask::kMaxLen (up to
// kLongSeqLen) is laid out from its per-block rule where it has one (dilated band, sliding
// window, global, Longformer, BigBird, random blocks: engine/layout/block_rule.h), else from
// its row runs (--json "form"). --q-len N lays out the mask's last N rows (a KV cache's step).
#include <cstdio>
#include <memory>

#include "app/cli/cli_common.h"
#include "app/common/block_size.h"
#include "app/common/option_checks.h"
#include "engine/layout/block_layout.h"
#include "engine/layout/block_rule.h"
#include "engine/layout/layout_export.h"

namespace stof::app {

namespace {
struct LayoutArgs {
  MaskSourceOptions source;
  std::string block = "64x64";
  std::string export_path;
  int64_t q_len = 0;  // > 0: the layout of the mask's last q_len rows (a KV cache's step)
  bool flex = false;
  bool json = false;
};

nlohmann::json StatsJson(const engine::LayoutStats& s) {
  return {{"block_m", s.block_m},
          {"block_n", s.block_n},
          {"block_rows", s.block_rows},
          {"block_cols", s.block_cols},
          {"nnz", s.nnz},
          {"density", s.density},
          {"full_blocks", s.full_blocks},
          {"part_blocks", s.part_blocks},
          {"empty_blocks", s.empty_blocks},
          {"valid_block_ratio", s.valid_block_ratio},
          {"index_bytes", s.index_bytes},
          {"bitmap_bytes", s.bitmap_bytes},
          {"block_kernel_elements", s.block_kernel_elements},
          {"wasted_fraction", s.wasted_fraction},
          {"min_blocks_per_row", s.min_blocks_per_row},
          {"max_blocks_per_row", s.max_blocks_per_row}};
}

int RunLayout(const LayoutArgs& a) {
  auto bs = ParseBlockSize(a.block, "--block");
  if (!bs.IsOk()) return Fail("layout", bs.Message());
  if (a.flex && a.export_path.empty()) return Fail("layout", "--flex: needs --export FILE");
  std::string label;
  const char* form = "bits";  // what the layout was built from
  engine::Expected<engine::BlockLayout> layout = engine::BlockLayout();
  if (a.q_len > 0) {
    // A KV cache's step: the last q_len rows over every key (past Mask::kMaxLen from the
    // generator's row runs), as `select` and `bench mha --q-len` run them.
    auto src = ResolveCacheRowsSource(a.source, a.q_len);
    if (!src.IsOk()) return Fail("layout", src.Message());
    engine::Workload w;  // only its key length: ApplyShapeOptions' check and cut of the rows
    w.seq_len = src->mask.Cols();
    if (engine::Status s = ApplyShapeOptions(0, a.q_len, &w, &src->mask); !s.IsOk())
      return Fail("layout", s.Message());
    label = src->label + ", its last " + std::to_string(a.q_len) +
            (a.q_len == 1 ? " row" : " rows");
    layout = engine::BlockLayout::Build(src->mask, bs->block_m, bs->block_n);
  } else if (IsLongGenerator(a.source)) {
    auto spec = ResolveLongSpec(a.source);
    if (!spec.IsOk()) return Fail("layout", spec.Message());
    label = engine::Describe(*spec);
    if (const auto rule = engine::MakeBlockRule(*spec)) {
      // Each block from the generator's rule (no runs: a dilated band's are one per key, a
      // BigBird row's hundreds).
      form = "block_rule";
      layout = engine::BlockLayout::Build(*rule, bs->block_m, bs->block_n);
    } else {
      auto src = ResolveRowRunsSource(a.source);
      if (!src.IsOk()) return Fail("layout", src.Message());
      form = "row_runs";
      layout = engine::BlockLayout::Build(src->runs, bs->block_m, bs->block_n);
    }
  } else {
    auto src = ResolveMaskSource(a.source);
    if (!src.IsOk()) return Fail("layout", src.Message());
    label = src->label;
    layout = engine::BlockLayout::Build(src->mask, bs->block_m, bs->block_n);
  }
  if (!layout.IsOk()) return Fail("layout", layout.Message());
  const engine::LayoutStats s = layout->Stats();

  if (!a.export_path.empty()) {
    const auto format = a.flex ? engine::LayoutExportFormat::kFlex : engine::LayoutExportFormat::kJson;
    if (engine::Status st = engine::SaveLayout(a.export_path, *layout, format); !st.IsOk())
      return Fail("layout", st.Message());
  }
  if (a.json) {
    nlohmann::json j = StatsJson(s);
    j["source"] = label;
    j["form"] = form;
    if (!a.export_path.empty()) j["export"] = a.export_path;
    PrintJson("layout", j);
    return kExitOk;
  }
  const double total = static_cast<double>(s.block_rows * s.block_cols);
  std::printf("mask          %s\n", label.c_str());
  std::printf("block         %lld x %lld  (%lld x %lld blocks)\n",
              static_cast<long long>(s.block_m), static_cast<long long>(s.block_n),
              static_cast<long long>(s.block_rows), static_cast<long long>(s.block_cols));
  std::printf("density       %s  (nnz %lld)\n", Percent(s.density).c_str(),
              static_cast<long long>(s.nnz));
  std::printf("full blocks   %lld  (%s)\n", static_cast<long long>(s.full_blocks),
              Percent(s.full_blocks / total).c_str());
  std::printf("part blocks   %lld  (%s)\n", static_cast<long long>(s.part_blocks),
              Percent(s.part_blocks / total).c_str());
  std::printf("empty blocks  %lld  (%s)\n", static_cast<long long>(s.empty_blocks),
              Percent(s.empty_blocks / total).c_str());
  std::printf("valid ratio   %s\n", Percent(s.valid_block_ratio).c_str());
  std::printf("index bytes   %lld  (+ %lld bytes of part bitmaps)\n",
              static_cast<long long>(s.index_bytes), static_cast<long long>(s.bitmap_bytes));
  std::printf("wasted work   %s of block-kernel FLOPs fall on masked elements\n",
              Percent(s.wasted_fraction).c_str());
  std::printf("blocks/row    min %lld, max %lld\n", static_cast<long long>(s.min_blocks_per_row),
              static_cast<long long>(s.max_blocks_per_row));
  if (!a.export_path.empty())
    std::printf("wrote         %s%s\n", a.export_path.c_str(), a.flex ? " (FlexAttention form)" : "");
  return kExitOk;
}
}  // namespace

void RegisterLayoutCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<LayoutArgs>();
  CLI::App* cmd = app.add_subcommand("layout", "Block-sparse layout of a mask at BM x BN");
  args->source.max_seq = kLongSeqLen;
  AddMaskSourceOptions(cmd, &args->source);
  cmd->add_option("--block", args->block, "Block size BMxBN, powers of two 16..256 (or one number)")
      ->capture_default_str();  // ParseBlockSize, first thing RunLayout does
  cmd->add_option("--q-len", args->q_len,
                  "The layout of the mask's last N rows over all its keys (a KV cache's prefill "
                  "or decode step, N = 1: the blocks it reads); with it --seq may pass 32768 "
                  "while N x L <= 32768 x 32768")
      ->check(IntRange(1, engine::Mask::kMaxLen));
  cmd->add_option("--export", args->export_path, "Write the layout as JSON to FILE")
      ->check(NonEmpty());
  cmd->add_flag("--flex", args->flex,
                "With --export: write FlexAttention's block-mask form (kv_num_blocks, kv_indices, "
                "full_kv_num_blocks, full_kv_indices)");
  cmd->add_flag("--json", args->json, "Print machine-readable JSON");
  cmd->callback([args, exit_code] { *exit_code = RunLayout(*args); });
}

}  // namespace stof::app
