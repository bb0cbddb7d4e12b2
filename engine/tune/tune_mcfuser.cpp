// MCFuser as a tuning method (tuner.h; docs/references.md, MCFuser): the default scheme with CI+CI
// GEMM chains fused, each chain tuned by MCFuser's population search (engine/mcfuser/
// chain_search.h) over its pruned tiling-expression space, measuring only the top n of each
// round by the analytical model and stopping when the best improves by less than epsilon.
// Candidates our chain kernel cannot run (another expression, or tiles it does not
// instantiate: the backend's GemmChainParamChoices) fail without being timed. The other
// segments keep their default settings (MCFuser tunes chains only). Where the backend also
// runs a chain with another kernel (the Hopper chain on sm_90: "cluster" settings), those
// settings are measured after the search and the fastest of all kept. A chain that ends up
// slower than running its ops as the default scheme would is split again, with a note.
#include <algorithm>

#include "engine/fusion/default_scheme.h"
#include "engine/mcfuser/candidate_space.h"
#include "engine/mcfuser/chain_kernel_map.h"
#include "engine/mcfuser/chain_search.h"
#include "engine/tune/tune_search.h"

namespace stof::engine {

Expected<TuneResult> TuneMcfuser(TuneContext& ctx) {
  const OpGraph& g = ctx.Graph();
  ctx.Stage("initial");
  DefaultSchemeOptions with_chains;
  with_chains.gemm_chains = true;
  const FusionScheme init = DefaultScheme(g, with_chains);
  STOF_ASSIGN_OR_RETURN(auto initial, EvaluateScheme(ctx, init, 1, true));
  if (!initial.has_value()) return NoInitialScheme(ctx);
  ctx.OfferBest(initial->total_us, init);
  SchemeEval cur = *initial;
  std::vector<std::string> notes;
  const DeviceSpec device = ctx.Source().Device();

  std::vector<Segment> result_segs;
  std::vector<SegmentPick> result_picks;
  for (size_t i = 0; i < cur.scheme.Segments().size(); ++i) {
    const Segment s = cur.scheme.Segments()[i];
    const SegmentPick as_is{cur.choices[i], cur.costs[i]};
    if (RunningTemplate(g, s, SegmentChoice{}) != TemplateKind::kGemmChain) {
      result_segs.push_back(s);
      result_picks.push_back(as_is);
      continue;
    }
    ctx.Stage("mcfuser: chain " + SegmentLabel(s));
    STOF_ASSIGN_OR_RETURN(auto shape, ChainShapeOf(g, s));
    auto space = BuildCandidateSpace(shape, device);
    if (!space.IsOk()) return space.ToStatus().WithContext("tune: mcfuser: " + SegmentLabel(s) + ": ");
    auto runnable = ctx.Choices(s);  // what the backend instantiates (measured sources)
    if (!runnable.IsOk()) return runnable.ToStatus();
    const auto instantiated = [&](const ParamMap& p) -> const SegmentChoice* {
      for (const SegmentChoice& c : *runnable) {
        bool same = !c.params.empty();
        for (const char* k : {"bm", "bn", "bk", "bh"}) {
          auto a = c.params.find(k), b = p.find(k);
          same = same && a != c.params.end() && b != p.end() && a->second == b->second;
        }
        if (same) return &c;
      }
      return nullptr;
    };
    SegmentChoice best_choice = as_is.choice;
    SegmentCost best_cost = as_is.cost;
    const ChainMeasureFn measure = [&](const Candidate& cand) -> Expected<double> {
      if (!RunnableByChainKernel(cand))
        return MakeError("the chain kernel runs expression mhnk only");
      SegmentChoice choice;
      choice.params = ChainParams(cand);
      if (ctx.Source().Measures()) {
        const SegmentChoice* inst = instantiated(choice.params);
        if (inst == nullptr) return MakeError("tiles not instantiated by the chain kernel");
        choice = *inst;
      }
      STOF_ASSIGN_OR_RETURN(auto cost, ctx.Cost(s, choice));
      if (!cost.has_value()) return MakeError("tuning budget spent");
      if (!cost->Ok()) return MakeError(cost->error);
      if (cost->us < best_cost.us || !best_cost.Ok()) best_cost = *cost, best_choice = choice;
      return cost->us * 1e-6;
    };
    ChainSearchOptions so;
    so.seed = ctx.Options().seed;
    auto found = SearchChain(*space, device, measure, so,
                             [&](const ChainSearchProgress&) { return !ctx.Stopped(); });
    if (!found.IsOk())
      notes.push_back("mcfuser: " + SegmentLabel(s) + ": " + found.Message());
    else
      notes.push_back("mcfuser: " + SegmentLabel(s) + ": " + std::to_string(found->measured) +
                      " candidates measured in " + std::to_string(found->iterations) +
                      " rounds (" + std::to_string(found->failed) + " not runnable)" +
                      (found->converged ? ", converged" : ""));
    // Kernels outside MCFuser's tiling expressions that the backend runs for this chain (on
    // sm_90 the Hopper chain: its clusters and split groups) are measured as they are.
    if (ctx.Source().Measures()) {
      int64_t others = 0;
      for (const SegmentChoice& c : *runnable) {
        if (c.params.count("cluster") == 0 || ctx.Stopped()) continue;
        STOF_ASSIGN_OR_RETURN(auto cost, ctx.Cost(s, c));
        if (!cost.has_value()) break;  // the budget is spent
        ++others;
        if (cost->Ok() && (!best_cost.Ok() || cost->us < best_cost.us))
          best_cost = *cost, best_choice = c;
      }
      if (others > 0)
        notes.push_back("mcfuser: " + SegmentLabel(s) + ": " + std::to_string(others) +
                        " Hopper chain settings measured too");
    }
    // The chain against its ops cut as the default scheme cuts them (clipped to the chain).
    const FusionScheme apart = DefaultScheme(g);
    std::vector<Segment> split;
    double split_us = 0;
    std::vector<SegmentPick> split_picks;
    bool split_ok = true;
    for (const Segment& whole : apart.Segments()) {
      if (whole.last < s.first || whole.first > s.last) continue;
      const Segment t{std::max(whole.first, s.first), std::min(whole.last, s.last)};
      STOF_ASSIGN_OR_RETURN(auto p, PickForSegment(ctx, t, 1, true));
      if (!p.has_value()) { split_ok = false; break; }
      split.push_back(t);
      split_picks.push_back(*p);
      split_us += p->cost.us;
    }
    if (split_ok && !split.empty() && (!best_cost.Ok() || split_us < best_cost.us)) {
      notes.push_back("mcfuser: " + SegmentLabel(s) + " fused (" +
                      std::to_string(best_cost.us) + " us) is slower than apart (" +
                      std::to_string(split_us) + " us): kept apart");
      result_segs.insert(result_segs.end(), split.begin(), split.end());
      result_picks.insert(result_picks.end(), split_picks.begin(), split_picks.end());
    } else {
      result_segs.push_back(s);
      result_picks.push_back({best_choice, best_cost});
    }
  }
  auto scheme = FusionScheme::FromSegments(result_segs, g);
  if (!scheme.IsOk()) return scheme.ToStatus();
  SchemeEval e;
  e.scheme = *scheme;
  for (const SegmentPick& p : result_picks) {
    e.choices.push_back(p.choice);
    e.costs.push_back(p.cost);
    e.total_us += p.cost.us;
  }
  ctx.OfferBest(e.total_us, e.scheme);
  auto r = FinishResult(ctx, e, *initial);
  if (r.IsOk()) r->notes.insert(r->notes.end(), notes.begin(), notes.end());
  return r;
}

}  // namespace stof::engine
