// Ctrl-C, SIGTERM and SIGHUP for every `stof` command, in one place: main() calls
// InstallInterruptHandling once before parsing. A signal sets the cancel flag that the
// engine's long jobs poll (the tuner between candidates, every AtomicFile write, so no output
// is replaced after it) and wakes a watchdog thread. The command then stops on its own, or,
// if it is still running kInterruptGraceMs later (a whole-model measurement, a PNG being
// encoded, a kernel), the watchdog removes the temporaries of the writes in progress and
// ends the process. Either way the exit code is 128 + the signal (130 for SIGINT, 143 for
// SIGTERM), old output files are unchanged and no temporary is left (docs/robustness.md,
// "Interrupting a command"). A second signal ends the wait at once.
#pragma once

#include <atomic>

namespace stof::app {

inline constexpr int kInterruptGraceMs = 500;

// Installs the handlers and starts the watchdog; also points engine::AtomicFile's cancel flag
// at InterruptFlag(). Idempotent.
void InstallInterruptHandling();
// The cancel flag of the engine's long jobs (TuneOptions::cancel).
std::atomic<bool>* InterruptFlag();
// 0, or the signal that asked the command to stop.
int InterruptSignal();
// Prints "stof: interrupted (SIGINT): stopped; ..." once (main or the watchdog, whichever
// comes first) and gives the exit code, 128 + the signal.
int ReportInterrupt();
// "SIGINT", "SIGTERM", "SIGHUP".
const char* InterruptSignalName(int sig);

}  // namespace stof::app
