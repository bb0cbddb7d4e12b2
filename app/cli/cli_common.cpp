// Mask-source options and output helpers shared by the `stof` subcommands (cli_common.h).
#include "app/cli/cli_common.h"

#include <cstdio>
#include <iostream>

#include "engine/core/json_io.h"
#include "engine/mask/mask_io.h"

namespace stof::app {

void AddMaskSourceOptions(CLI::App* cmd, MaskSourceOptions* o, bool allow_file) {
  CLI::Option* file = nullptr;
  if (allow_file)
    file = cmd->add_option("--mask", o->mask_file, "Mask file (.png, .npy or .json)");
  std::string names;
  for (const std::string& n : engine::MaskPatternNames()) {
    if (n == "or" || n == "and" || n == "not") continue;  // compositions come from JSON files
    names += (names.empty() ? "" : ", ") + n;
  }
  CLI::Option* pattern =
      cmd->add_option("--pattern", o->pattern, "Generator: " + names + " (see docs/masks.md)");
  if (file) file->excludes(pattern);
  cmd->add_option("--seq", o->seq, "Sequence length L (1..32768)");
  cmd->add_option("--width", o->width, "Band width w (default sqrt(L))");
  cmd->add_option("--global", o->global, "Global width g (default sqrt(L))");
  cmd->add_option("--dilation", o->dilation, "Dilation rate r (dilated)")->capture_default_str();
  cmd->add_option("--fill", o->fill, "Random-block fill rate in [0, 1] (default 0.1)");
  cmd->add_option("--rand-block", o->rand_block, "Random-block size (see docs/masks.md)");
  cmd->add_option("--seed", o->seed, "Seed of random blocks")->capture_default_str();
  cmd->add_option("--docs", o->docs, "Document lengths (document pattern), summing to L")
      ->delimiter(',');
  cmd->add_flag("--causal", o->causal, "Also apply the causal rule j <= i");
}

engine::Expected<MaskSource> ResolveMaskSource(const MaskSourceOptions& o) {
  MaskSource src;
  if (!o.mask_file.empty()) {
    auto loaded = engine::LoadMask(o.mask_file);
    if (!loaded.IsOk()) return engine::Error{loaded.Message()};
    src.mask = std::move(loaded->mask);
    src.has_spec = loaded->has_spec;
    src.spec = loaded->spec;
    src.label = o.mask_file;
    return src;
  }
  if (o.pattern.empty()) return engine::Error{"no mask: give --mask FILE or --pattern NAME --seq L"};
  if (o.seq == 0) return engine::Error{"--seq: required with --pattern"};
  engine::MaskSpec spec;
  spec.pattern = o.pattern;
  spec.seq_len = o.seq;
  spec.width = o.width;
  spec.global = o.global;
  spec.dilation = o.dilation;
  spec.fill = o.fill;
  spec.block = o.rand_block;
  spec.seed = o.seed;
  spec.doc_lengths = o.docs;
  spec.causal = o.causal;
  auto resolved = engine::Resolve(spec);
  if (!resolved.IsOk()) return engine::Error{resolved.Message()};
  auto mask = engine::Generate(*resolved);
  if (!mask.IsOk()) return engine::Error{mask.Message()};
  src.mask = std::move(*mask);
  src.has_spec = true;
  src.spec = *resolved;
  src.label = engine::Describe(*resolved);
  return src;
}

int Fail(const std::string& cmd, const std::string& message) {
  std::fprintf(stderr, "stof %s: %s\n", cmd.c_str(), message.c_str());
  return kExitFailure;
}

void PrintJson(const nlohmann::json& j) { std::cout << engine::DumpJson(j, 2) << "\n"; }

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * fraction);
  return buf;
}

}  // namespace stof::app
