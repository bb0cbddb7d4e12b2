// MakeCliCommands (cli_command.h). Flag names follow app/cli/cli_common.cpp
// (AddMaskSourceOptions) and cmd_layout.cpp / cmd_select.cpp.
#include "app/studio/cli_command.h"

#include <cstdio>
#include <cstdlib>

namespace stof::app {

std::string ShellQuote(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == ',' ||
                    c == '+' || c == '-';
    plain = plain && ok;
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {
bool IsComposition(const engine::MaskSpec& s) {
  return s.pattern == "or" || s.pattern == "and" || s.pattern == "not";
}

std::string SpecArgs(const engine::MaskSpec& s) {
  std::string a = "--pattern " + s.pattern + " --seq " + std::to_string(s.seq_len);
  auto add = [&](const char* flag, const std::string& v) { a += std::string(" ") + flag + " " + v; };
  if (s.width >= 0) add("--width", std::to_string(s.width));
  if (s.global >= 0) add("--global", std::to_string(s.global));
  if (s.dilation != 1) add("--dilation", std::to_string(s.dilation));
  if (s.fill >= 0) {
    // The shortest decimal that reads back as the same double ("0.1", not "0.10000000000000001").
    char buf[32];
    for (int digits = 6; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, s.fill);
      if (std::strtod(buf, nullptr) == s.fill) break;
    }
    add("--fill", buf);
  }
  if (s.block >= 0) add("--rand-block", std::to_string(s.block));
  if (s.seed != 0) add("--seed", std::to_string(s.seed));
  if (!s.doc_lengths.empty()) {
    std::string d;
    for (int64_t n : s.doc_lengths) {
      if (!d.empty()) d += ',';
      d += std::to_string(n);
    }
    add("--docs", d);
  }
  if (s.causal) a += " --causal";
  return a;
}
}  // namespace

CliCommands MakeCliCommands(const CliMaskSource& source, int64_t block_m, int64_t block_n,
                            const engine::Workload& workload, const std::string& device_name) {
  CliCommands c;
  if (source.spec && !IsComposition(*source.spec)) {
    c.mask_args = SpecArgs(*source.spec);
  } else {
    c.mask_args = "--mask " + ShellQuote(source.path.empty() ? "MASK.json" : source.path);
    if (source.path.empty() || !source.saved)
      c.note = source.spec ? "a composition has no --pattern form: save the mask (JSON keeps the "
                             "spec) and the commands read that file"
                           : "an edited mask has no --pattern form: save it first, the commands "
                             "read that file";
  }
  c.layout = "stof layout " + c.mask_args + " --block " + std::to_string(block_m) + "x" +
             std::to_string(block_n);
  c.select = "stof select " + c.mask_args + " --batch " + std::to_string(workload.batch) +
             " --heads " + std::to_string(workload.heads) + " --head-dim " +
             std::to_string(workload.head_dim) +
             (workload.kv_heads > 0 ? " --kv-heads " + std::to_string(workload.kv_heads) : "") +
             (workload.q_len > 0 ? " --q-len " + std::to_string(workload.q_len) : "") +
             " --device " + ShellQuote(device_name);
  return c;
}

}  // namespace stof::app
