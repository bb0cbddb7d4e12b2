// ProgressLine (progress_line.h).
#include "app/cli/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace stof::app {

ProgressLine::ProgressLine(bool quiet) : m_quiet(quiet), m_tty(::isatty(2) != 0) {}

void ProgressLine::Stage(double elapsed_s, const std::string& who, const std::string& stage) {
  if (m_quiet) return;
  if (m_tty) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "[%6.1f s] %s: %s\n", elapsed_s, who.c_str(), stage.c_str());
  std::fflush(stderr);
  m_drawn = false;
}

bool ProgressLine::Due() const {
  if (m_quiet) return false;
  const double since =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_last).count();
  return since >= (m_tty ? 0.1 : 5.0);
}

void ProgressLine::Status(double fraction, const std::string& detail, double elapsed_s,
                          double remaining_s, bool force) {
  if (m_quiet || (!force && !Due())) return;
  m_last = std::chrono::steady_clock::now();
  char bar[40] = "";
  if (fraction >= 0) {  // a bar only when the planned work is known
    const int width = 20;
    const int filled = static_cast<int>(fraction * width + 0.5);
    bar[0] = '[';
    for (int i = 0; i < width; ++i) bar[1 + i] = i < filled ? '#' : '.';
    bar[width + 1] = ']';
    bar[width + 2] = ' ';
    bar[width + 3] = 0;
  }
  char left[40] = "";
  if (remaining_s >= 0) std::snprintf(left, sizeof left, ", ~%.0f s left", remaining_s);
  std::fprintf(stderr, "%s%s%s  %.1f s%s%s", m_tty ? "\r\033[K" : "", bar, detail.c_str(),
               elapsed_s, left, m_tty ? "" : "\n");
  std::fflush(stderr);
  m_drawn = true;
}

void ProgressLine::Finish() {
  if (!m_quiet && m_tty && m_drawn) std::fprintf(stderr, "\r\033[K");
  m_drawn = false;
}

}  // namespace stof::app
