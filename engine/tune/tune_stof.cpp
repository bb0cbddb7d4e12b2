// STOF's two-stage search (docs/references.md, STOF section 4.4; tuner.h):
//   initial  DefaultScheme with CI+CI chains fused when batch * L <= small_tokens (the rule of
//            the paper: chains pay at small batch x length), attention on Eq. 1 / Eq. 2's
//            kernel (the first ordered choice), each segment the best of `samples` settings;
//            the chains are kept only when that is faster than the scheme without them.
//   stage 1  depth first over NeighbourSchemes (expand, seize, compete): for each move, the
//            segments it creates are sampled (`samples` settings each; the ones it keeps are
//            already known) and the move is kept only when the layer gets faster; the search
//            then continues from the new scheme, else rolls back and tries the next move.
//            A scheme seen once is never tried again; it ends when no move pays.
//   stage 2  reward-based sampling on the chosen scheme: each iteration samples
//            stage2_per_iteration further settings (down each segment's ordered list); the
//            first iteration shares them equally, later ones give every segment with settings
//            left one sample and the rest in proportion to the time it gained in the previous
//            iteration (the segment with the largest gain gets the most). Ends after
//            stage2_iterations, when no segment has settings left, or after two iterations
//            without any gain.
// The TuneContext's memo is STOF's cache: a setting is measured once in a run, and the cache
// file makes that hold across runs too.
#include <algorithm>
#include <cmath>
#include <set>

#include "engine/fusion/default_scheme.h"
#include "engine/fusion/fusion_rules.h"
#include "engine/tune/tune_search.h"

namespace stof::engine {

namespace {
using Clock = std::chrono::steady_clock;

// Stage 2's allocation of `budget` samples over segments with `left` settings remaining and
// last-iteration gains `gain`; equal shares when no gain is known.
std::vector<int64_t> Allocate(int64_t budget, const std::vector<int64_t>& left,
                              const std::vector<double>& gain, bool first) {
  const size_t n = left.size();
  std::vector<int64_t> out(n, 0);
  std::vector<size_t> active;
  for (size_t i = 0; i < n; ++i)
    if (left[i] > 0) active.push_back(i);
  if (active.empty() || budget <= 0) return out;
  double gain_sum = 0;
  for (size_t i : active) gain_sum += std::max(0.0, gain[i]);
  int64_t rest = budget;
  if (first || gain_sum <= 0) {
    for (size_t k = 0; rest > 0; k = (k + 1) % active.size()) {
      bool any = false;
      for (size_t i : active) any = any || out[i] < left[i];
      if (!any) break;
      const size_t i = active[k];
      if (out[i] < left[i]) out[i]++, rest--;
    }
    return out;
  }
  for (size_t i : active)
    if (rest > 0) out[i] = 1, rest--;
  const int64_t pool = rest;
  for (size_t i : active) {
    const int64_t extra = static_cast<int64_t>(
        std::floor(static_cast<double>(pool) * std::max(0.0, gain[i]) / gain_sum));
    const int64_t take = std::min({extra, left[i] - out[i], rest});
    out[i] += take, rest -= take;
  }
  // Leftovers (rounding, exhausted lists) go to the largest gains first.
  std::vector<size_t> by_gain = active;
  std::stable_sort(by_gain.begin(), by_gain.end(),
                   [&](size_t a, size_t b) { return gain[a] > gain[b]; });
  for (size_t i : by_gain) {
    const int64_t take = std::min(left[i] - out[i], rest);
    out[i] += take, rest -= take;
  }
  return out;
}

// The starting scheme: STOF's initial rules (with CI+CI GEMM chains at small batch x length,
// kept only when faster than without), each segment at its best of `samples` settings. Adds a
// note when the chains were dropped.
Expected<SchemeEval> InitialScheme(TuneContext& ctx, std::vector<std::string>& notes) {
  const OpGraph& g = ctx.Graph();
  const TuneOptions& o = ctx.Options();
  ctx.Stage("initial");
  auto t_rules = Clock::now();
  DefaultSchemeOptions rules;
  rules.gemm_chains = g.batch * g.seq_len <= o.small_tokens;
  const FusionScheme init = DefaultScheme(g, rules);
  ctx.Charge(&TuneStats::rules_s, t_rules);
  auto initial = EvaluateScheme(ctx, init, o.samples, true);
  if (!initial.IsOk()) return initial.ToStatus();
  if (!initial->has_value()) {
    // The budget ran out inside the sampling: the defaults alone (forced) still give a plan.
    initial = EvaluateScheme(ctx, init, 1, true);
    if (!initial.IsOk()) return initial.ToStatus();
    if (!initial->has_value()) return NoInitialScheme(ctx);
  }
  SchemeEval cur = **initial;
  // The rule's CI+CI fusions are a fusion step like any other: kept only when faster. Stage 1
  // only ever merges, so a chain the kernels run slowly (ours at most shapes on an H100) would
  // otherwise trap the search above what GTCO finds (measured: docs/benchmarks.md, "Tuner:
  // tuned plans, search methods, tuning time (issue 7)").
  if (rules.gemm_chains) {
    const FusionScheme plain = DefaultScheme(g);
    if (!(plain == init)) {
      STOF_ASSIGN_OR_RETURN(auto other, EvaluateScheme(ctx, plain, o.samples, false));
      if (other.has_value() && other->total_us < cur.total_us) {
        notes.push_back("stof: the initial rule's GEMM chains were slower (" +
                        std::to_string(cur.total_us) + " us) than without (" +
                        std::to_string(other->total_us) + " us): started without");
        cur = *other;
      }
    }
  }
  return cur;
}

// Stage 1: fusion expansion, depth first: from `cur`, the first neighbouring scheme (one more
// fusion by the rules) that is faster becomes the current one, until none is.
Status StageFusion(TuneContext& ctx, SchemeEval& cur) {
  const OpGraph& g = ctx.Graph();
  const TuneOptions& o = ctx.Options();
  ctx.Stage("stage 1: fusion");
  std::set<std::string> seen{cur.scheme.Code()};
  bool moved = true;
  while (moved && !ctx.Stopped()) {
    moved = false;
    const auto t_rules = Clock::now();
    const std::vector<RuleMove> moves = NeighbourSchemes(cur.scheme, g);
    ctx.Charge(&TuneStats::rules_s, t_rules);
    for (const RuleMove& mv : moves) {
      if (!seen.insert(mv.scheme.Code()).second) continue;
      SchemeEval next;
      next.scheme = mv.scheme;
      bool complete = true;
      for (const Segment& s : mv.scheme.Segments()) {
        const int k = SegmentIndex(cur.scheme, s);
        if (k >= 0) {  // unchanged by the move: keep what it had
          next.choices.push_back(cur.choices[static_cast<size_t>(k)]);
          next.costs.push_back(cur.costs[static_cast<size_t>(k)]);
          next.total_us += cur.costs[static_cast<size_t>(k)].us;
          continue;
        }
        STOF_ASSIGN_OR_RETURN(auto pick, PickForSegment(ctx, s, o.samples, false));
        if (!pick.has_value()) {
          complete = false;
          break;
        }
        next.choices.push_back(pick->choice);
        next.costs.push_back(pick->cost);
        next.total_us += pick->cost.us;
      }
      if (!complete) {
        if (ctx.Stopped()) break;
        continue;  // every setting of a new segment failed: the move cannot be kept
      }
      if (next.total_us < cur.total_us) {
        cur = std::move(next);
        ctx.OfferBest(cur.total_us, cur.scheme);
        moved = true;
        break;  // depth first: continue from the new scheme
      }
    }
  }

  return Status::Ok();
}

// Stage 2: reward-based parameter sampling on the chosen scheme: each iteration spreads its
// samples over the segments by the gain each made in the last one (Allocate), and reports the
// gains (RewardEvent); two idle iterations in a row end it.
Status StageParameters(TuneContext& ctx, SchemeEval& cur) {
  const TuneOptions& o = ctx.Options();
  ctx.Stage("stage 2: parameters");
  const size_t nseg = cur.scheme.Segments().size();
  std::vector<std::vector<SegmentChoice>> ordered(nseg);
  std::vector<size_t> next_index(nseg);
  for (size_t i = 0; i < nseg; ++i) {
    STOF_ASSIGN_OR_RETURN(auto c, OrderedChoices(ctx, cur.scheme.Segments()[i]));
    ordered[i] = c;
    next_index[i] = std::min(c.size(), static_cast<size_t>(o.samples));
  }
  std::vector<double> gain(nseg, 0);
  int idle = 0;
  for (int64_t it = 0; it < o.stage2_iterations && !ctx.Stopped() && idle < 2; ++it) {
    const auto t_reward = Clock::now();
    std::vector<int64_t> left(nseg);
    for (size_t i = 0; i < nseg; ++i)
      left[i] = static_cast<int64_t>(ordered[i].size() - next_index[i]);
    const std::vector<int64_t> alloc = Allocate(o.stage2_per_iteration, left, gain, it == 0);
    ctx.Charge(&TuneStats::reward_s, t_reward);
    bool any = false;
    std::vector<double> new_gain(nseg, 0);
    for (size_t i = 0; i < nseg && !ctx.Stopped(); ++i) {
      const Segment& s = cur.scheme.Segments()[i];
      for (int64_t k = 0; k < alloc[i]; ++k) {
        const SegmentChoice& c = ordered[i][next_index[i]++];
        any = true;
        STOF_ASSIGN_OR_RETURN(auto cost, ctx.Cost(s, c));
        if (!cost.has_value()) break;
        if (cost->Ok() && cost->us < cur.costs[i].us) {
          const auto t_r = Clock::now();
          new_gain[i] += cur.costs[i].us - cost->us;
          cur.total_us -= cur.costs[i].us - cost->us;
          cur.costs[i] = *cost;
          cur.choices[i] = c;
          ctx.Charge(&TuneStats::reward_s, t_r);
        }
      }
    }
    if (!any) break;
    for (size_t i = 0; i < nseg; ++i) {
      RewardEvent e;
      e.iteration = it;
      e.segment_index = i;
      e.segment = cur.scheme.Segments()[i];
      e.samples = alloc[i];
      e.gain_us = new_gain[i];
      e.best_us = cur.costs[i].us;
      ctx.Reward(std::move(e));
    }
    double total_gain = 0;
    for (double x : new_gain) total_gain += x;
    idle = total_gain > 0 ? 0 : idle + 1;
    gain = new_gain;
    ctx.OfferBest(cur.total_us, cur.scheme);
  }
  return Status::Ok();
}

}  // namespace

Expected<TuneResult> TuneStof(TuneContext& ctx) {
  std::vector<std::string> notes;
  auto initial = InitialScheme(ctx, notes);
  if (!initial.IsOk()) return initial.ToStatus();
  SchemeEval cur = *initial;
  const SchemeEval start = cur;
  ctx.OfferBest(cur.total_us, cur.scheme);
  STOF_RETURN_IF_ERROR(StageFusion(ctx, cur));
  STOF_RETURN_IF_ERROR(StageParameters(ctx, cur));
  auto r = FinishResult(ctx, cur, start);
  if (r.IsOk()) r->notes.insert(r->notes.end(), notes.begin(), notes.end());
  return r;
}

}  // namespace stof::engine
