// Tests of the shared JSON parser and printers (engine/core/json_io.h): duplicate keys and
// syntax errors named with their path or byte, the nesting limit (256 accepted, 257 refused,
// 60 000 refused without a crash, the path in the message), parse time linear in the size
// (issue 16: 80 000 plan measurements took 4.9 s through nlohmann's callback parser), the
// bounded value formatter for messages, and UTF-8-safe dumping.
#include "engine/core/json_io.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using nlohmann::json;
using stof::engine::DumpJson;
using stof::engine::JsonForMessage;
using stof::engine::JsonParseOptions;
using stof::engine::kMaxJsonDepth;
using stof::engine::kMessageValueChars;
using stof::engine::ParseJson;
using stof::engine::TextForMessage;

std::string Nested(int depth, const std::string& inner = "") {
  return std::string(static_cast<size_t>(depth), '[') + inner +
         std::string(static_cast<size_t>(depth), ']');
}

// True when `s` is valid UTF-8 (nlohmann's strict dump throws otherwise).
bool ValidUtf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

TEST(JsonIo, RefusesDuplicateKeysWithTheirPath) {
  auto ok = ParseJson(R"({"a": [1, {"b": 2}], "c": {"b": 3}})", "x.json");
  ASSERT_TRUE(ok.IsOk()) << ok.Message();
  EXPECT_EQ((*ok)["c"]["b"], 3);
  EXPECT_EQ((*ok)["a"][1]["b"], 2);

  auto dup = ParseJson(R"({"a": [1, {"b": 2, "b": 3}]})", "x.json");
  ASSERT_FALSE(dup.IsOk());
  EXPECT_EQ(dup.Message(), "x.json: a[1].b: duplicate key");
  dup = ParseJson(R"({"a": 1, "a": 1})", "x.json");
  EXPECT_EQ(dup.Message(), "x.json: a: duplicate key");
  dup = ParseJson(R"([{"k": 1}, [], {"k": 1, "z": {"k": 0, "k": 2}}])", "x.json");
  EXPECT_EQ(dup.Message(), "x.json: [2].z.k: duplicate key");
  dup = ParseJson(R"({"a": 1, "a": 2})", "");
  EXPECT_EQ(dup.Message(), "a: duplicate key");

  // Allowed on request (HuggingFace configs, tuning-cache lines): the last one wins, as in
  // Python's json module.
  JsonParseOptions lax;
  lax.refuse_duplicate_keys = false;
  auto last = ParseJson(R"({"a": 1, "a": {"b": 2}})", "x.json", lax);
  ASSERT_TRUE(last.IsOk()) << last.Message();
  EXPECT_EQ(*last, json::parse(R"({"a": {"b": 2}})"));
}

TEST(JsonIo, BuildsTheSameValueAsNlohmann) {
  const std::string text = R"({"s": "x\u00e9\n", "i": -3, "u": 18446744073709551615, "f": 1.5e300,
      "b": [true, false, null], "o": {"e": {}, "a": [], "n": [[1], [2, [3]]]}, "": 0})";
  auto j = ParseJson(text, "x.json");
  ASSERT_TRUE(j.IsOk()) << j.Message();
  EXPECT_EQ(*j, json::parse(text));
  auto scalar = ParseJson(" 42 ", "x.json");
  ASSERT_TRUE(scalar.IsOk());
  EXPECT_EQ(*scalar, 42);
}

TEST(JsonIo, SyntaxErrorsNameTheByteWithoutNlohmannsTag) {
  auto bad = ParseJson("{\"a\": 1,\n \"b\": }", "x.json");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_EQ(bad.Message().rfind("x.json: not valid JSON (byte 16): parse error at line 2", 0), 0u)
      << bad.Message();
  EXPECT_EQ(bad.Message().find("[json.exception"), std::string::npos) << bad.Message();
  auto empty = ParseJson("", "e.json");
  EXPECT_EQ(empty.Message().rfind("e.json: not valid JSON (byte 1): ", 0), 0u) << empty.Message();
  auto trailing = ParseJson("[1] [2]", "t.json");
  EXPECT_EQ(trailing.Message().rfind("t.json: not valid JSON (byte 5): ", 0), 0u)
      << trailing.Message();
}

TEST(JsonIo, MessagesAboutBinaryInputAreBoundedValidUtf8) {
  // nlohmann quotes the bytes it read; a binary file's bytes must not reach a --json output raw.
  std::string binary = "\"";
  for (int i = 0; i < 5000; ++i) binary += static_cast<char>(0x80 + i % 100);
  auto bad = ParseJson(binary, "bin.json");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_TRUE(ValidUtf8(bad.Message())) << bad.Message();
  EXPECT_LT(bad.Message().size(), 600u) << bad.Message();
  EXPECT_EQ(bad.Message().rfind("bin.json: not valid JSON (byte ", 0), 0u) << bad.Message();
}

TEST(JsonIo, AcceptsTheDepthLimitAndRefusesOneMore) {
  auto at_limit = ParseJson(Nested(kMaxJsonDepth, "7"), "d.json");
  ASSERT_TRUE(at_limit.IsOk()) << at_limit.Message();
  const json* v = &*at_limit;
  for (int i = 0; i < kMaxJsonDepth; ++i) v = &(*v)[0];
  EXPECT_EQ(*v, 7);

  auto over = ParseJson(Nested(kMaxJsonDepth + 1), "d.json");
  ASSERT_FALSE(over.IsOk());
  EXPECT_EQ(over.Message().rfind("d.json: JSON nested deeper than 256 levels at [0][0]", 0), 0u)
      << over.Message();
  EXPECT_NE(over.Message().find("(arrays and objects inside each other; the limit is 256)"),
            std::string::npos)
      << over.Message();

  JsonParseOptions shallow;
  shallow.max_depth = 2;
  EXPECT_TRUE(ParseJson("[[1]]", "s.json", shallow).IsOk());
  EXPECT_EQ(ParseJson(R"({"a": {"b": [1]}})", "s.json", shallow).Message(),
            "s.json: JSON nested deeper than 2 levels at a.b (arrays and objects inside each "
            "other; the limit is 2)");
  EXPECT_EQ(ParseJson(R"([1, 2, [3, 4, [5]]])", "s.json", shallow).Message(),
            "s.json: JSON nested deeper than 2 levels at [2][2] (arrays and objects inside each "
            "other; the limit is 2)");
}

TEST(JsonIo, SixtyThousandLevelsAreAnErrorNotACrash) {
  // Issue 16: `stof graph --config` of this file died of a stack overflow.
  for (const std::string& text : {Nested(60000), std::string(60000, '[') /* unterminated */, [] {
                                    std::string s;
                                    for (int i = 0; i < 60000; ++i) s += "{\"k\":";
                                    return s + "1" + std::string(60000, '}');
                                  }()}) {
    auto r = ParseJson(text, "d.json");
    ASSERT_FALSE(r.IsOk());
    EXPECT_EQ(r.Message().rfind("d.json: JSON nested deeper than 256 levels at ", 0), 0u)
        << r.Message();
    EXPECT_LT(r.Message().size(), 300u) << r.Message();
  }
}

TEST(JsonIo, TheDeepPathNamesWhereInAPlanTheNestingIs) {
  const std::string text =
      R"({"fusion": {"segments": [{"params": {"deep": )" + Nested(100000) + "}}]}}";
  auto r = ParseJson(text, "plan.json");
  ASSERT_FALSE(r.IsOk());
  EXPECT_EQ(r.Message().rfind("plan.json: JSON nested deeper than 256 levels at "
                              "fusion.segments[0].params.deep[0][0]",
                              0),
            0u)
      << r.Message();
  EXPECT_NE(r.Message().find("[0]... (arrays"), std::string::npos) << r.Message();
}

TEST(JsonIo, ParseTimeIsLinearInTheInput) {
  // 200 000 objects in one array: nlohmann 3.11.2's callback parser scanned the array once per
  // object (about 40 s here); the SAX builder takes a fraction of a second. The bound is loose
  // for a shared 2-core machine.
  std::string text = "[";
  for (int i = 0; i < 200000; ++i)
    text += std::string(i ? "," : "") +
            R"({"what": "segment 1", "latency_us": 12.5, "measured": true})";
  text += "]";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = ParseJson(text, "big.json");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(r->size(), 200000u);
  EXPECT_LT(s, 5.0);
}

TEST(JsonIo, MessageValuesAreBoundedInSizeAndDepth) {
  EXPECT_EQ(JsonForMessage(json(5)), "5");
  EXPECT_EQ(JsonForMessage(json("x")), "\"x\"");
  EXPECT_EQ(JsonForMessage(json::parse(R"({"a": [1, 2], "b": {}})")), R"({"a":[1,2],"b":{}})");
  EXPECT_EQ(JsonForMessage(json::parse(Nested(3, "1"))), "[[[1]]]");
  EXPECT_EQ(JsonForMessage(json::parse(Nested(4, "1"))), "[[[[...]]]]");
  EXPECT_EQ(JsonForMessage(json::parse(R"({"a": {"b": {"c": {"d": 1}}}})")),
            R"({"a":{"b":{"c":{...}}}})");

  // 100 000 levels built in memory (no parser): shown 3 deep, never walked further.
  json deep = json::array();
  for (int i = 0; i < 100000; ++i) {
    json outer = json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  EXPECT_EQ(JsonForMessage(deep), "[[[[...]]]]");

  json big = json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(i);
  const std::string b = JsonForMessage(big);
  EXPECT_LE(b.size(), kMessageValueChars + 3);
  EXPECT_EQ(b.rfind("[0,1,2,", 0), 0u) << b;
  EXPECT_EQ(b.substr(b.size() - 3), "...") << b;

  // A long string is cut inside its quotes, so the whole stays within the bound.
  EXPECT_EQ(JsonForMessage(json(std::string(10000, 'x'))), "\"" + std::string(195, 'x') + "...\"");

  // Cut at a character boundary, and invalid bytes replaced: the message stays UTF-8.
  std::string accents;
  for (int i = 0; i < 300; ++i) accents += "\xc3\xa9";
  EXPECT_TRUE(ValidUtf8(JsonForMessage(json(accents))));
  EXPECT_TRUE(ValidUtf8(JsonForMessage(json::array({"a\xe9", accents}))));
  EXPECT_NE(JsonForMessage(json("a\xe9")).find("\xef\xbf\xbd"), std::string::npos);
}

TEST(JsonIo, TextForMessageReplacesBadBytesAndCuts) {
  EXPECT_EQ(TextForMessage("plain"), "plain");
  EXPECT_EQ(TextForMessage("x_\xe9.npy"), "x_\xef\xbf\xbd.npy");
  EXPECT_EQ(TextForMessage("a\nb\tc"), "a b c");
  EXPECT_EQ(TextForMessage("\xc3\xa9t\xc3\xa9"), "\xc3\xa9t\xc3\xa9");  // valid UTF-8 kept
  EXPECT_EQ(TextForMessage("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
  EXPECT_EQ(TextForMessage("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");  // overlong '/'
  EXPECT_EQ(TextForMessage(std::string(10, 'y'), 4), "yyyy...");
  EXPECT_EQ(TextForMessage("\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9\xc3\xa9...");
}

TEST(JsonIo, DumpReplacesInvalidUtf8InsteadOfThrowing) {
  const json j = {{"path", "/tmp/x_\xe9.npy"}, {"n", 1}};
  EXPECT_THROW((void)j.dump(), json::type_error);  // what --json did before (SIGABRT)
  std::string out;
  ASSERT_NO_THROW(out = DumpJson(j));
  EXPECT_EQ(out, "{\"n\":1,\"path\":\"/tmp/x_\xef\xbf\xbd.npy\"}");
  EXPECT_EQ(DumpJson(json::parse(R"({"a": [1]})"), 2), "{\n  \"a\": [\n    1\n  ]\n}");
}

}  // namespace
