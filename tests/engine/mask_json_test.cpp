// Tests of the JSON form of masks (mask_json.h): exact MaskSpec round trips for every pattern
// and nested compositions, seeds above 2^53, run-length round trips on random masks (sizes
// that are and are not multiples of 64, empty and full rows), and malformed input, each
// checked for the exact JSON path in the message. Parsing itself: json_io_test.cpp.
#include "engine/mask/mask_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
using stof::engine::Generate;
using stof::engine::Mask;
using stof::engine::MaskFromRunLengthJson;
using stof::engine::MaskPatternNames;
using stof::engine::MaskSpec;
using stof::engine::MaskSpecFromJson;
using stof::engine::MaskSpecToJson;
using stof::engine::MaskToRunLengthJson;

MaskSpec Spec(const std::string& pattern, int64_t seq_len = 256) {
  MaskSpec s;
  s.pattern = pattern;
  s.seq_len = seq_len;
  return s;
}

// spec -> JSON -> spec is the identity, JSON -> spec -> JSON too, and the spec still generates.
void ExpectRoundTrip(const MaskSpec& s) {
  const json j = MaskSpecToJson(s);
  auto back = MaskSpecFromJson(j, "mask");
  ASSERT_TRUE(back.IsOk()) << back.Message() << "\n" << j.dump();
  EXPECT_TRUE(*back == s) << j.dump();
  EXPECT_EQ(MaskSpecToJson(*back), j);
  // Through text as well (what files see).
  auto reparsed = MaskSpecFromJson(json::parse(j.dump()), "mask");
  ASSERT_TRUE(reparsed.IsOk()) << reparsed.Message();
  EXPECT_TRUE(*reparsed == s);
}

// One valid spec per pattern, parameters set where the pattern uses them.
std::vector<MaskSpec> OnePerPattern() {
  std::vector<MaskSpec> out;
  for (const std::string& p : MaskPatternNames()) {
    MaskSpec s = Spec(p);
    if (p == "sliding_window" || p == "longformer" || p == "bigbird") s.width = 16;
    if (p == "dilated") {
      s.width = 8;
      s.dilation = 2;
    }
    if (p == "global" || p == "longformer" || p == "bigbird") s.global = 8;
    if (p == "random_blocks" || p == "bigbird") {
      s.fill = 0.25;
      s.block = 32;
      s.seed = 12345;
    }
    if (p == "document") {
      s.doc_lengths = {100, 56, 100};
      s.causal = true;
    }
    if (p == "or" || p == "and") s.operands = {Spec("causal"), Spec("sliding_window")};
    if (p == "not") s.operands = {Spec("global")};
    out.push_back(s);
  }
  return out;
}

TEST(MaskJson, SpecRoundTripEveryPattern) {
  const auto specs = OnePerPattern();
  ASSERT_EQ(specs.size(), MaskPatternNames().size());
  for (const MaskSpec& s : specs) {
    SCOPED_TRACE(s.pattern);
    ASSERT_TRUE(Generate(s).IsOk()) << Generate(s).Message();
    ExpectRoundTrip(s);
    // Defaults are round-tripped too (all sentinels left at -1).
    MaskSpec d = Spec(s.pattern);
    d.doc_lengths = s.doc_lengths;
    d.operands = s.operands;
    ExpectRoundTrip(d);
  }
}

TEST(MaskJson, SpecEmitsOnlyRelevantOrNonDefaultFields) {
  const json bigbird = MaskSpecToJson(Spec("bigbird", 1024));
  EXPECT_EQ(bigbird, json::parse(R"({"pattern": "bigbird", "seq_len": 1024, "seed": 0})"));
  const json causal = MaskSpecToJson(Spec("causal"));
  EXPECT_EQ(causal, json::parse(R"({"pattern": "causal", "seq_len": 256})"));
  MaskSpec odd = Spec("full");
  odd.causal = true;
  odd.dilation = 3;  // not used by "full", but not the default: written, so nothing is lost
  EXPECT_EQ(MaskSpecToJson(odd),
            json::parse(R"({"pattern": "full", "seq_len": 256, "causal": true, "dilation": 3})"));
  EXPECT_EQ(MaskSpecToJson(Spec("document"))["doc_lengths"], json::array());
  EXPECT_EQ(MaskSpecToJson(Spec("dilated"))["dilation"], 1);
}

TEST(MaskJson, NestedCompositionRoundTrip) {
  MaskSpec bigbird = Spec("bigbird", 512);
  bigbird.seed = 99;
  MaskSpec inner_and = Spec("and", 512);
  inner_and.operands = {bigbird, Spec("causal", 512)};
  MaskSpec negated = Spec("not", 512);
  MaskSpec doc = Spec("document", 512);
  doc.doc_lengths = {200, 312};
  negated.operands = {doc};
  MaskSpec top = Spec("or", 512);
  top.operands = {inner_and, negated, Spec("global", 512)};
  top.causal = true;
  ASSERT_TRUE(Generate(top).IsOk()) << Generate(top).Message();
  ExpectRoundTrip(top);
  // Operands inherit seq_len, so it is written only at the top.
  const json j = MaskSpecToJson(top);
  EXPECT_FALSE(j["operands"][0].contains("seq_len"));
  EXPECT_FALSE(j["operands"][0]["operands"][0].contains("seq_len"));
  // An operand may repeat its parent's seq_len.
  json explicit_len = j;
  explicit_len["operands"][1]["seq_len"] = 512;
  auto s = MaskSpecFromJson(explicit_len, "mask");
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_TRUE(*s == top);
}

TEST(MaskJson, SeedsAboveTwoTo53AreStrings) {
  for (uint64_t seed : {uint64_t{0}, (uint64_t{1} << 53) - 1, uint64_t{1} << 53,
                        std::numeric_limits<uint64_t>::max()}) {
    MaskSpec s = Spec("random_blocks");
    s.seed = seed;
    const json j = MaskSpecToJson(s);
    if (seed < (uint64_t{1} << 53)) {
      EXPECT_TRUE(j["seed"].is_number_unsigned()) << j.dump();
    } else {
      EXPECT_EQ(j["seed"], std::to_string(seed));
    }
    ExpectRoundTrip(s);
  }
  json j = MaskSpecToJson(Spec("random_blocks"));
  j["seed"] = "42";  // small seeds may be strings too
  auto s = MaskSpecFromJson(j, "mask");
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_EQ(s->seed, 42u);
}

struct BadSpec {
  std::string text;
  std::string message;  // must appear in the error
};

TEST(MaskJson, MalformedSpecsNameTheJsonPath) {
  const std::vector<BadSpec> cases = {
      {R"({"pattern": "or", "seq_len": 64, "operands": [{"pattern": "causal"},
          {"pattern": "sliding_window", "width": "x"}]})",
       R"(mask.operands[1].width: expected an integer, got "x")"},
      {R"({"pattern": "bigbird", "seq_len": 64, "widht": 3})",
       "mask.widht: unknown key (allowed here: pattern, seq_len, width"},
      {R"({"pattern": "butterfly", "seq_len": 64})",
       R"(mask.pattern: unknown pattern "butterfly" (known: full, causal, sliding_window)"},
      {R"({"pattern": 3, "seq_len": 64})", "mask.pattern: expected a string, got 3"},
      {R"({"seq_len": 64})", "mask.pattern: required field is missing"},
      {R"({"pattern": "causal"})", "mask.seq_len: required field is missing"},
      {R"({"pattern": "causal", "seq_len": 0})", "mask.seq_len: expected an integer >= 1, got 0"},
      {R"({"pattern": "causal", "seq_len": 1048577})",
       "mask.seq_len: expected an integer <= 1048576, got 1048577"},
      {R"({"pattern": "causal", "seq_len": 64.0})", "mask.seq_len: expected an integer, got 64.0"},
      {R"({"pattern": "sliding_window", "seq_len": 64, "width": -2})",
       "mask.width: expected an integer >= -1, got -2"},
      {R"({"pattern": "bigbird", "seq_len": 64, "fill": 1.5})",
       "mask.fill: expected a number in [0, 1] or -1 (paper default), got 1.5"},
      {R"({"pattern": "bigbird", "seq_len": 64, "fill": "0.1"})",
       R"(mask.fill: expected a number, got "0.1")"},
      {R"({"pattern": "bigbird", "seq_len": 64, "seed": -1})",
       "mask.seed: expected an integer in 0..9007199254740991"},
      {R"({"pattern": "bigbird", "seq_len": 64, "seed": 9007199254740992})",
       "mask.seed: expected an integer in 0..9007199254740991"},
      {R"({"pattern": "bigbird", "seq_len": 64, "seed": "18446744073709551616"})",
       "mask.seed: expected a decimal string of an unsigned 64-bit integer"},
      {R"({"pattern": "bigbird", "seq_len": 64, "seed": "007"})",
       "mask.seed: expected a decimal string"},
      {R"({"pattern": "bigbird", "seq_len": 64, "seed": 1.5})",
       "mask.seed: expected an integer or a decimal string, got 1.5"},
      {R"({"pattern": "document", "seq_len": 64, "doc_lengths": [32, 0]})",
       "mask.doc_lengths[1]: expected an integer >= 1, got 0"},
      {R"({"pattern": "document", "seq_len": 64, "doc_lengths": 64})",
       "mask.doc_lengths: expected an array, got 64"},
      {R"({"pattern": "causal", "seq_len": 64, "causal": 1})",
       "mask.causal: expected true or false, got 1"},
      {R"({"pattern": "not", "seq_len": 64, "operands": [{"pattern": "full"}, {"pattern": "full"}]})",
       "mask.operands: pattern 'not' takes exactly one operand, got 2"},
      {R"({"pattern": "and", "seq_len": 64, "operands": [{"pattern": "full"}]})",
       "mask.operands: pattern 'and' takes two or more operands, got 1"},
      {R"({"pattern": "or", "seq_len": 64})", "mask.operands: required field is missing"},
      {R"({"pattern": "full", "seq_len": 64, "operands": []})",
       "mask.operands: only the patterns or, and, not take operands"},
      {R"({"pattern": "not", "seq_len": 64, "operands": [{"pattern": "full", "seq_len": 32}]})",
       "mask.operands[0].seq_len: expected 64 (the enclosing spec's seq_len), got 32"},
      {R"({"pattern": "not", "seq_len": 64, "operands": ["full"]})",
       R"(mask.operands[0]: expected an object, got "full")"},
      {R"([1, 2])", "mask: expected an object, got [1,2]"},
  };
  for (const BadSpec& c : cases) {
    SCOPED_TRACE(c.text);
    auto s = MaskSpecFromJson(json::parse(c.text), "mask");
    ASSERT_FALSE(s.IsOk());
    EXPECT_NE(s.Message().find(c.message), std::string::npos) << s.Message();
  }
  // The path given by the caller prefixes every message; with no path, the key alone.
  auto s = MaskSpecFromJson(json::parse(R"({"pattern": "causal", "seq_len": "8"})"),
                            "plan.json: mask.spec");
  EXPECT_EQ(s.Message(), R"(plan.json: mask.spec.seq_len: expected an integer, got "8")");
  s = MaskSpecFromJson(json::parse(R"({"pattern": "causal", "seq_len": "8"})"), "");
  EXPECT_EQ(s.Message(), R"(seq_len: expected an integer, got "8")");
}

TEST(MaskJson, DeepNestingIsRefusedWithoutRecursingForever) {
  json j = {{"pattern", "full"}};
  for (int i = 0; i < 1000; ++i) j = {{"pattern", "not"}, {"operands", json::array({j})}};
  j["seq_len"] = 64;
  auto s = MaskSpecFromJson(j, "mask");
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("operands nest deeper than 16 levels"), std::string::npos)
      << s.Message();
}

Mask RandomMask(int64_t rows, int64_t cols, std::mt19937_64& rng) {
  auto m = Mask::Create(rows, cols);
  const int style = static_cast<int>(rng() % 3);
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t kind = rng() % 5;
    if (kind == 0) continue;  // an all-zero row
    if (kind == 1) {          // a full row
      m->SetRange(r, 0, cols);
      continue;
    }
    for (int64_t c = 0; c < cols; ++c) {
      const bool on = style == 0 ? rng() % 2 == 0 : (style == 1 ? rng() % 17 == 0 : rng() % 9 != 0);
      if (on) m->Set(r, c);
    }
  }
  return std::move(*m);
}

TEST(MaskJson, RunLengthRoundTripOnRandomMasks) {
  std::mt19937_64 rng(2024);
  const std::vector<std::pair<int64_t, int64_t>> sizes = {
      {1, 1}, {1, 64}, {3, 63}, {64, 64}, {65, 65}, {100, 100}, {130, 70}, {7, 129}, {257, 257}};
  for (const auto& [rows, cols] : sizes) {
    for (int rep = 0; rep < 3; ++rep) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      const Mask m = RandomMask(rows, cols, rng);
      const json j = MaskToRunLengthJson(m);
      ASSERT_EQ(j["runs"].size(), static_cast<size_t>(rows));
      auto back = MaskFromRunLengthJson(json::parse(j.dump()), "mask");
      ASSERT_TRUE(back.IsOk()) << back.Message();
      EXPECT_TRUE(*back == m);
      EXPECT_EQ(back->Hash(), m.Hash());
      EXPECT_EQ(MaskToRunLengthJson(*back), j);
    }
  }
}

TEST(MaskJson, RunLengthFormIsMergedRuns) {
  auto m = Mask::Create(3, 70);
  m->SetRange(0, 2, 5);
  m->SetRange(0, 60, 70);  // crosses a word boundary, ends at the last column
  m->SetRange(2, 0, 70);
  EXPECT_EQ(MaskToRunLengthJson(*m),
            json::parse(R"({"rows": 3, "cols": 70, "runs": [[2, 3, 60, 10], [], [0, 70]]})"));
  // Adjacent runs are accepted on read (non-overlapping) and give the same mask.
  auto adj = MaskFromRunLengthJson(
      json::parse(R"({"rows": 3, "cols": 70, "runs": [[2, 1, 3, 2, 60, 4, 64, 6], [], [0, 70]]})"),
      "mask");
  ASSERT_TRUE(adj.IsOk()) << adj.Message();
  EXPECT_TRUE(*adj == *m);
}

TEST(MaskJson, MalformedRunLengthNameTheJsonPath) {
  const std::vector<BadSpec> cases = {
      {R"({"rows": 0, "cols": 4, "runs": []})", "m.inline.rows: expected an integer >= 1, got 0"},
      // Sizes are checked before the runs, and before anything is allocated.
      {R"({"rows": 4, "cols": 1000000000, "runs": []})",
       "m.inline.cols: expected an integer <= 32768, got 1000000000"},
      {R"({"rows": 2, "cols": 4, "runs": [[0, 1]]})",
       "m.inline.runs: expected 2 row arrays (rows), got 1"},
      {R"({"rows": 1, "cols": 4, "runs": [[0, 1, 2]]})",
       "m.inline.runs[0]: expected [start, length] pairs, got 3 numbers"},
      {R"({"rows": 1, "cols": 8, "runs": [[4, 2, 1, 1]]})",
       "m.inline.runs[0][2]: run starts at 1, before the end of the previous run (6)"},
      {R"({"rows": 1, "cols": 8, "runs": [[0, 4, 3, 1]]})",
       "m.inline.runs[0][2]: run starts at 3, before the end of the previous run (4)"},
      {R"({"rows": 1, "cols": 8, "runs": [[0, 0]]})",
       "m.inline.runs[0][1]: expected an integer >= 1, got 0"},
      {R"({"rows": 1, "cols": 8, "runs": [[6, 3]]})",
       "m.inline.runs[0][1]: run [6, 9) ends past the last column (cols 8)"},
      {R"({"rows": 1, "cols": 8, "runs": [[8, 1]]})",
       "m.inline.runs[0][0]: expected an integer <= 7, got 8"},
      {R"({"rows": 1, "cols": 8, "runs": [[-1, 1]]})",
       "m.inline.runs[0][0]: expected an integer >= 0, got -1"},
      {R"({"rows": 2, "cols": 8, "runs": [[], "x"]})",
       R"(m.inline.runs[1]: expected an array [start, length, ...], got "x")"},
      {R"({"rows": 1, "cols": 8, "runs": [[0.5, 1]]})",
       "m.inline.runs[0][0]: expected an integer, got 0.5"},
      {R"({"rows": 1, "cols": 8})", "m.inline.runs: required field is missing"},
      {R"({"rows": 1, "cols": 8, "runs": [[]], "format": 1})", "m.inline.format: unknown key"},
  };
  for (const BadSpec& c : cases) {
    SCOPED_TRACE(c.text);
    auto m = MaskFromRunLengthJson(json::parse(c.text), "m.inline");
    ASSERT_FALSE(m.IsOk());
    EXPECT_NE(m.Message().find(c.message), std::string::npos) << m.Message();
  }
}

}  // namespace
