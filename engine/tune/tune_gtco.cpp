// GTCO's fusion by dynamic programming (docs/references.md, GTCO Algorithm 1) on a layer's op chain:
//   dp[0] = 0,  dp[j] = min over segments [i, j] of dp[i - 1] + cost([i, j]),
// over the candidate segments (at most two CI ops, at most max_segment_ops ops), where
// cost([i, j]) is measured: the best of the segment's first `samples` ordered settings. The
// chosen segment per j is recorded and the segmentation rebuilt backwards. Given the costs
// the result is optimal for the chain (the tests check it against exhaustive enumeration).
// Single ops are costed past the budget (their defaults), so a cover always exists; longer
// segments that the budget leaves unmeasured are simply not candidates.
#include <limits>

#include "engine/fusion/default_scheme.h"
#include "engine/tune/tune_search.h"

namespace stof::engine {

Expected<TuneResult> TuneGtco(TuneContext& ctx) {
  const OpGraph& g = ctx.Graph();
  const TuneOptions& o = ctx.Options();
  ctx.Stage("initial");
  const FusionScheme init = DefaultScheme(g);
  STOF_ASSIGN_OR_RETURN(auto initial, EvaluateScheme(ctx, init, 1, true));
  if (!initial.has_value()) return NoInitialScheme(ctx);
  ctx.OfferBest(initial->total_us, init);

  ctx.Stage("gtco: segment costs");
  const std::vector<Segment> segs = CandidateSegments(g, o.max_segment_ops);
  ctx.SetPlanned(static_cast<int64_t>(segs.size()) * o.samples);
  const size_t n = static_cast<size_t>(g.Size());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> dp(n + 1, inf);
  std::vector<SegmentPick> pick(n + 1);
  std::vector<int> from(n + 1, 0);
  dp[0] = 0;
  // CandidateSegments lists segments by end op, so dp[i - 1] is final when [i, j] comes up.
  for (const Segment& s : segs) {
    STOF_ASSIGN_OR_RETURN(auto p, PickForSegment(ctx, s, o.samples, /*force=*/s.Size() == 1));
    if (!p.has_value()) continue;
    const size_t i = static_cast<size_t>(s.first), j = static_cast<size_t>(s.last);
    const double t = dp[i - 1] + p->cost.us;
    if (t < dp[j]) dp[j] = t, pick[j] = *p, from[j] = s.first;
  }
  if (!(dp[n] < inf)) {  // a single op failed with every setting: nothing to cover it with
    auto r = FinishResult(ctx, *initial, *initial);
    if (r.IsOk()) r->notes.push_back("gtco: no cover of the chain could be costed; the initial scheme is returned");
    return r;
  }
  ctx.Stage("gtco: reconstruct");
  std::vector<Segment> chosen;
  std::vector<SegmentPick> picks;
  for (size_t j = n; j > 0; j = static_cast<size_t>(from[j] - 1)) {
    chosen.insert(chosen.begin(), Segment{from[j], static_cast<int>(j)});
    picks.insert(picks.begin(), pick[j]);
  }
  auto scheme = FusionScheme::FromSegments(chosen, g);
  if (!scheme.IsOk()) return scheme.ToStatus();
  SchemeEval e;
  e.scheme = *scheme;
  for (const SegmentPick& p : picks) {
    e.choices.push_back(p.choice);
    e.costs.push_back(p.cost);
    e.total_us += p.cost.us;
  }
  ctx.OfferBest(e.total_us, e.scheme);
  return FinishResult(ctx, e, *initial);
}

}  // namespace stof::engine
