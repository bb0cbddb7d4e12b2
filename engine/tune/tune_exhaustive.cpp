// Exhaustive search (tuner.h): every candidate segment (CandidateSegments: at most two CI ops
// and max_segment_ops ops) under every parameter setting, then every segmentation of the layer
// into those segments, summed; the cheapest wins (ties: the first in enumeration order, which
// cuts later first). It is the ground truth STOF and GTCO are checked against, so it shares
// nothing with them but the cost source: the enumeration is a plain recursion, not the DP.
// Refused when the segmentations exceed options.exhaustive_max_schemes.
#include <functional>
#include <limits>
#include <map>

#include "engine/fusion/default_scheme.h"
#include "engine/tune/tune_search.h"

namespace stof::engine {

Expected<TuneResult> TuneExhaustive(TuneContext& ctx) {
  const OpGraph& g = ctx.Graph();
  const TuneOptions& o = ctx.Options();
  const std::vector<Segment> segs = CandidateSegments(g, o.max_segment_ops);
  // Count the segmentations first (by op: ways[j] = sum over segments ending at j).
  std::vector<double> ways(static_cast<size_t>(g.Size()) + 1, 0);
  ways[0] = 1;
  for (const Segment& s : segs) ways[static_cast<size_t>(s.last)] += ways[static_cast<size_t>(s.first - 1)];
  const double schemes = ways.back();
  if (schemes > static_cast<double>(o.exhaustive_max_schemes))
    return MakeError("tune: exhaustive: " + g.model + " has " +
                     std::to_string(static_cast<int64_t>(schemes)) +
                     " segmentations with segments of at most " +
                     std::to_string(o.max_segment_ops) + " ops, over the limit of " +
                     std::to_string(o.exhaustive_max_schemes) + "; use --method gtco");

  ctx.Stage("initial");
  const FusionScheme init = DefaultScheme(g);
  STOF_ASSIGN_OR_RETURN(auto initial, EvaluateScheme(ctx, init, 1, true));
  if (!initial.has_value()) return NoInitialScheme(ctx);
  ctx.OfferBest(initial->total_us, init);

  ctx.Stage("exhaustive: every segment and setting");
  int64_t planned = 0;
  std::vector<std::vector<SegmentChoice>> all(segs.size());
  for (size_t i = 0; i < segs.size(); ++i) {
    STOF_ASSIGN_OR_RETURN(auto c, OrderedChoices(ctx, segs[i]));
    all[i] = c;
    planned += static_cast<int64_t>(c.size());
  }
  ctx.SetPlanned(planned);
  // best[(first,last)] = the segment's cheapest setting.
  std::map<std::pair<int, int>, SegmentPick> best;
  for (size_t i = 0; i < segs.size(); ++i) {
    STOF_ASSIGN_OR_RETURN(auto b, ctx.BestOf(segs[i], all[i]));
    if (b.has_value()) best[{segs[i].first, segs[i].last}] = {all[i][b->index], b->cost};
  }

  ctx.Stage("exhaustive: every segmentation");
  std::vector<Segment> cur, best_segs;
  double best_total = std::numeric_limits<double>::infinity();
  std::function<void(int, double)> walk = [&](int next, double total) {
    if (next > g.Size()) {
      if (total < best_total) best_total = total, best_segs = cur;
      return;
    }
    for (int last = next; last <= g.Size() && last - next + 1 <= o.max_segment_ops; ++last) {
      auto it = best.find({next, last});
      if (it == best.end()) {
        if (CiCount(g, {next, last}) > kMaxCiPerSegment) break;
        continue;  // not evaluated (budget) or every setting failed
      }
      cur.push_back({next, last});
      walk(last + 1, total + it->second.cost.us);
      cur.pop_back();
    }
  };
  walk(1, 0);
  if (best_segs.empty()) {  // the budget ran out before a full cover was known
    auto r = FinishResult(ctx, *initial, *initial);
    if (r.IsOk()) r->notes.push_back("exhaustive: stopped before every op was measured; the initial scheme is returned");
    return r;
  }
  auto scheme = FusionScheme::FromSegments(best_segs, g);
  if (!scheme.IsOk()) return scheme.ToStatus();
  SchemeEval e;
  e.scheme = *scheme;
  for (const Segment& s : best_segs) {
    const SegmentPick& p = best[{s.first, s.last}];
    e.choices.push_back(p.choice);
    e.costs.push_back(p.cost);
    e.total_us += p.cost.us;
  }
  ctx.OfferBest(e.total_us, e.scheme);
  auto r = FinishResult(ctx, e, *initial);
  if (r.IsOk())
    r->notes.push_back("exhaustive: " + std::to_string(static_cast<int64_t>(schemes)) +
                       " segmentations of " + std::to_string(segs.size()) + " segments");
  return r;
}

}  // namespace stof::engine
