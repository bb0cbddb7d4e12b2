// The option validators and the one-line error format of option_checks.h.
#include "app/common/option_checks.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/core/json_io.h"

namespace stof::app {

namespace {

// 'text', bounded and with control characters blanked (a value may be any bytes).
std::string Quoted(const std::string& text) { return "'" + engine::TextForMessage(text) + "'"; }

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Parses all of `text` as T in decimal; false on anything else (sign where T is unsigned,
// '+', spaces, hex, a fraction, overflow, and leading zeros: CLI11 converts with base 0, so
// "010" would become 8 after "10" was checked; CLI11 2.1's check() cannot rewrite the text).
template <typename T>
bool ParseDecimal(const std::string& text, T* out) {
  if (text.empty() || text[0] == '+') return false;
  const size_t digits = text[0] == '-' ? 1 : 0;
  if (text.size() > digits + 1 && text[digits] == '0') return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out, 10);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::string OrList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

CLI::Validator IntRange(int64_t lo, int64_t hi, const std::string& or_word) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi) +
                            (or_word.empty() ? "" : " or '" + or_word + "'");
  return CLI::Validator(
      [lo, hi, range, or_word](std::string& text) -> std::string {
        if (!or_word.empty() && text == or_word) return {};
        int64_t v = 0;
        if (!ParseDecimal(text, &v) || v < lo || v > hi)
          return "expected an integer in " + range + ", got " + Quoted(text);
        return {};
      },
      range);
}

CLI::Validator SeedValue() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t v = 0;
        if (!ParseDecimal(text, &v))
          return "expected an integer in 0..18446744073709551615, got " + Quoted(text);
        return {};
      },
      "0..2^64-1");
}

CLI::Validator NumberRange(double lo, double hi, bool lo_open) {
  // "in [0, 1]", or "> 0" without an upper bound.
  const std::string range =
      std::isinf(hi) ? (lo_open ? "> " : ">= ") + Number(lo)
                     : "in " + std::string(lo_open ? "(" : "[") + Number(lo) + ", " + Number(hi) + "]";
  return CLI::Validator(
      [lo, hi, lo_open, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
        const bool parsed = !text.empty() && end == text.c_str() + text.size();
        if (!parsed || !std::isfinite(v) || v > hi || (lo_open ? v <= lo : v < lo))
          return "expected a finite number " + range + ", got " + Quoted(text);
        return {};
      },
      range);
}

CLI::Validator NonEmpty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        return text.empty() ? "expected " + what + ", got ''" : std::string();
      },
      "");
}

CLI::Validator OneOf(const std::vector<std::string>& names) {
  const std::string list = OrList(names);
  return CLI::Validator(
      [names, list](std::string& text) -> std::string {
        for (const std::string& n : names)
          if (text == n) return {};
        return "expected " + list + ", got " + Quoted(text);
      },
      "");
}

CLI::Validator Accepts(std::function<std::string(const std::string&)> why_not) {
  return CLI::Validator([why_not](std::string& text) { return why_not(text); }, "");
}

void OneLineErrors(CLI::App& app, const std::string& program) {
  app.failure_message([program](const CLI::App* top, const CLI::Error& e) {
    // The subcommand path as parsed so far ("profile gemm"): the error belongs to it.
    std::string where = program;
    for (const CLI::App* a = top; a != nullptr;) {
      const std::vector<CLI::App*> subs = a->get_subcommands();
      a = subs.empty() ? nullptr : subs.front();
      if (a != nullptr) where += " " + a->get_name();
    }
    std::string message = engine::TextForMessage(e.what(), 400);
    if (!message.empty() && message.back() == '\n') message.pop_back();
    return where + ": " + message + " (" + where + " --help lists the options)\n";
  });
}

}  // namespace stof::app
