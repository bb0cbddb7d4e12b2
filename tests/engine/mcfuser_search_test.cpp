// Tests of MCFuser's search (engine/mcfuser/chain_search.h) with injected measure functions:
// determinism per seed, measure = model finds the model's optimum, the epsilon stop, failing
// measurements, the progress callback, option errors, and the exhaustive ranking.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "engine/mcfuser/chain_search.h"

using namespace stof::engine;

namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

DeviceSpec H100() { return *FindBuiltinDevice("H100-SXM-80GB"); }

CandidateSpace Space(const char* preset) {
  Expected<CandidateSpace> s = BuildCandidateSpace(*FindGemmChainPreset(preset), H100());
  EXPECT_TRUE(s) << s.Message();
  return *s;
}

ChainMeasureFn ModelMeasure() {
  const DeviceSpec d = H100();
  return [d](const Candidate& c) -> Expected<double> {
    return EstimateChainUnchecked(c, d).seconds;
  };
}

std::vector<std::string> History(const ChainSearchResult& r) {
  std::vector<std::string> out;
  for (const MeasuredCandidate& m : r.history) out.push_back(ToString(m.candidate));
  return out;
}

TEST(McfuserSearch, SameSeedSameSearch) {
  const CandidateSpace s = Space("G4");
  ChainSearchOptions o;
  o.seed = 7;
  o.population = 64;
  const ChainSearchResult a = *SearchChain(s, H100(), ModelMeasure(), o);
  const ChainSearchResult b = *SearchChain(s, H100(), ModelMeasure(), o);
  EXPECT_EQ(History(a), History(b));
  EXPECT_EQ(a.best, b.best);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.measured, b.measured);
  o.seed = 8;
  const ChainSearchResult c = *SearchChain(s, H100(), ModelMeasure(), o);
  EXPECT_NE(History(a), History(c));
  // Every measurement is of a distinct candidate of the space.
  std::set<std::string> seen;
  for (const MeasuredCandidate& m : a.history) {
    EXPECT_TRUE(seen.insert(ToString(m.candidate)).second) << ToString(m.candidate);
    EXPECT_GE(s.Find(m.candidate), 0);
  }
  EXPECT_EQ(a.measured, static_cast<int64_t>(a.history.size()));
}

// With measure = model, the search's answer is the model's optimum over the whole space
// (RankCandidates): certainly when the population holds the space, and for seed 1 with a
// population of 64 out of G1's 432 candidates through mutation.
TEST(McfuserSearch, MeasureEqualsModelFindsTheModelOptimum) {
  for (const char* preset : {"G1", "G4", "G10"}) {
    const CandidateSpace s = Space(preset);
    const std::vector<RankedCandidate> rank = *RankCandidates(s, H100());
    ASSERT_EQ(rank.size(), s.candidates.size());
    ChainSearchOptions o;
    o.population = static_cast<int64_t>(s.candidates.size());
    const ChainSearchResult r = *SearchChain(s, H100(), ModelMeasure(), o);
    EXPECT_EQ(r.best_seconds, rank[0].estimate.seconds) << preset;
    EXPECT_EQ(r.best, rank[0].candidate) << preset;  // same tie-break: space order
    EXPECT_EQ(r.best_estimate_seconds, r.best_seconds);
  }
  const CandidateSpace g1 = Space("G1");
  ChainSearchOptions o;
  o.seed = 1;
  o.population = 64;
  const ChainSearchResult r = *SearchChain(g1, H100(), ModelMeasure(), o);
  EXPECT_EQ(r.best_seconds, (*RankCandidates(g1, H100(), 1))[0].estimate.seconds);
  EXPECT_TRUE(r.converged);
  EXPECT_LT(r.measured, 40);  // a small part of the 432
}

TEST(McfuserSearch, StopsWhenTheBestImprovesByLessThanEpsilon) {
  const CandidateSpace s = Space("G4");
  // A constant time: round 2 cannot improve, so the search stops there.
  auto constant = [](const Candidate&) -> Expected<double> { return 1e-3; };
  ChainSearchOptions o;
  o.population = 32;
  ChainSearchResult r = *SearchChain(s, H100(), constant, o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 2);
  EXPECT_EQ(r.best_seconds, 1e-3);
  // epsilon 0: "less than 0" never holds, so only max_iterations stops it.
  o.epsilon = 0;
  o.max_iterations = 5;
  r = *SearchChain(s, H100(), constant, o);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 5);

  // Each new measurement is faster than all before (1 / call number): rounds keep improving,
  // by less and less; the search must stop at the first round improving by < epsilon.
  int calls = 0;
  auto faster = [&calls](const Candidate&) -> Expected<double> { return 1.0 / ++calls; };
  std::vector<double> bests;
  auto progress = [&bests](const ChainSearchProgress& p) {
    bests.push_back(p.round_best_seconds);
    return true;
  };
  o = ChainSearchOptions{};
  o.population = 64;
  o.epsilon = 0.2;
  r = *SearchChain(s, H100(), faster, o, progress);
  ASSERT_TRUE(r.converged);
  ASSERT_EQ(bests.size(), static_cast<size_t>(r.iterations));
  ASSERT_GE(bests.size(), 3u) << "expected a few improving rounds";
  double best = bests[0];
  for (size_t i = 1; i < bests.size(); ++i) {
    const double gain = (best - bests[i]) / best;
    if (i + 1 < bests.size()) {
      EXPECT_GE(gain, o.epsilon) << "round " << i + 1 << " should not have stopped";
    } else {
      EXPECT_LT(gain, o.epsilon) << "the last round must be the one that stopped";
    }
    best = std::min(best, bests[i]);
  }
  EXPECT_EQ(r.best_seconds, best);
}

TEST(McfuserSearch, FailedMeasurementsAreSkippedNotRetried) {
  const CandidateSpace s = Space("G4");
  const ChainMeasureFn model = ModelMeasure();
  auto small_bm_only = [&](const Candidate& c) -> Expected<double> {
    if (c.tiles.bm > 32) return MakeError("kernel: bm: unsupported");
    return model(c);
  };
  ChainSearchOptions o;
  o.population = 64;
  const ChainSearchResult r = *SearchChain(s, H100(), small_bm_only, o);
  EXPECT_LE(r.best.tiles.bm, 32);
  EXPECT_GT(r.failed, 0);
  std::set<std::string> seen;
  int64_t failed = 0;
  for (const MeasuredCandidate& m : r.history) {
    EXPECT_TRUE(seen.insert(ToString(m.candidate)).second) << "measured twice";
    if (!m.error.empty()) {
      ++failed;
      EXPECT_EQ(m.error, "kernel: bm: unsupported");
    }
  }
  EXPECT_EQ(failed, r.failed);

  auto never = [](const Candidate&) -> Expected<double> { return MakeError("no GPU"); };
  o.max_iterations = 3;
  Expected<ChainSearchResult> none = SearchChain(s, H100(), never, o);
  ASSERT_FALSE(none);
  EXPECT_TRUE(Contains(none.Message(), "no candidate could be measured")) << none.Message();
  EXPECT_TRUE(Contains(none.Message(), ": no GPU")) << none.Message();

  auto negative = [](const Candidate&) -> Expected<double> { return -1.0; };
  none = SearchChain(s, H100(), negative, o);
  ASSERT_FALSE(none);
  EXPECT_TRUE(Contains(none.Message(), "measure returned -1")) << none.Message();
}

TEST(McfuserSearch, ProgressReportsAndCanCancel) {
  const CandidateSpace s = Space("G1");
  int calls = 0;
  auto cancel = [&calls](const ChainSearchProgress& p) {
    ++calls;
    EXPECT_EQ(p.iteration, 1);
    EXPECT_EQ(p.measured, 8);
    EXPECT_GT(p.best_seconds, 0);
    EXPECT_EQ(p.best_seconds, p.round_best_seconds);
    return false;
  };
  const ChainSearchResult r = *SearchChain(s, H100(), ModelMeasure(), {}, cancel);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.iterations, 1);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.measured, 8);
}

TEST(McfuserSearch, ErrorsNameTheField) {
  const CandidateSpace s = Space("G1");
  ChainSearchOptions o;
  o.population = 0;
  EXPECT_EQ(SearchChain(s, H100(), ModelMeasure(), o).Message(),
            "search_options: population: must be positive, got 0");
  o = ChainSearchOptions{};
  o.top_n = -1;
  EXPECT_EQ(SearchChain(s, H100(), ModelMeasure(), o).Message(),
            "search_options: top_n: must be positive, got -1");
  o = ChainSearchOptions{};
  o.epsilon = -0.5;
  EXPECT_TRUE(Contains(SearchChain(s, H100(), ModelMeasure(), o).Message(),
                       "search_options: epsilon: must be >= 0"));
  EXPECT_EQ(SearchChain(s, H100(), ChainMeasureFn{}).Message(),
            "search: measure: no function given");
  CandidateSpace empty = s;
  empty.candidates.clear();
  EXPECT_TRUE(Contains(SearchChain(empty, H100(), ModelMeasure()).Message(),
                       "the candidate space is empty"));
}

TEST(McfuserSearch, RankingIsSortedAndLimited) {
  const CandidateSpace s = Space("G2");
  const std::vector<RankedCandidate> all = *RankCandidates(s, H100());
  ASSERT_EQ(all.size(), s.candidates.size());
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_LE(all[i - 1].estimate.seconds, all[i].estimate.seconds);
  const std::vector<RankedCandidate> top = *RankCandidates(s, H100(), 5);
  ASSERT_EQ(top.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(top[i].candidate, all[i].candidate);
}

// The model's choice for Table II on the built-in H100 (docs/mcfuser.md shows this table):
// predictions, deterministic, not measurements. Estimates in microseconds to 4 digits.
TEST(McfuserSearch, ModelPicksForTableTwoOnH100) {
  struct Pick {
    const char* preset;
    const char* best;
    double us;
  };
  const Pick picks[] = {
      {"G1", "mhnk bm=64 bn=16 bk=64 bh=16", 2.941},
      {"G2", "mhnk bm=64 bn=16 bk=64 bh=16", 3.515},
      {"G3", "mhnk bm=64 bn=16 bk=64 bh=32", 4.218},
      {"G4", "mhnk bm=64 bn=16 bk=256 bh=64", 21.52},
      {"G5", "mhnk bm=32 bn=16 bk=512 bh=128", 37.56},
      {"G6", "mhnk bm=32 bn=16 bk=1024 bh=128", 67.62},
      {"G7", "mhnk bm=64 bn=16 bk=128 bh=32", 10.76},
      {"G8", "mhnk bm=64 bn=16 bk=128 bh=32", 12.86},
      {"G9", "mhnk bm=64 bn=16 bk=128 bh=64", 15.43},
      {"G10", "mhnk bm=64 bn=16 bk=128 bh=32", 24.52},
      {"G11", "mhnk bm=128 bn=16 bk=128 bh=64", 35.85},
      {"G12", "mhnk bm=128 bn=16 bk=128 bh=64", 47.56},
  };
  std::printf("| chain | model's best on H100 | estimate (us) | t_mem (us) | t_comp (us) | alpha "
              "| blocks | tied on estimate |\n|---|---|--:|--:|--:|--:|--:|--:|\n");
  for (const Pick& p : picks) {
    const CandidateSpace s = Space(p.preset);
    const std::vector<RankedCandidate> rank = *RankCandidates(s, H100());
    const RankedCandidate& b = rank[0];
    int ties = 0;
    for (const RankedCandidate& r : rank) ties += r.estimate.seconds == b.estimate.seconds;
    std::printf("| %s | %s | %.4g | %.3g | %.3g | %.3g | %lld | %d |\n", p.preset,
                ToString(b.candidate).c_str(), b.estimate.seconds * 1e6, b.estimate.t_mem * 1e6,
                b.estimate.t_comp * 1e6, b.estimate.alpha, (long long)b.estimate.program.blocks,
                ties);
    EXPECT_EQ(ToString(b.candidate), p.best) << p.preset;
    EXPECT_NEAR(b.estimate.seconds * 1e6, p.us, p.us * 5e-4) << p.preset;
  }
}

}  // namespace
