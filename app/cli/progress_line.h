// The progress display of `stof`'s long commands on stderr: `tune` (the search) and `run`
// (the check, the weights and each measurement; minutes per layer on the CPU reference). A
// line per stage, "[  12.3 s] stof: stage 1: fusion", and a status line: redrawn in place on
// a terminal (at most every 0.1 s), its own line every 5 s otherwise (logs, CI), so a long run
// is never silent. Quiet (--quiet, --json) prints nothing. Used by cmd_tune.cpp, cmd_run_internal.h.
#pragma once

#include <chrono>
#include <string>

namespace stof::app {

class ProgressLine {
 public:
  explicit ProgressLine(bool quiet);
  // A new stage: its line, "[elapsed] who: stage".
  void Stage(double elapsed_s, const std::string& who, const std::string& stage);
  // Whether Status() would draw now; callers skip building the detail text otherwise.
  bool Due() const;
  // "[####......] detail  12.3 s, ~40 s left": the bar when fraction >= 0, the time left when
  // remaining_s >= 0. Skipped until Due() unless `force`.
  void Status(double fraction, const std::string& detail, double elapsed_s, double remaining_s,
              bool force = false);
  // Clears a status line left on a terminal (before the command prints its result).
  void Finish();

 private:
  bool m_quiet, m_tty, m_drawn = false;
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace stof::app
