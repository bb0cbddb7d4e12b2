// MaskSpec <-> JSON and run-length rows <-> Mask (see mask_json.h for the forms). Called by
// mask_io_json.cpp (mask files) and plan_read.cpp / plan_write.cpp (plans). Readers throw json_read::JsonPathError
// internally; every public function here catches it (and nlohmann's exceptions) and returns
// an Error, so nothing is thrown across the API.
#include "engine/mask/mask_json.h"

#include <bit>
#include <new>

#include "engine/core/json_read.h"
#include "engine/mask/row_runs.h"

namespace stof::engine {

static_assert(kMaxSpecLen == RowRuns::kMaxLen, "a spec reaches as far as row runs build it");

namespace {

using json_read::Fail;
using json_read::Index;
using json_read::Json;
using json_read::JsonPathError;
using json_read::ObjectReader;

bool IsComposite(const std::string& p) { return p == "or" || p == "and" || p == "not"; }

Json SpecToJson(const MaskSpec& s, int64_t parent_seq_len) {
  const std::string& p = s.pattern;
  Json j = Json::object();
  j["pattern"] = p;
  if (s.seq_len != parent_seq_len) j["seq_len"] = s.seq_len;
  // Sentinel parameters: negative = paper default, omitted.
  if (s.width >= 0) j["width"] = s.width;
  if (s.global >= 0) j["global"] = s.global;
  if (s.fill >= 0) j["fill"] = s.fill;
  if (s.block >= 0) j["block"] = s.block;
  // Plain parameters: written when the pattern uses them or they are not the default.
  if (p == "dilated" || s.dilation != 1) j["dilation"] = s.dilation;
  if (p == "random_blocks" || p == "bigbird" || s.seed != 0) j["seed"] = json_read::SeedToJson(s.seed);
  if (p == "document" || !s.doc_lengths.empty()) j["doc_lengths"] = s.doc_lengths;
  if (p == "document" || s.causal) j["causal"] = s.causal;
  if (IsComposite(p) || !s.operands.empty()) {
    Json ops = Json::array();
    for (const MaskSpec& o : s.operands) ops.push_back(SpecToJson(o, s.seq_len));
    j["operands"] = std::move(ops);
  }
  return j;
}

// `parent_seq_len` < 0 at the top (seq_len required there).
MaskSpec SpecFromJson(const Json& j, const std::string& path, int depth, int64_t parent_seq_len) {
  if (depth > kMaxMaskSpecDepth) {
    Fail(path, "operands nest deeper than " + std::to_string(kMaxMaskSpecDepth) + " levels");
  }
  ObjectReader r(j, path, path.empty() ? "" : path + ".",
                 {"pattern", "seq_len", "width", "global", "dilation", "fill", "block", "seed",
                  "doc_lengths", "causal", "operands"});
  MaskSpec s;
  {
    const Json& v = r.Require("pattern");
    if (!v.is_string()) Fail(r.PathOf("pattern"), "expected a string, got " + json_read::Shown(v));
    s.pattern = v.get<std::string>();
    std::string known;
    bool ok = false;
    for (const std::string& n : MaskPatternNames()) {
      ok = ok || n == s.pattern;
      known += (known.empty() ? "" : ", ") + n;
    }
    if (!ok) {
      Fail(r.PathOf("pattern"),
           "unknown pattern " + json_read::Shown(v) + " (known: " + known + ")");
    }
  }
  if (parent_seq_len < 0 || r.Has("seq_len")) {
    s.seq_len = r.Int("seq_len", 1, kMaxSpecLen);
    if (parent_seq_len >= 0 && s.seq_len != parent_seq_len) {
      Fail(r.PathOf("seq_len"), "expected " + std::to_string(parent_seq_len) +
                                    " (the enclosing spec's seq_len), got " +
                                    std::to_string(s.seq_len));
    }
  } else {
    s.seq_len = parent_seq_len;
  }
  if (r.Has("width")) s.width = r.Int("width", -1, kMaxSpecLen);
  if (r.Has("global")) s.global = r.Int("global", -1, kMaxSpecLen);
  if (r.Has("dilation")) s.dilation = r.Int("dilation", 0, kMaxSpecLen);
  if (r.Has("block")) s.block = r.Int("block", -1, kMaxSpecLen);
  if (r.Has("fill")) {
    s.fill = r.Number("fill", -1e308, 1e308);
    if (!(s.fill == -1 || (s.fill >= 0 && s.fill <= 1))) {
      Fail(r.PathOf("fill"), "expected a number in [0, 1] or -1 (paper default), got " +
                                 json_read::Shown(r.Require("fill")));
    }
  }
  if (r.Has("seed")) s.seed = r.Seed("seed");
  if (r.Has("doc_lengths")) {
    const Json& a = r.Array("doc_lengths");
    if (a.size() > static_cast<size_t>(kMaxSpecLen)) {
      Fail(r.PathOf("doc_lengths"), "expected at most " + std::to_string(kMaxSpecLen) +
                                        " lengths, got " + std::to_string(a.size()));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      s.doc_lengths.push_back(json_read::ReadInt(a[i], Index(r.PathOf("doc_lengths"), i), 1,
                                                 kMaxSpecLen));
    }
  }
  if (r.Has("causal")) s.causal = r.Bool("causal");

  const std::string ops_path = r.PathOf("operands");
  if (!IsComposite(s.pattern)) {
    if (r.Has("operands")) Fail(ops_path, "only the patterns or, and, not take operands");
  } else {
    const Json& a = r.Array("operands");
    if (s.pattern == "not" && a.size() != 1) {
      Fail(ops_path, "pattern 'not' takes exactly one operand, got " + std::to_string(a.size()));
    }
    if (s.pattern != "not" && a.size() < 2) {
      Fail(ops_path, "pattern '" + s.pattern + "' takes two or more operands, got " +
                         std::to_string(a.size()));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      s.operands.push_back(SpecFromJson(a[i], Index(ops_path, i), depth + 1, s.seq_len));
    }
  }
  return s;
}

// Column of the first bit in row `words` at or after `from` that equals `value`; `cols` if none.
int64_t NextBit(const uint64_t* words, int64_t from, int64_t cols, bool value) {
  while (from < cols) {
    uint64_t w = words[from >> 6];
    if (!value) w = ~w;
    w &= ~uint64_t{0} << (from & 63);
    if (w != 0) {
      const int64_t c = (from & ~int64_t{63}) + std::countr_zero(w);
      return c < cols ? c : cols;
    }
    from = (from & ~int64_t{63}) + 64;
  }
  return cols;
}

Mask RunLengthFromJson(const Json& j, const std::string& path) {
  ObjectReader r(j, path, path.empty() ? "" : path + ".", {"rows", "cols", "runs"});
  // Sizes first: nothing is allocated until both are known to be in range.
  const int64_t rows = r.Int("rows", 1, Mask::kMaxLen);
  const int64_t cols = r.Int("cols", 1, Mask::kMaxLen);
  const Json& runs = r.Array("runs");
  const std::string runs_path = r.PathOf("runs");
  if (runs.size() != static_cast<size_t>(rows)) {
    Fail(runs_path, "expected " + std::to_string(rows) + " row arrays (rows), got " +
                        std::to_string(runs.size()));
  }
  auto mask = Mask::Create(rows, cols, path.empty() ? "mask" : path);
  if (!mask.IsOk()) Fail("", mask.Message());
  for (int64_t row = 0; row < rows; ++row) {
    const Json& a = runs[static_cast<size_t>(row)];
    const std::string row_path = Index(runs_path, static_cast<size_t>(row));
    if (!a.is_array()) Fail(row_path, "expected an array [start, length, ...], got " + json_read::Shown(a));
    if (a.size() % 2 != 0) {
      Fail(row_path, "expected [start, length] pairs, got " + std::to_string(a.size()) +
                         " numbers");
    }
    int64_t end = 0;  // end of the previous run
    for (size_t i = 0; i < a.size(); i += 2) {
      const std::string start_path = Index(row_path, i), len_path = Index(row_path, i + 1);
      const int64_t start = json_read::ReadInt(a[i], start_path, 0, cols - 1);
      if (start < end) {
        Fail(start_path, "run starts at " + std::to_string(start) +
                             ", before the end of the previous run (" + std::to_string(end) +
                             "); runs must be sorted and must not overlap");
      }
      const int64_t len = json_read::ReadInt(a[i + 1], len_path, 1, Mask::kMaxLen);
      if (start + len > cols) {
        Fail(len_path, "run [" + std::to_string(start) + ", " + std::to_string(start + len) +
                           ") ends past the last column (cols " + std::to_string(cols) + ")");
      }
      mask->SetRange(row, start, start + len);
      end = start + len;
    }
  }
  return std::move(*mask);
}

// Turns any exception of the module into an Error (`path` prefixes non-path messages).
template <class F>
auto Guard(const std::string& path, F&& f) -> Expected<decltype(f())> {
  try {
    return f();
  } catch (const JsonPathError& e) {
    return MakeError(e.what());
  } catch (const nlohmann::json::exception& e) {
    return MakeError((path.empty() ? "" : path + ": ") + e.what());
  } catch (const std::bad_alloc&) {
    return MakeError((path.empty() ? "" : path + ": ") + "out of memory");
  }
}

}  // namespace

Json MaskSpecToJson(const MaskSpec& spec) { return SpecToJson(spec, -1); }

Expected<MaskSpec> MaskSpecFromJson(const Json& j, const std::string& path) {
  return Guard(path, [&] { return SpecFromJson(j, path, 0, -1); });
}

Json MaskToRunLengthJson(const Mask& mask) {
  Json runs = Json::array();
  for (int64_t r = 0; r < mask.Rows(); ++r) {
    Json row = Json::array();
    const uint64_t* words = mask.RowWords(r);
    int64_t c = NextBit(words, 0, mask.Cols(), true);
    while (c < mask.Cols()) {
      const int64_t e = NextBit(words, c, mask.Cols(), false);
      row.push_back(c);
      row.push_back(e - c);
      c = NextBit(words, e, mask.Cols(), true);
    }
    runs.push_back(std::move(row));
  }
  Json j = Json::object();
  j["rows"] = mask.Rows();
  j["cols"] = mask.Cols();
  j["runs"] = std::move(runs);
  return j;
}

Expected<Mask> MaskFromRunLengthJson(const Json& j, const std::string& path) {
  return Guard(path, [&] { return RunLengthFromJson(j, path); });
}

}  // namespace stof::engine
