// The `stof` command lines that reproduce what the studio shows ("copy as CLI command"): the
// mask source as --pattern flags when the mask is a plain generator (compositions and edited
// masks need a file: --mask PATH), then `stof layout ... --block BMxBN` and
// `stof select ... --batch --heads --head-dim --device`. No ImGui here; the GUI test runs
// the commands from --dump-state and compares their output with the studio's figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/core/workload.h"
#include "engine/mask/mask_spec.h"

namespace stof::app {

struct CliMaskSource {
  std::optional<engine::MaskSpec> spec;  // the generator, when the mask still matches it
  std::string path;                      // the file the mask was last opened from or saved to
  bool saved = false;                    // the file holds the current mask
};

struct CliCommands {
  std::string mask_args;  // "--pattern bigbird --seq 1024 ..." or "--mask PATH"
  std::string layout;     // full `stof layout` line
  std::string select;     // full `stof select` line
  std::string note;       // why a file is needed, or "" when the commands stand alone
};

CliCommands MakeCliCommands(const CliMaskSource& source, int64_t block_m, int64_t block_n,
                            const engine::Workload& workload, const std::string& device_name);

// Quotes a shell word when it holds anything but [A-Za-z0-9_./:=,+-].
std::string ShellQuote(const std::string& word);

}  // namespace stof::app
