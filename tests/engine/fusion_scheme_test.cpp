// Tests of fusion codes (engine/fusion/fusion_scheme.h, scheme_hex.h): STOF's BERT example
// scheme and its segments, exact round trips code <-> segments <-> hex for every model's
// layer (op by op and seeded random valid codes), and refused codes naming the field.
#include "engine/fusion/fusion_scheme.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/fusion/scheme_hex.h"
#include "engine/graph/graph_build.h"
#include "tests/engine/test_graphs.h"

using namespace stof::engine;

namespace {

OpGraph Graph(const std::string& preset, std::optional<LayerPart> part = std::nullopt,
              bool separate_bias = false) {
  return stof::engine::testing::PresetGraph(preset, 8, 512, part, separate_bias);
}

std::vector<OpGraph> EveryLayer() {
  std::vector<OpGraph> out;
  for (const ModelConfig& m : ModelPresets()) {
    out.push_back(Graph(m.name));
    if (m.family == ModelFamily::kT5) out.push_back(Graph(m.name, LayerPart::kDecoder));
    if (m.family != ModelFamily::kT5) out.push_back(Graph(m.name, std::nullopt, true));
  }
  return out;
}

TEST(FusionScheme, PaperBertExample) {
  // STOF 4.3: MHA [#2-#6] plus [#7-#9], [#10-#12], [#13,#14]; #7-#9 are 1, #6 and #10 are 0.
  const OpGraph g = Graph("bert-base");
  auto s = FusionScheme::FromCode("10000011100011", g);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  const std::vector<Segment> want = {{1, 1}, {2, 6}, {7, 9}, {10, 12}, {13, 14}};
  EXPECT_EQ(s->Segments(), want);
  EXPECT_EQ(SegmentLabel(want[1]), "[#2-#6]");
  EXPECT_EQ(SegmentLabel(want[4]), "[#13,#14]");
  EXPECT_EQ(SegmentLabel(want[0]), "[#1]");
  EXPECT_EQ(s->SegmentOf(8), 2);
  EXPECT_EQ(*CodeToHex(s->Code()), "14:20e3");
  // The complement describes the same grouping; from segments the first digit is chosen.
  auto complement = FusionScheme::FromCode("01111100011100", g);
  ASSERT_TRUE(complement.IsOk());
  EXPECT_EQ(complement->Segments(), want);
  EXPECT_EQ(*SegmentsToCode(want, '1'), "10000011100011");
  EXPECT_EQ(*SegmentsToCode(want), "01111100011100");
  EXPECT_EQ(CiCount(g, want[1]), 2);
  EXPECT_EQ(CiCount(g, want[4]), 0);
  EXPECT_EQ(FusionScheme::OpByOp(g).Code(), "01010101010101");
  EXPECT_EQ(FusionScheme::OpByOp(g).Segments().size(), 14u);
}

TEST(FusionScheme, RoundTripsForEveryModel) {
  std::mt19937 rng(6);
  for (const OpGraph& g : EveryLayer()) {
    SCOPED_TRACE(g.model + " " + LayerPartName(g.part) + " " + std::to_string(g.Size()) + " ops");
    std::vector<std::string> codes = {FusionScheme::OpByOp(g).Code()};
    // Random codes, kept when within the CI limit (about half of them are).
    for (int tries = 0; tries < 400 && codes.size() < 60; ++tries) {
      std::string c;
      for (int i = 0; i < g.Size(); ++i) c.push_back(rng() % 3 == 0 ? '0' : '1');
      if (FusionScheme::FromCode(c, g).IsOk()) codes.push_back(c);
    }
    ASSERT_GE(codes.size(), 20u);
    for (const std::string& c : codes) {
      auto s = FusionScheme::FromCode(c, g);
      ASSERT_TRUE(s.IsOk()) << c << ": " << s.Message();
      auto back = SegmentsToCode(s->Segments(), c[0]);
      ASSERT_TRUE(back.IsOk());
      EXPECT_EQ(*back, c);
      auto again = FusionScheme::FromSegments(s->Segments(), g, c[0]);
      ASSERT_TRUE(again.IsOk()) << again.Message();
      EXPECT_EQ(*again, *s);
      auto hex = CodeToHex(c);
      ASSERT_TRUE(hex.IsOk());
      auto code = HexToCode(*hex);
      ASSERT_TRUE(code.IsOk()) << *hex << ": " << code.Message();
      EXPECT_EQ(*code, c);
      // Segments cover every op exactly once, in order.
      int next = 1;
      for (const Segment& seg : s->Segments()) {
        EXPECT_EQ(seg.first, next);
        EXPECT_LE(CiCount(g, seg), kMaxCiPerSegment);
        next = seg.last + 1;
      }
      EXPECT_EQ(next, g.Size() + 1);
    }
  }
}

TEST(SchemeHex, Encoding) {
  EXPECT_EQ(*CodeToHex("0"), "1:0");
  EXPECT_EQ(*CodeToHex("1"), "1:1");
  EXPECT_EQ(*CodeToHex("0000"), "4:0");
  EXPECT_EQ(*CodeToHex("10000"), "5:10");
  EXPECT_EQ(*CodeToHex("1111111111111111"), "16:ffff");
  EXPECT_EQ(*CodeToHex("0101010101010101010101"), "22:155555");
  EXPECT_EQ(*HexToCode("14:20E3"), "10000011100011");
  EXPECT_EQ(*HexToCode("5:10"), "10000");
  EXPECT_EQ(*HexToCode("4:0"), "0000");
  EXPECT_EQ(CodeToHex("0120").Message(), "fusion.code: expected only 0/1 digits, got '0120'");
}

TEST(SchemeHex, RefusesMalformedHex) {
  auto msg = [](const std::string& hex) {
    auto c = HexToCode(hex);
    EXPECT_FALSE(c.IsOk()) << hex;
    return c.Message();
  };
  EXPECT_EQ(msg("20e3"), "fusion.hex: expected '<ops>:<hex digits>' (e.g. '14:20e3'), no op count, got '20e3'");
  EXPECT_EQ(msg("14:20e"),
            "fusion.hex: expected '<ops>:<hex digits>' (e.g. '14:20e3'), 14 ops take 4 hex digits, "
            "not 3, got '14:20e'");
  EXPECT_NE(msg("14:e0e3").find("the 2 padding bits must be 0"), std::string::npos);
  EXPECT_NE(msg("4:g").find("'g' is not a hex digit"), std::string::npos);
  EXPECT_NE(msg("0:").find("op count is 0"), std::string::npos);
  EXPECT_NE(msg("x1:1").find("op count is not a number"), std::string::npos);
  EXPECT_NE(msg("99999999999:1").find("op count too large"), std::string::npos);
}

TEST(FusionScheme, RefusesInvalidSchemesNamingTheField) {
  const OpGraph g = Graph("bert-base");
  auto msg = [&](const std::string& code) {
    auto s = FusionScheme::FromCode(code, g);
    EXPECT_FALSE(s.IsOk()) << code;
    return s.Message();
  };
  EXPECT_EQ(msg("012"), "fusion.code: expected only 0/1 digits, got '012'");
  EXPECT_EQ(msg(""), "fusion.code: expected at least one 0/1 digit, got ''");
  EXPECT_EQ(msg("00111000110"),
            "fusion.code: expected 14 digits (one per op of the bert-base layer), got 11");
  // [#1-#6] holds the QKV GEMM and both BatchGEMMs.
  EXPECT_EQ(msg("00000011100011"),
            "fusion.code: segment [#1-#6] has 3 CI ops (GEMM #1, BatchGEMM #2, BatchGEMM #6), at "
            "most 2 allowed");
  // [#6-#10]: PV, out-proj and FFN up.
  EXPECT_NE(msg("10000111110011").find("segment [#6-#10] has 3 CI ops"), std::string::npos);
  auto named = FusionScheme::FromCode("2", g, "plan.json: fusion.code");
  EXPECT_EQ(named.Message(), "plan.json: fusion.code: expected only 0/1 digits, got '2'");

  // Segments: contiguous from op 1, covering every op.
  EXPECT_EQ(FusionScheme::FromSegments({{1, 1}, {3, 14}}, g).Message(),
            "fusion.segments[1]: expected the segment to start at op 2 (contiguous ops only), "
            "got [#3-#14]");
  EXPECT_EQ(FusionScheme::FromSegments({{1, 9}}, g).Message(),
            "fusion.segments: expected the segments to cover ops 1..14, they end at op 9");
  EXPECT_EQ(FusionScheme::FromSegments({{2, 14}}, g).Message(),
            "fusion.segments[0]: expected the segment to start at op 1 (contiguous ops only), "
            "got [#2-#14]");
  EXPECT_FALSE(FusionScheme::FromSegments({}, g).IsOk());
  EXPECT_FALSE(SegmentsToCode({{1, 3}}, '2').IsOk());
}

}  // namespace
