// `--force` on every `stof` command that writes a file, in one place: main() calls
// AddForceOptions after the commands are registered. A command writes a file when it has one
// of the output options listed in force_option.cpp (--out, --export, --plan-out, --trace); the
// flag lets engine::AtomicFile replace a read-only output file, as `cp -f` does (without it
// the write is refused and the file kept). Also installs the printer of AtomicFile's notices
// ("m.npy: had 1 other hard link ...") as "stof: note: ..." lines on stderr.
#pragma once

#include <CLI/CLI.hpp>

namespace stof::app {

void AddForceOptions(CLI::App& app);

}  // namespace stof::app
