// The interrupt handling of `stof` (interrupt.h). Why a watchdog thread: a signal handler may
// only do async-signal-safe work, so it records the signal and writes one byte to a pipe; the
// watchdog, an ordinary thread, may take the lock of the temporaries' list and print. Why a
// grace period instead of exiting at once: a command that stops on its own closes its files
// and says what it did; the grace only bounds the wait for code that cannot poll a flag.
#include "app/cli/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "engine/core/atomic_file.h"

namespace stof::app {

namespace {

std::atomic<bool> g_cancel{false};
std::atomic<int> g_signal{0};
int g_wake[2] = {-1, -1};  // the self-pipe: handler -> watchdog

extern "C" void OnSignal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  g_cancel.store(true);
  const char byte = 1;
  const ssize_t n = ::write(g_wake[1], &byte, 1);  // a full pipe already woke the watchdog
  (void)n;
}

// Waits for a signal, then up to the grace period (or a second signal), then ends the process.
void Watchdog() {
  char byte;
  while (::read(g_wake[0], &byte, 1) != 1) {
  }
  pollfd p{g_wake[0], POLLIN, 0};
  (void)::poll(&p, 1, kInterruptGraceMs);
  engine::RemoveTemporariesInProgress();
  ::_exit(ReportInterrupt());
}

}  // namespace

void InstallInterruptHandling() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  if (::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) return;  // no watchdog: signals act as before
  const int flags = ::fcntl(g_wake[0], F_GETFL);
  (void)::fcntl(g_wake[0], F_SETFL, flags & ~O_NONBLOCK);  // the watchdog blocks on it
  engine::AtomicFileSettings settings = engine::CurrentAtomicFileSettings();
  settings.cancel = &g_cancel;
  engine::SetAtomicFileSettings(settings);
  std::thread(Watchdog).detach();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

std::atomic<bool>* InterruptFlag() { return &g_cancel; }

int InterruptSignal() { return g_signal.load(); }

int ReportInterrupt() {
  static std::atomic<bool> reported{false};
  const int sig = g_signal.load();
  if (!reported.exchange(true)) {
    std::fprintf(stderr, "stof: interrupted (%s): stopped; output files are unchanged\n",
                 InterruptSignalName(sig));
    std::fflush(stderr);
  }
  return 128 + sig;
}

const char* InterruptSignalName(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

}  // namespace stof::app
