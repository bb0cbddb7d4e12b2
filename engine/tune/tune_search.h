// Pieces the search methods share (internal to engine/tune/): the per-segment order in which
// parameter settings are sampled, evaluating a whole scheme, the segment universe of GTCO and
// exhaustive, and turning a chosen scheme into a TuneResult. The methods themselves:
// tune_stof.cpp, tune_gtco.cpp, tune_mcfuser.cpp, tune_exhaustive.cpp.
// Invariants: OrderedChoices is a fixed permutation per (segment, seed): the default first,
// attention settings in Eq. 2's rank order, every other list shuffled by SplitMix64 seeded from
// the seed and the segment, so "the first k" names the same settings in every stage and run.
#pragma once

#include <optional>
#include <vector>

#include "engine/tune/tune_context.h"

namespace stof::engine {

Expected<std::vector<SegmentChoice>> OrderedChoices(TuneContext& ctx, const Segment& s);

// A scheme with a choice and a cost per segment.
struct SchemeEval {
  FusionScheme scheme;
  std::vector<SegmentChoice> choices;
  std::vector<SegmentCost> costs;
  double total_us = 0;
};

// The best of the first `samples` ordered choices of `s` (the default forced past the budget
// when `force`); nullopt when none could be evaluated (budget) or all failed.
struct SegmentPick {
  SegmentChoice choice;
  SegmentCost cost;
};
Expected<std::optional<SegmentPick>> PickForSegment(TuneContext& ctx, const Segment& s,
                                                    int64_t samples, bool force);

// Every segment of `scheme` through PickForSegment; nullopt when a segment got no cost.
Expected<std::optional<SchemeEval>> EvaluateScheme(TuneContext& ctx, const FusionScheme& scheme,
                                                   int64_t samples, bool force);

// Why the initial scheme got no cost (EvaluateScheme's nullopt with force): cancelled, or,
// far more often, no setting of one of its segments runs (the last failure, kept in the
// cache file or not). Every method starts with this check.
Status NoInitialScheme(const TuneContext& ctx);

// Segments [i, j] with at most kMaxCiPerSegment CI ops and at most `max_ops` ops, by end op
// then start (the DP's order).
std::vector<Segment> CandidateSegments(const OpGraph& g, int64_t max_ops);

// The result for `eval`, with each segment's default cost (from the memo or evaluated now,
// within the budget) and the context's stats and stop reason.
Expected<TuneResult> FinishResult(TuneContext& ctx, const SchemeEval& eval,
                                  const SchemeEval& initial);

Expected<TuneResult> TuneStof(TuneContext& ctx);
Expected<TuneResult> TuneGtco(TuneContext& ctx);
Expected<TuneResult> TuneMcfuser(TuneContext& ctx);
Expected<TuneResult> TuneExhaustive(TuneContext& ctx);

}  // namespace stof::engine
