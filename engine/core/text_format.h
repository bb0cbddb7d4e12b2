// Number formatting for messages and reports: printf-style one-number formatting and byte
// counts in decimal units (kB, MB, GB, as the benchmark and profile reports print them). Used
// by the CLI's bench and profile commands, app/common/mha_bench.cpp and profiler/.
#pragma once

#include <cstdio>
#include <string>

namespace stof::engine {

// One number through a printf format ("%.3e", "%.2f"); the result is at most 63 characters.
inline std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "12.345 MB": three decimals from 1 kB on, decimal units.
inline std::string FormatBytes(double b) {
  if (b >= 1e9) return Fmt("%.3f GB", b * 1e-9);
  if (b >= 1e6) return Fmt("%.3f MB", b * 1e-6);
  if (b >= 1e3) return Fmt("%.3f kB", b * 1e-3);
  return Fmt("%.0f B", b);
}

}  // namespace stof::engine
