// Mask-source options and output helpers shared by the `stof` subcommands (cli_common.h).
#include "app/cli/cli_common.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "app/common/option_checks.h"
#include "engine/core/json_io.h"
#include "engine/core/workload.h"
#include "engine/mask/mask_io.h"

namespace stof::app {

namespace {

// Each generator option and the MaskSpec field it sets: the engine's messages name the field
// ("mask.block: must be in 1..64"), the user typed the option ("--rand-block").
struct GeneratorOption {
  const char* option;
  const char* field;
};
constexpr GeneratorOption kGeneratorOptions[] = {
    {"--pattern", "pattern"}, {"--seq", "seq_len"},     {"--width", "width"},
    {"--global", "global"},   {"--dilation", "dilation"}, {"--fill", "fill"},
    {"--rand-block", "block"}, {"--seed", "seed"},       {"--docs", "doc_lengths"}};

// "mask.block[2]: ..." -> "--rand-block[2]: ...": a generator error in the user's words.
std::string InOptionNames(const std::string& message) {
  for (const GeneratorOption& g : kGeneratorOptions) {
    const std::string field = std::string("mask.") + g.field;
    if (message.compare(0, field.size(), field) == 0 && message.size() > field.size() &&
        (message[field.size()] == ':' || message[field.size()] == '['))
      return g.option + message.substr(field.size());
  }
  return message;
}

// The generators a --pattern may name (compositions come from JSON files only).
std::vector<std::string> PatternNames() {
  std::vector<std::string> names;
  for (const std::string& n : engine::MaskPatternNames())
    if (n != "or" && n != "and" && n != "not") names.push_back(n);
  return names;
}

// What to add to a "no such file" for --mask NAME: whether NAME is a generator's.
std::string MissingFileHint(const MaskSourceOptions& o) {
  std::error_code ec;
  if (std::filesystem::exists(o.mask_file, ec)) return "";
  const std::vector<std::string> names = PatternNames();
  const bool is_pattern = std::find(names.begin(), names.end(), o.mask_file) != names.end();
  if (o.file_use == MaskFileUse::kFile && is_pattern)
    return "; " + o.mask_file + " is a generator: use --pattern " + o.mask_file;
  if (o.file_use == MaskFileUse::kFileOrName)
    return ", and not a generator name either (" + OrList(names) + ")";
  return "";
}

}  // namespace

void AddMaskSourceOptions(CLI::App* cmd, MaskSourceOptions* o, MaskFileUse file_use) {
  o->file_use = file_use;
  CLI::Option* file = nullptr;
  if (file_use != MaskFileUse::kNone)
    file = cmd->add_option("--mask", o->mask_file, "Mask file (.png, .npy or .json)")
               ->check(NonEmpty());
  const std::vector<std::string> names = PatternNames();
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  CLI::Option* pattern = cmd->add_option("--pattern", o->pattern,
                                         "Generator: " + list + " (see docs/masks.md)")
                             ->check(OneOf(names));
  if (file) file->excludes(pattern);
  const int64_t max_len = o->max_seq;
  cmd->add_option("--seq", o->seq, "Sequence length L (1.." + std::to_string(max_len) + ")")
      ->check(IntRange(1, max_len));
  o->generator_options = {
      cmd->add_option("--width", o->width, "Band width w (default sqrt(L))")
          ->check(IntRange(1, max_len)),
      cmd->add_option("--global", o->global, "Global width g (default sqrt(L))")
          ->check(IntRange(0, max_len)),
      cmd->add_option("--dilation", o->dilation, "Dilation rate r (dilated)")
          ->capture_default_str()
          ->check(IntRange(0, max_len)),
      cmd->add_option("--fill", o->fill, "Random-block fill rate in [0, 1] (default 0.1)")
          ->check(NumberRange(0, 1)),
      cmd->add_option("--rand-block", o->rand_block, "Random-block size (see docs/masks.md)")
          ->check(IntRange(1, max_len)),
      cmd->add_option("--seed", o->seed, "Seed of random blocks")
          ->capture_default_str()
          ->check(SeedValue()),
      cmd->add_option("--docs", o->docs, "Document lengths (document pattern), summing to L")
          ->delimiter(',')
          ->check(IntRange(1, max_len)),
      cmd->add_flag("--causal", o->causal, "Also apply the causal rule j <= i")};
}

void AddWorkloadOptions(CLI::App* cmd, int64_t* batch, int64_t* heads, int64_t* head_dim,
                        const std::string& head_dim_names, const std::string& head_dim_note) {
  using W = engine::Workload;
  cmd->add_option("--batch", *batch, "Batch size B (1.." + std::to_string(W::kMaxBatch) + ")")
      ->capture_default_str()
      ->check(IntRange(1, W::kMaxBatch));
  cmd->add_option("--heads", *heads, "Attention heads H (1.." + std::to_string(W::kMaxHeads) + ")")
      ->capture_default_str()
      ->check(IntRange(1, W::kMaxHeads));
  cmd->add_option(head_dim_names, *head_dim,
                  "Head size d (1.." + std::to_string(W::kMaxHeadDim) + head_dim_note + ")")
      ->capture_default_str()
      ->check(IntRange(1, W::kMaxHeadDim));
}

void AddKernelDtypeOption(CLI::App* cmd, std::string* dtype) {
  cmd->add_option("--dtype", *dtype,
                  "Element type of q, k, v and o: f16, or bf16 (the Hopper kernel only, sm_90)")
      ->capture_default_str()
      ->check(OneOf({"f16", "bf16"}));
}

void AddShapeOptions(CLI::App* cmd, int64_t* kv_heads, int64_t* q_len) {
  using W = engine::Workload;
  cmd->add_option("--kv-heads", *kv_heads,
                  "Key/value heads (GQA: each serves --heads / --kv-heads query heads; 1 = MQA; "
                  "0 = --heads). Grouped heads run on the Hopper kernel (sm_90)")
      ->capture_default_str()
      ->check(IntRange(0, W::kMaxHeads));
  cmd->add_option("--q-len", *q_len,
                  "Query rows: the mask's last N rows over all --seq keys, as a KV cache's "
                  "prefill or decode step (N = 1) runs them; 0 = the key length. Other lengths "
                  "run on the Hopper kernel (sm_90)")
      ->capture_default_str()
      ->check(IntRange(0, W::kMaxSeqLen));
}

engine::Status ApplyShapeOptions(int64_t kv_heads, int64_t q_len, engine::Workload* w,
                                 engine::Mask* mask) {
  if (kv_heads > 0 && (kv_heads > w->heads || w->heads % kv_heads != 0))
    return engine::MakeError("--kv-heads: expected a divisor of --heads " +
                             std::to_string(w->heads) + ", got " + std::to_string(kv_heads));
  if (q_len > w->seq_len)
    return engine::MakeError("--q-len: expected at most the key length " +
                             std::to_string(w->seq_len) + ", got " + std::to_string(q_len));
  w->kv_heads = kv_heads == w->heads ? 0 : kv_heads;
  if (q_len > 0 && q_len < w->seq_len) {
    if (mask->Rows() != q_len) {
      STOF_ASSIGN_OR_RETURN(*mask, mask->LastRows(q_len, "--q-len"));
    }
    w->q_len = q_len;
  }
  return engine::Status::Ok();
}

std::string GivenGeneratorOption(const MaskSourceOptions& o) {
  for (const CLI::Option* opt : o.generator_options)
    if (opt->count() > 0) return opt->get_name();
  return "";
}

namespace {
// The generator's spec from the options, resolved with seq_len up to max_len; refuses an
// option the pattern would ignore.
engine::Expected<engine::MaskSpec> ResolveGeneratorSpec(const MaskSourceOptions& o,
                                                        int64_t max_len) {
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
  auto resolved = engine::Resolve(spec, max_len);
  if (!resolved.IsOk()) return engine::Error{InOptionNames(resolved.Message())};
  // An option the pattern would ignore is a mistake, not a no-op.
  const std::vector<std::string> takes = engine::MaskPatternParams(o.pattern);
  const auto taken = [&](const GeneratorOption& g) {
    return std::find(takes.begin(), takes.end(), g.field) != takes.end();
  };
  for (const CLI::Option* opt : o.generator_options) {
    if (opt->count() == 0) continue;
    for (const GeneratorOption& g : kGeneratorOptions) {
      if (opt->get_name() != g.option || taken(g)) continue;
      std::string its;
      for (const GeneratorOption& t : kGeneratorOptions)
        if (taken(t)) its += std::string(t.option) + ", ";
      return engine::Error{opt->get_name() + ": does not apply to --pattern " + o.pattern +
                           " (its options: " + its + "--seq and --causal; docs/masks.md)"};
    }
  }
  return resolved;
}
}  // namespace

engine::Expected<MaskSource> ResolveMaskSource(const MaskSourceOptions& o) {
  MaskSource src;
  if (!o.mask_file.empty()) {
    if (const std::string given = GivenGeneratorOption(o); !given.empty())
      return engine::Error{given + ": does not apply to a mask file (--mask " + o.mask_file +
                           " holds the whole mask; the generator's options go with --pattern)"};
    auto loaded = engine::LoadMask(o.mask_file);
    if (!loaded.IsOk()) return engine::Error{loaded.Message() + MissingFileHint(o)};
    src.mask = std::move(loaded->mask);
    if (o.seq != 0 && o.seq != src.mask.Rows())
      return engine::Error{"--mask: " + o.mask_file + " is " + std::to_string(src.mask.Rows()) +
                           " x " + std::to_string(src.mask.Cols()) + ", --seq is " +
                           std::to_string(o.seq)};
    src.has_spec = loaded->has_spec;
    src.spec = loaded->spec;
    src.label = o.mask_file;
    return src;
  }
  STOF_ASSIGN_OR_RETURN(engine::MaskSpec resolved,
                        ResolveGeneratorSpec(o, engine::Mask::kMaxLen));
  auto mask = engine::Generate(resolved);
  if (!mask.IsOk()) return engine::Error{InOptionNames(mask.Message())};
  src.mask = std::move(*mask);
  src.has_spec = true;
  src.spec = resolved;
  src.label = engine::Describe(resolved);
  return src;
}

namespace {
// The spec of --mask FILE when it is a JSON generator spec past Mask::kMaxLen (which LoadMask
// refuses); nothing for any other file, whose errors LoadMask reports.
std::optional<engine::MaskSpec> LongSpecFile(const MaskSourceOptions& o) {
  if (o.mask_file.empty() || o.max_seq <= engine::Mask::kMaxLen) return std::nullopt;
  const auto format = engine::MaskFormatFromPath(o.mask_file);
  if (!format.IsOk() || *format != engine::MaskFormat::kJson) return std::nullopt;
  auto spec = engine::LoadMaskSpec(o.mask_file);
  if (!spec.IsOk() || spec->seq_len <= engine::Mask::kMaxLen) return std::nullopt;
  return *spec;
}
}  // namespace

bool IsLongGenerator(const MaskSourceOptions& o) {
  if (!o.mask_file.empty()) return LongSpecFile(o).has_value();
  return o.seq > engine::Mask::kMaxLen;
}

engine::Expected<MaskSource> ResolveCacheRowsSource(const MaskSourceOptions& o,
                                                    int64_t q_len) {
  if (!IsLongGenerator(o)) return ResolveMaskSource(o);
  using engine::Mask;
  STOF_ASSIGN_OR_RETURN(engine::MaskSpec spec, ResolveLongSpec(o));
  const int64_t keys = spec.seq_len;
  const std::string L = std::to_string(keys);
  const std::string what = o.mask_file.empty() ? "--seq: " + L : "--mask: " + o.mask_file;
  if (q_len < 1 || q_len >= keys)
    return engine::Error{what + " is past a square mask's " + std::to_string(Mask::kMaxLen) +
                         "; give --q-len N (a KV cache's last N query rows over the " + L +
                         " keys, N x " + L + " <= " + std::to_string(Mask::kMaxLen) + " x " +
                         std::to_string(Mask::kMaxLen) + ")"};
  if (q_len > Mask::kMaxCells / keys)
    return engine::Error{"--q-len: " + std::to_string(q_len) + " rows over " + L +
                         " keys is more than a mask's " + std::to_string(Mask::kMaxLen) + " x " +
                         std::to_string(Mask::kMaxLen) + " cells; at most " +
                         std::to_string(Mask::kMaxCells / keys)};
  // Only the last rows' runs, never the whole mask's.
  auto rows = engine::RowRuns::LastRowsOfSpec(spec, q_len, "--q-len");
  if (!rows.IsOk()) return engine::Error{InOptionNames(rows.Message())};
  MaskSource src;
  src.mask = std::move(*rows);
  src.has_spec = true;
  src.label = engine::Describe(spec);
  src.spec = std::move(spec);
  return src;
}

engine::Expected<engine::MaskSpec> ResolveLongSpec(const MaskSourceOptions& o) {
  if (o.mask_file.empty()) return ResolveGeneratorSpec(o, o.max_seq);
  // A JSON spec file past Mask::kMaxLen: the same refusals as ResolveMaskSource's.
  if (const std::string given = GivenGeneratorOption(o); !given.empty())
    return engine::Error{given + ": does not apply to a mask file (--mask " + o.mask_file +
                         " holds the whole mask; the generator's options go with --pattern)"};
  STOF_ASSIGN_OR_RETURN(engine::MaskSpec spec, engine::LoadMaskSpec(o.mask_file));
  if (o.seq != 0 && o.seq != spec.seq_len)
    return engine::Error{"--mask: " + o.mask_file + " is " + std::to_string(spec.seq_len) +
                         " x " + std::to_string(spec.seq_len) + ", --seq is " +
                         std::to_string(o.seq)};
  auto resolved = engine::Resolve(spec, o.max_seq);
  if (!resolved.IsOk()) return engine::Error{"--mask: " + o.mask_file + ": " + resolved.Message()};
  return resolved;
}

engine::Expected<RowRunsSource> ResolveRowRunsSource(const MaskSourceOptions& o) {
  STOF_ASSIGN_OR_RETURN(engine::MaskSpec resolved, ResolveLongSpec(o));
  auto runs = engine::RowRuns::FromSpec(resolved);
  if (!runs.IsOk()) return engine::Error{InOptionNames(runs.Message())};
  return RowRunsSource{std::move(*runs), resolved, engine::Describe(resolved)};
}

int Fail(const std::string& cmd, const std::string& message) {
  std::fprintf(stderr, "stof %s: %s\n", cmd.c_str(), message.c_str());
  return message.rfind("--", 0) == 0 ? kExitUsage : kExitFailure;
}

void PrintJson(const std::string& format, const nlohmann::json& j) {
  if (!j.is_object() || j.contains("schema")) {
    std::cout << engine::DumpJson(j, 2) << "\n";
    return;
  }
  nlohmann::json out = j;
  out["format"] = "stof-" + format;
  out["format_version"] = kJsonFormatVersion;
  std::cout << engine::DumpJson(out, 2) << "\n";
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * fraction);
  return buf;
}

}  // namespace stof::app
