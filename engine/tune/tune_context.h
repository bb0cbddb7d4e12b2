// TuneContext: what every search method (tune_stof.cpp, tune_gtco.cpp, tune_mcfuser.cpp,
// tune_exhaustive.cpp) evaluates candidates through. It puts in front of a CostSource:
//   - a memo, so a (segment, choice) is evaluated at most once per run;
//   - the persistent cache file (tune_cache.h), keyed by (device, shape, segment, template,
//     parameters), so it is not measured again in a later run either;
//   - the budget (seconds or candidates) and the cancel flag: once spent, Cost() answers only
//     from the memo and methods wind down, keeping the best found;
//   - the events (stage, candidate, new best, progress) for the observer;
//   - the time split of TuneStats (measuring vs predicting vs the search's own work).
// Invariants: candidates are counted once per distinct (segment, choice) evaluated in this run,
// whether measured now or read from the cache file (so a rerun over a full cache makes the
// same decisions: a candidate budget stops at the same point); BestEvent fires only for a
// strictly lower total.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/split_mix64.h"
#include "engine/tune/cost_source.h"
#include "engine/tune/tune_types.h"

namespace stof::engine {

class TuneCache;

class TuneContext {
 public:
  TuneContext(CostSource& source, const TuneOptions& options, TuneObserver* observer,
              TuneCache* cache);

  const OpGraph& Graph() const { return m_source.Graph(); }
  const CostSource& Source() const { return m_source; }
  const TuneOptions& Options() const { return m_options; }
  SplitMix64& Rng() { return m_rng; }

  // The candidate choices of `s` (memoised), default first.
  Expected<std::vector<SegmentChoice>> Choices(const Segment& s);
  // The cost of `s` under `c`; nullopt when it is not known and the budget is spent (or the
  // run cancelled). `force` evaluates past the budget (not past a cancel): methods use it for
  // the one scheme they must be able to return. Errors are failures of the source itself.
  Expected<std::optional<SegmentCost>> Cost(const Segment& s, const SegmentChoice& c,
                                            bool force = false);
  // The cheapest of `choices` already evaluated or evaluable within the budget (its index in
  // `choices`); nullopt when none ran.
  struct Best {
    size_t index = 0;
    SegmentCost cost;
  };
  Expected<std::optional<Best>> BestOf(const Segment& s, const std::vector<SegmentChoice>& choices,
                                       bool force_first = false);

  bool Stopped();                 // budget spent or cancelled
  const std::string& StopReason() const { return m_stop_reason; }
  bool Cancelled() const;
  // The last candidate that did not run and why ("[#1] (default): cpu backend: ...", with
  // where a cached failure came from); "" when every candidate ran. A search that ends with
  // no runnable scheme reports this, not a cancel that never happened.
  const std::string& LastFailure() const { return m_last_failure; }

  void Stage(const std::string& name);
  // Reports `total_us` of `scheme` as the best so far when it is lower than the last.
  void OfferBest(double total_us, const FusionScheme& scheme);
  void Reward(RewardEvent e);  // fills elapsed_s and tells the observer
  // How many candidates the method expects to evaluate in all (for the remaining-time
  // estimate when no budget is given); <= 0 = unknown.
  void SetPlanned(int64_t candidates) { m_planned = candidates; }

  TuneProgress Progress() const;
  TuneStats& Stats() { return m_stats; }
  double Elapsed() const;
  // Adds the time since `t0` to one of the stats' buckets.
  void Charge(double TuneStats::*bucket, std::chrono::steady_clock::time_point t0);

 private:
  CostSource& m_source;
  TuneOptions m_options;
  TuneObserver* m_observer;
  TuneCache* m_cache;
  SplitMix64 m_rng;
  std::chrono::steady_clock::time_point m_start;
  std::map<std::string, SegmentCost> m_memo;
  std::map<std::pair<int, int>, std::vector<SegmentChoice>> m_choices;
  std::string m_stage = "starting";
  std::string m_stop_reason;
  std::string m_last_failure;
  double m_best_us = 0;
  int64_t m_planned = 0;
  TuneStats m_stats;
};

}  // namespace stof::engine
