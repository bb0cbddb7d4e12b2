// Strict, path-aware reading of parsed JSON for the engine's file formats (mask JSON, plans).
// Internal to the JSON module: included only by engine/mask/mask_json.cpp,
// engine/plan/plan_read.cpp, engine/plan/plan_write.cpp, engine/plan/plan_choices.cpp,
// engine/core/recent_files.cpp, engine/tune/tune_cache.cpp and profiler/layer_profile.cpp. Each reader checks one value's type and range and throws
// JsonPathError with a message "<path>: <problem>, got <value>"; every public function of
// those files catches it and returns an Error, so no exception leaves the module
// (docs/architecture.md, "engine/").
// Invariants: objects are opened with their full list of allowed keys, so an unknown key is an
// error naming it; integers are never read from floats ("5.0" is not an integer); numbers are
// finite; a seed is a JSON integer <= 2^53 - 1 or a decimal string of a uint64.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/json_io.h"

namespace stof::engine::json_read {

using Json = nlohmann::json;

// Thrown by the readers below; caught at the module's public functions.
class JsonPathError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest integer every JSON reader (JavaScript, Python's float path, jq) keeps exactly.
inline constexpr uint64_t kMaxExactJsonInteger = (uint64_t{1} << 53) - 1;

[[noreturn]] inline void Fail(const std::string& path, const std::string& problem) {
  throw JsonPathError(path.empty() ? problem : path + ": " + problem);
}

// The value for "got ...": bounded compact JSON (json_io.h JsonForMessage; a huge or deeply
// nested value never becomes a huge message).
inline std::string Shown(const Json& v) { return JsonForMessage(v); }

inline std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

inline std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

inline int64_t ReadInt(const Json& v, const std::string& path, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) Fail(path, "expected an integer, got " + Shown(v));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    Fail(path, "expected an integer <= " + std::to_string(hi) + ", got " + Shown(v));
  const int64_t x = v.get<int64_t>();
  if (x < lo) Fail(path, "expected an integer >= " + std::to_string(lo) + ", got " + Shown(v));
  if (x > hi) Fail(path, "expected an integer <= " + std::to_string(hi) + ", got " + Shown(v));
  return x;
}

// A finite number (integer or not) with lo <= x <= hi, or lo < x when lo_exclusive.
inline double ReadNumber(const Json& v, const std::string& path, double lo, double hi,
                         bool lo_exclusive = false) {
  if (!v.is_number()) Fail(path, "expected a number, got " + Shown(v));
  const double x = v.get<double>();
  auto num = [](double d) {
    std::string s = Json(d).dump();
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    return s;
  };
  if (!std::isfinite(x)) Fail(path, "expected a finite number, got " + Shown(v));
  if (lo_exclusive ? !(x > lo) : !(x >= lo)) {
    Fail(path, std::string("expected a number ") + (lo_exclusive ? "> " : ">= ") + num(lo) +
                   ", got " + Shown(v));
  }
  if (x > hi) Fail(path, "expected a number <= " + num(hi) + ", got " + Shown(v));
  return x;
}

inline std::string ReadString(const Json& v, const std::string& path, bool allow_empty) {
  if (!v.is_string()) Fail(path, "expected a string, got " + Shown(v));
  std::string s = v.get<std::string>();
  if (!allow_empty && s.empty()) Fail(path, "expected a non-empty string, got \"\"");
  return s;
}

// A string that must be one of `allowed`; the message lists them.
inline std::string ReadEnum(const Json& v, const std::string& path,
                            const std::vector<std::string>& allowed) {
  if (!v.is_string()) Fail(path, "expected a string, got " + Shown(v));
  const std::string s = v.get<std::string>();
  std::string list;
  for (const std::string& a : allowed) {
    if (s == a) return s;
    list += (list.empty() ? "" : ", ") + a;
  }
  Fail(path, "expected one of " + list + ", got " + Shown(v));
}

inline bool ReadBool(const Json& v, const std::string& path) {
  if (!v.is_boolean()) Fail(path, "expected true or false, got " + Shown(v));
  return v.get<bool>();
}

// Seeds are uint64. JSON integers above 2^53 - 1 lose precision in many readers, so a seed is
// written as an integer up to that bound and as a decimal string above it; both forms are read.
inline Json SeedToJson(uint64_t seed) {
  if (seed <= kMaxExactJsonInteger) return Json(seed);
  return Json(std::to_string(seed));
}

inline uint64_t ReadSeed(const Json& v, const std::string& path) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() ? v.get<uint64_t>() > kMaxExactJsonInteger : v.get<int64_t>() < 0) {
      Fail(path, "expected an integer in 0..9007199254740991 (2^53 - 1; write larger seeds as a "
                 "decimal string), got " + Shown(v));
    }
    return v.get<uint64_t>();
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    bool ok = !s.empty() && s.size() <= 20 && (s == "0" || s[0] != '0');
    uint64_t x = 0;
    for (char c : s) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      const uint64_t d = static_cast<uint64_t>(c - '0');
      if (x > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        ok = false;
        break;
      }
      x = x * 10 + d;
    }
    if (!ok) {
      Fail(path, "expected a decimal string of an unsigned 64-bit integer (no sign, no leading "
                 "zeros), got " + Shown(v));
    }
    return x;
  }
  Fail(path, "expected an integer or a decimal string, got " + Shown(v));
}

// An object whose keys are all in `allowed`. Child paths are `child_prefix + key`: the root of
// a file uses "plan.json: " (or "" without a name), nested objects use "<path>.".
class ObjectReader {
 public:
  ObjectReader(const Json& j, std::string path, std::string child_prefix,
               std::initializer_list<std::string_view> allowed)
      : m_j(j), m_path(std::move(path)), m_child_prefix(std::move(child_prefix)) {
    if (!j.is_object()) Fail(m_path, "expected an object, got " + Shown(j));
    for (const auto& item : j.items()) {
      bool known = false;
      for (std::string_view a : allowed) known = known || item.key() == a;
      if (!known) {
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Fail(PathOf(item.key()), "unknown key (allowed here: " + list + ")");
      }
    }
  }

  // A nested object under `key` (required), with its own allowed keys.
  ObjectReader Child(std::string_view key, std::initializer_list<std::string_view> allowed) const {
    return ObjectReader(Require(key), PathOf(key), PathOf(key) + ".", allowed);
  }

  const std::string& Path() const { return m_path; }
  std::string PathOf(std::string_view key) const { return m_child_prefix + std::string(key); }
  const Json& Raw() const { return m_j; }
  bool Has(std::string_view key) const { return m_j.contains(key); }
  const Json* Find(std::string_view key) const {
    auto it = m_j.find(key);
    return it == m_j.end() ? nullptr : &*it;
  }
  const Json& Require(std::string_view key) const {
    const Json* v = Find(key);
    if (v == nullptr) Fail(PathOf(key), "required field is missing");
    return *v;
  }

  int64_t Int(std::string_view key, int64_t lo, int64_t hi) const {
    return ReadInt(Require(key), PathOf(key), lo, hi);
  }
  double Number(std::string_view key, double lo, double hi, bool lo_exclusive = false) const {
    return ReadNumber(Require(key), PathOf(key), lo, hi, lo_exclusive);
  }
  std::string String(std::string_view key, bool allow_empty = false) const {
    return ReadString(Require(key), PathOf(key), allow_empty);
  }
  std::string Enum(std::string_view key, const std::vector<std::string>& allowed) const {
    return ReadEnum(Require(key), PathOf(key), allowed);
  }
  bool Bool(std::string_view key) const { return ReadBool(Require(key), PathOf(key)); }
  uint64_t Seed(std::string_view key) const { return ReadSeed(Require(key), PathOf(key)); }
  // A required array.
  const Json& Array(std::string_view key) const {
    const Json& v = Require(key);
    if (!v.is_array()) Fail(PathOf(key), "expected an array, got " + Shown(v));
    return v;
  }

 private:
  const Json& m_j;
  std::string m_path;
  std::string m_child_prefix;
};

}  // namespace stof::engine::json_read
