// `stof`: the command-line front end over the engine. Subcommands live in cmd_*.cpp; this
// file only wires them into CLI11 and maps results to exit codes (0 ok, 2 a usage error, 1
// failed work; cli_common.h; 128 + the signal when interrupted: interrupt.h). Any exception
// that escapes a subcommand (a bug, or memory running out) ends here as one line and exit
// code 1, never std::terminate.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "app/cli/cli_common.h"
#include "app/cli/force_option.h"
#include "app/cli/interrupt.h"
#include "app/common/option_checks.h"
#include "engine/core/json_io.h"

namespace {

int Run(int argc, char** argv) {
  stof::app::InstallInterruptHandling();
  CLI::App app{"stof: STOF Studio command line (sparse attention masks, block layouts, kernel "
               "selection, op graphs and fusion schemes, plans)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "stof 0.1.0");
  stof::app::OneLineErrors(app, "stof");  // usage errors: one line, like the commands' own
  int exit_code = stof::app::kExitOk;
  stof::app::RegisterMaskCommand(app, &exit_code);
  stof::app::RegisterLayoutCommand(app, &exit_code);
  stof::app::RegisterSelectCommand(app, &exit_code);
  stof::app::RegisterPlanCommand(app, &exit_code);
  stof::app::RegisterProfileCommand(app, &exit_code);
  stof::app::RegisterBenchCommand(app, &exit_code);
  stof::app::RegisterDeviceCommand(app, &exit_code);
  stof::app::RegisterGraphCommand(app, &exit_code);
  stof::app::RegisterRunCommand(app, &exit_code);
  stof::app::RegisterTuneCommand(app, &exit_code);
  stof::app::AddForceOptions(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? stof::app::kExitOk : stof::app::kExitUsage;
  }
  if (stof::app::InterruptSignal() != 0) return stof::app::ReportInterrupt();
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stof: internal error: %s\n",
                 stof::engine::TextForMessage(e.what()).c_str());
  } catch (...) {
    std::fprintf(stderr, "stof: internal error: an unknown exception\n");
  }
  return stof::app::kExitFailure;
}
