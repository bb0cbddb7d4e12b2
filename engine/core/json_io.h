// The one way the project parses and prints JSON. Every loader (mask files, plans, layer
// profiles, HuggingFace configs, tuning-cache lines, the studio's recent files) parses through
// ParseJson; every error message that quotes a JSON value uses JsonForMessage; every JSON text
// written to stdout or a file is made by DumpJson. Limits and the reasons for them:
// docs/robustness.md.
// Invariants: ParseJson never recurses per nesting level (nlohmann's SAX parser is iterative and
// the DOM is built here with an explicit stack), refuses nesting deeper than kMaxJsonDepth while
// parsing, and is linear in the input's size; nothing it returns is deeper than that limit, so
// the recursive code downstream (nlohmann's copy and dump, our readers) stays within the stack.
// JsonForMessage never returns more than kMessageValueChars bytes (plus "...") and never looks
// deeper than kMessageValueDepth levels. DumpJson never throws on invalid UTF-8 (the bytes are
// replaced by U+FFFD).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/core/status.h"

namespace stof::engine {

// Arrays and objects inside each other, counted from the top-level value (which is depth 1
// when it is an array or object). Our deepest real file is a plan with a composite mask spec
// (operands nest at most kMaxMaskSpecDepth = 16 specs, about 35 levels); 256 leaves room and
// keeps every recursive walk far from the 8 MiB stack (a 60 000-deep file crashed it, issue 16).
inline constexpr int kMaxJsonDepth = 256;
// A value quoted in an error message: at most this many bytes of compact JSON, and containers
// shown this many levels deep ("[[[...]]]"); a message stays one readable line.
inline constexpr size_t kMessageValueChars = 200;
inline constexpr int kMessageValueDepth = 3;

struct JsonParseOptions {
  // Refuse an object with a key twice (nlohmann would keep the last silently). HuggingFace
  // configs and tuning-cache lines allow it, as Python's json module does.
  bool refuse_duplicate_keys = true;
  int max_depth = kMaxJsonDepth;
};

// Parses `text` whole. `name` (a file name, may be empty) prefixes every message:
//   "m.json: not valid JSON (byte 17): parse error at line 2, column 3: ..."
//   "m.json: a[1].b: duplicate key"
//   "m.json: JSON nested deeper than 256 levels at [0][0][0]... (the limit is 256)"
Expected<nlohmann::json> ParseJson(std::string_view text, const std::string& name,
                                   const JsonParseOptions& options = {});

// Compact JSON of `v` for an error message: objects and arrays below kMessageValueDepth levels
// shown as {...} / [...], long strings and long output cut with "...", invalid UTF-8 replaced.
std::string JsonForMessage(const nlohmann::json& v);

// `text` safe to quote in a message: invalid UTF-8 replaced by U+FFFD, control characters as
// spaces, cut at a character boundary after `max_bytes` bytes with "...".
std::string TextForMessage(std::string_view text, size_t max_bytes = kMessageValueChars);

// JSON text of `j` (indent < 0: compact) with invalid UTF-8 in strings replaced by U+FFFD, so
// printing a path or a message that quotes raw bytes never throws (type_error.316).
std::string DumpJson(const nlohmann::json& j, int indent = -1);

}  // namespace stof::engine
