// The checks every command-line option of `stof` and `stof-studio` goes through, as CLI11
// validators, so a bad value is refused while parsing, before any work starts, with one line
// that names the option and the value: "stof tune: --seq: expected an integer in 1..32768,
// got '0'". Used by app/cli (every subcommand) and app/studio/main.cpp; the limits themselves
// come from the engine (engine/core/workload.h, engine/mask/mask.h), never restated here.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stof::app {

// An integer in lo..hi in plain decimal ("0x10", "1e3" and "010" are refused: CLI11 would
// read the last as octal 8), or the word `or_word` when one is given (--layers full).
CLI::Validator IntRange(int64_t lo, int64_t hi, const std::string& or_word = "");
// A seed: an integer in 0..2^64-1 (CLI11 alone turned "-1" into 2^64-1).
CLI::Validator SeedValue();
// A finite number in [lo, hi], or in (lo, hi] with lo_open; hi = infinity: no upper bound
// ("expected a finite number > 0, got 'nan'"). NaN and infinities are always refused.
CLI::Validator NumberRange(double lo, double hi, bool lo_open = false);
// A non-empty text, e.g. a file name ("--out ''" would write nowhere).
CLI::Validator NonEmpty(const std::string& what = "a file name");
// One of `names`: "expected auto, row_wise or block_wise, got 'nosuch'".
CLI::Validator OneOf(const std::vector<std::string>& names);

// A value `why_not` accepts: it returns "" or the reason, e.g. an engine parser's message.
CLI::Validator Accepts(std::function<std::string(const std::string&)> why_not);

// "a, b or c"
std::string OrList(const std::vector<std::string>& names);

// Makes CLI11's own errors (a failed check above, an unknown option, a missing value) one
// line, "<program> <subcommand>: <message> (<program> <subcommand> --help lists the
// options)", like the commands' own failures; CLI11's exit codes stay.
void OneLineErrors(CLI::App& app, const std::string& program);

}  // namespace stof::app
