// Tests of the per-block rules (engine/layout/block_rule.h) and BlockLayout::Build from them:
// the layout of a dilated band and a sliding window, causal or not, at ragged lengths (1000,
// 3000, 65537) and every block shape class (16 x 16, 32 x 64, 64 x 128, 128 x 64, 256 x 16),
// with steps below, at and past one word (1, 2, 4, 70), equal field by field to the layout
// built from the same spec's row runs; the same for BigBird, Longformer, global tokens and
// random blocks (random blocks of 32 and 64 against every tile shape); full, causal and
// documents (as rules, which the specs alone do not take: their runs are faster); "or", "and",
// "not" and nested compositions of rules, causal or not; which specs have a rule; empty rules
// refused.
#include "engine/layout/block_rule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/layout/block_layout.h"
#include "engine/mask/row_runs.h"
#include "layout_equal.h"

namespace {

namespace e = stof::engine;

// `s` resolved (defaults filled in, checked) up to the row-runs length.
e::MaskSpec Resolved(const e::MaskSpec& s) {
  auto r = e::Resolve(s, e::RowRuns::kMaxLen);
  EXPECT_TRUE(r.IsOk()) << r.Message();
  return r.IsOk() ? *r : s;
}

e::MaskSpec Spec(const std::string& pattern, int64_t L, int64_t width, int64_t dilation,
                 bool causal) {
  e::MaskSpec s;
  s.pattern = pattern;
  s.seq_len = L;
  s.width = width;
  s.dilation = dilation;
  s.causal = causal;
  return Resolved(s);
}

void ExpectRuleEqualsRuns(const e::MaskSpec& s, int64_t bm, int64_t bn) {
  SCOPED_TRACE(e::Describe(s) + " at " + std::to_string(bm) + " x " + std::to_string(bn));
  auto rule = e::MakeOperandRule(s);  // full / causal / documents alone take their runs
  ASSERT_NE(rule, nullptr);
  auto got = e::BlockLayout::Build(*rule, bm, bn);
  ASSERT_TRUE(got.IsOk()) << got.Message();
  auto runs = e::RowRuns::FromSpec(s);
  ASSERT_TRUE(runs.IsOk()) << runs.Message();
  auto want = e::BlockLayout::Build(*runs, bm, bn);
  ASSERT_TRUE(want.IsOk()) << want.Message();
  ASSERT_NO_FATAL_FAILURE(e::testing::ExpectSameLayout(*got, *want));
}

}  // namespace

TEST(BlockRule, DilatedAndSlidingWindowEqualTheRunsLayout) {
  const std::pair<int64_t, int64_t> blocks[] = {{16, 16}, {32, 64}, {64, 128}, {128, 64},
                                                {256, 16}};
  for (int64_t L : {1000, 3000}) {
    for (int64_t dilation : {0, 1, 3, 69}) {
      for (bool causal : {false, true}) {
        for (const auto& [bm, bn] : blocks) {
          ExpectRuleEqualsRuns(Spec("dilated", L, 9, dilation, causal), bm, bn);
        }
      }
    }
    ExpectRuleEqualsRuns(Spec("sliding_window", L, 37, 1, false), 64, 64);
    ExpectRuleEqualsRuns(Spec("sliding_window", L, 200, 1, true), 128, 128);
    ExpectRuleEqualsRuns(Spec("dilated", L, -1, -1, false), 64, 64);  // the defaults
  }
  ExpectRuleEqualsRuns(Spec("dilated", 65537, 40, 1, false), 128, 128);
  ExpectRuleEqualsRuns(Spec("dilated", 65537, 3, 70, true), 64, 32);
}

// A global / band / random-block spec: global g, width w, random fill and block, seed.
e::MaskSpec GlobalSpec(const std::string& pattern, int64_t L, int64_t g, int64_t w, double fill,
                       int64_t block, uint64_t seed, bool causal) {
  e::MaskSpec s;
  s.pattern = pattern;
  s.seq_len = L;
  s.global = g;
  s.width = w;
  s.fill = fill;
  s.block = block;
  s.seed = seed;
  s.causal = causal;
  return Resolved(s);
}

TEST(BlockRule, GlobalBandAndRandomBlocksEqualTheRunsLayout) {
  // Random blocks of 32 and 64 against tiles of 16 to 256 (blocks straddle tiles both ways),
  // ragged lengths, global tokens crossing a tile, causal or not; BigBird's blocks are drawn
  // only where global and band leave them empty, so its cell counts add the parts.
  const std::pair<int64_t, int64_t> blocks[] = {{16, 16}, {64, 64}, {128, 64}, {64, 128},
                                                {256, 16}};
  for (int64_t L : {1000, 3000}) {
    for (bool causal : {false, true}) {
      for (const auto& [bm, bn] : blocks) {
        ExpectRuleEqualsRuns(GlobalSpec("bigbird", L, 40, 50, 0.1, 64, 7, causal), bm, bn);
        ExpectRuleEqualsRuns(GlobalSpec("longformer", L, 70, 33, -1, -1, 0, causal), bm, bn);
      }
      ExpectRuleEqualsRuns(GlobalSpec("bigbird", L, 0, 20, 0.3, 32, 3, causal), 128, 128);
      ExpectRuleEqualsRuns(GlobalSpec("random_blocks", L, -1, -1, 0.2, 32, 5, causal), 64, 64);
      ExpectRuleEqualsRuns(GlobalSpec("global", L, 100, -1, -1, -1, 0, causal), 128, 64);
      ExpectRuleEqualsRuns(GlobalSpec("bigbird", L, -1, -1, -1, -1, 0, causal), 64, 64);
    }
  }
  ExpectRuleEqualsRuns(GlobalSpec("bigbird", 65537, 64, 192, 0.05, 64, 11, false), 128, 128);
}

e::MaskSpec Composite(const std::string& op, std::vector<e::MaskSpec> operands, bool causal) {
  e::MaskSpec s;
  s.pattern = op;
  s.seq_len = operands.front().seq_len;
  s.operands = std::move(operands);
  s.causal = causal;
  return Resolved(s);
}

TEST(BlockRule, CompositionsOfRulesEqualTheRunsLayout) {
  // A window or global tokens, a dilated band and BigBird, a window but not its centre, each
  // with and without the composition's causal flag, and a nested one.
  for (bool causal : {false, true}) {
    const int64_t L = 1500;
    const auto window = Spec("sliding_window", L, 64, 1, false);
    const auto dilated = Spec("dilated", L, 40, 2, false);
    const auto global = GlobalSpec("global", L, 50, -1, -1, -1, 0, false);
    const auto bigbird = GlobalSpec("bigbird", L, 20, 30, 0.2, 32, 9, false);
    for (const auto& [bm, bn] : {std::pair<int64_t, int64_t>{64, 64}, {128, 64}, {16, 128}}) {
      ExpectRuleEqualsRuns(Composite("or", {window, global}, causal), bm, bn);
      ExpectRuleEqualsRuns(Composite("and", {dilated, bigbird}, causal), bm, bn);
      ExpectRuleEqualsRuns(
          Composite("and", {window, Composite("not", {Spec("sliding_window", L, 4, 1, false)},
                                              false)},
                    causal),
          bm, bn);
      ExpectRuleEqualsRuns(
          Composite("or", {Composite("and", {window, bigbird}, false), dilated}, causal), bm, bn);
    }
  }
}

e::MaskSpec Documents(int64_t L, std::vector<int64_t> lengths, bool causal) {
  e::MaskSpec s;
  s.pattern = "document";
  s.seq_len = L;
  s.doc_lengths = std::move(lengths);
  s.causal = causal;
  return Resolved(s);
}

TEST(BlockRule, FullCausalAndDocumentsEqualTheRunsLayout) {
  // Documents whose edges fall inside tiles and on them, one of a single row; and the common
  // compositions they enable: documents with a window inside each, or with global tokens.
  const auto docs = Documents(1000, {1, 127, 128, 300, 44, 400}, false);
  for (const auto& [bm, bn] : {std::pair<int64_t, int64_t>{64, 64}, {128, 64}, {16, 128}}) {
    for (bool causal : {false, true}) {
      ExpectRuleEqualsRuns(Spec("full", 1000, -1, -1, causal), bm, bn);
      ExpectRuleEqualsRuns(Spec("causal", 1000, -1, -1, causal), bm, bn);
      ExpectRuleEqualsRuns(Documents(1000, {1, 127, 128, 300, 44, 400}, causal), bm, bn);
      ExpectRuleEqualsRuns(Composite("and", {docs, Spec("sliding_window", 1000, 50, 1, false)},
                                     causal),
                           bm, bn);
      ExpectRuleEqualsRuns(
          Composite("or", {docs, GlobalSpec("global", 1000, 16, -1, -1, -1, 0, false)}, causal),
          bm, bn);
    }
  }
}

TEST(BlockRule, WhichSpecsHaveARule) {
  for (const std::string p : {"dilated", "sliding_window", "bigbird", "longformer", "global",
                              "random_blocks"})
    EXPECT_NE(e::MakeBlockRule(Spec(p, 256, -1, -1, false)), nullptr) << p;
  // One run per row: faster from the runs alone, so no rule unless in a composition.
  for (const std::string p : {"causal", "full"})
    EXPECT_EQ(e::MakeBlockRule(Spec(p, 256, -1, -1, false)), nullptr) << p;
  EXPECT_EQ(e::MakeBlockRule(Documents(256, {100, 156}, true)), nullptr);
  EXPECT_EQ(e::MakeRowIntervalRule(256, e::RowInterval::kDocuments, {100, 100}, false), nullptr);
  e::MaskSpec both;
  both.pattern = "or";
  both.seq_len = 256;
  both.operands = {Spec("dilated", 256, 8, 1, false), Spec("causal", 256, -1, -1, false)};
  EXPECT_NE(e::MakeBlockRule(both), nullptr);
  e::MaskSpec unknown = Spec("causal", 256, -1, -1, false);
  unknown.pattern = "spiral";  // not a generator: no rule
  EXPECT_EQ(e::MakeBlockRule(unknown), nullptr);
}

TEST(BlockRule, RefusesBadBlockSizes) {
  auto rule = e::MakeBlockRule(Spec("dilated", 256, 8, 1, false));
  ASSERT_NE(rule, nullptr);
  auto bad = e::BlockLayout::Build(*rule, 48, 64);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("48"), std::string::npos) << bad.Message();
}
