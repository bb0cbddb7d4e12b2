// Number formatting for messages and reports: integers as decimal text (the sizes, indices and
// limits that error messages name), printf-style one-number formatting and byte counts in
// decimal units (kB, MB, GB, as the benchmark and profile reports print them). Used by the
// engine's and kernels' validation messages, the CLI's bench and profile commands,
// app/common/mha_bench.cpp and profiler/.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace stof::engine {

// An integer as decimal text.
inline std::string Str(int64_t v) { return std::to_string(v); }

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
