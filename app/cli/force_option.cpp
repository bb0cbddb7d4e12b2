// AddForceOptions (force_option.h). The flag is handled when it is parsed (trigger_on_parse),
// before any command's callback writes a file.
#include "app/cli/force_option.h"

#include <cstdio>
#include <string>

#include "engine/core/atomic_file.h"

namespace stof::app {

namespace {

// The options through which commands name a file they write.
constexpr const char* kOutputOptions[] = {"--out", "--export", "--plan-out", "--trace"};

void PrintNotice(const std::string& text) { std::fprintf(stderr, "stof: note: %s\n", text.c_str()); }

bool WritesFiles(CLI::App& cmd) {
  for (const char* name : kOutputOptions)
    if (cmd.get_option_no_throw(name) != nullptr) return true;
  return false;
}

void AddTo(CLI::App& cmd) {
  if (WritesFiles(cmd)) {
    cmd.add_flag_callback(
           "--force",
           [] {
             engine::AtomicFileSettings s = engine::CurrentAtomicFileSettings();
             s.replace_read_only = true;
             engine::SetAtomicFileSettings(s);
           },
           "Replace an output file even when it is read-only (as cp -f does)")
        ->trigger_on_parse();
  }
  for (CLI::App* sub : cmd.get_subcommands({})) AddTo(*sub);
}

}  // namespace

void AddForceOptions(CLI::App& app) {
  engine::AtomicFileSettings s = engine::CurrentAtomicFileSettings();
  s.notice = PrintNotice;
  engine::SetAtomicFileSettings(s);
  for (CLI::App* sub : app.get_subcommands({})) AddTo(*sub);
}

}  // namespace stof::app
