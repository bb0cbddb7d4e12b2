// Shared pieces of the search methods (tune_search.h) and Tune (tuner.h).
#include "engine/tune/tune_search.h"

#include <algorithm>
#include <cstdio>

#include "engine/fusion/default_scheme.h"
#include "engine/tune/tuner.h"

namespace stof::engine {

const char* TuneMethodName(TuneMethod m) {
  switch (m) {
    case TuneMethod::kGtco: return "gtco";
    case TuneMethod::kMcfuser: return "mcfuser";
    case TuneMethod::kExhaustive: return "exhaustive";
    default: return "stof";
  }
}

const std::vector<TuneMethod>& AllTuneMethods() {
  static const std::vector<TuneMethod> kAll = {TuneMethod::kStof, TuneMethod::kGtco,
                                               TuneMethod::kMcfuser, TuneMethod::kExhaustive};
  return kAll;
}

Expected<TuneMethod> ParseTuneMethod(const std::string& s) {
  for (TuneMethod m : AllTuneMethods())
    if (s == TuneMethodName(m)) return m;
  return MakeError("method: expected one of stof, gtco, mcfuser, exhaustive, got '" + s + "'");
}

Status TuneOptions::Validate(const std::string& what) const {
  const auto bad = [&](const std::string& field, const std::string& rule, double got) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", got);
    return MakeError(what + ": " + field + ": " + rule + ", got " + buf);
  };
  if (!(budget_s >= 0) || budget_s > 1e7) return bad("budget_s", "expected 0..1e7 seconds", budget_s);
  if (budget_candidates < 0) return bad("budget_candidates", "expected >= 0", static_cast<double>(budget_candidates));
  if (samples < 1 || samples > kMaxSamples) return bad("samples", "expected 1..1e6", static_cast<double>(samples));
  if (stage2_per_iteration < 1) return bad("stage2_per_iteration", "expected >= 1", static_cast<double>(stage2_per_iteration));
  if (stage2_iterations < 0) return bad("stage2_iterations", "expected >= 0", static_cast<double>(stage2_iterations));
  if (max_segment_ops < 1) return bad("max_segment_ops", "expected >= 1", static_cast<double>(max_segment_ops));
  if (exhaustive_max_schemes < 1) return bad("exhaustive_max_schemes", "expected >= 1", static_cast<double>(exhaustive_max_schemes));
  if (small_tokens < 0) return bad("small_tokens", "expected >= 0", static_cast<double>(small_tokens));
  return Status::Ok();
}

double TuneStats::OverheadShare() const {
  // total_s = measure_s + the five below, by construction of search_s in Tune.
  return total_s > 0 ? (rules_s + reward_s + search_s + cache_s + predict_s) / total_s : 0;
}

Expected<std::vector<SegmentChoice>> OrderedChoices(TuneContext& ctx, const Segment& s) {
  auto choices = ctx.Choices(s);
  if (!choices.IsOk()) return choices;
  const bool attention = RunningTemplate(ctx.Graph(), s, SegmentChoice{}) == TemplateKind::kSparseMha;
  std::vector<SegmentChoice> out = *choices;
  if (!attention && out.size() > 2) {
    // Fisher-Yates on everything after the default, from a generator of its own so the order
    // does not depend on what the search evaluated before.
    SplitMix64 rng(ctx.Options().seed ^ (static_cast<uint64_t>(s.first) * 0x9e3779b97f4a7c15ull) ^
                   (static_cast<uint64_t>(s.last) << 32));
    for (size_t i = out.size() - 1; i > 1; --i) {
      const size_t j = 1 + static_cast<size_t>(rng.Below(i));  // j in [1, i]
      std::swap(out[i], out[j]);
    }
  }
  return out;
}

Expected<std::optional<SegmentPick>> PickForSegment(TuneContext& ctx, const Segment& s,
                                                    int64_t samples, bool force) {
  STOF_ASSIGN_OR_RETURN(auto ordered, OrderedChoices(ctx, s));
  const size_t n = std::min(ordered.size(), static_cast<size_t>(std::max<int64_t>(1, samples)));
  std::vector<SegmentChoice> first(ordered.begin(), ordered.begin() + static_cast<long>(n));
  STOF_ASSIGN_OR_RETURN(auto best, ctx.BestOf(s, first, force));
  if (!best.has_value()) return std::optional<SegmentPick>();
  return std::optional<SegmentPick>(SegmentPick{first[best->index], best->cost});
}

Expected<std::optional<SchemeEval>> EvaluateScheme(TuneContext& ctx, const FusionScheme& scheme,
                                                   int64_t samples, bool force) {
  SchemeEval e;
  e.scheme = scheme;
  for (const Segment& s : scheme.Segments()) {
    STOF_ASSIGN_OR_RETURN(auto pick, PickForSegment(ctx, s, samples, force));
    if (!pick.has_value()) return std::optional<SchemeEval>();
    e.choices.push_back(pick->choice);
    e.costs.push_back(pick->cost);
    e.total_us += pick->cost.us;
  }
  return std::optional<SchemeEval>(std::move(e));
}

Status NoInitialScheme(const TuneContext& ctx) {
  if (ctx.Cancelled()) return MakeError("tune: cancelled before the first scheme was measured");
  if (!ctx.LastFailure().empty())
    return MakeError("tune: the initial scheme does not run: no setting of segment " +
                     ctx.LastFailure());
  return MakeError("tune: the budget ran out before the first scheme was measured");
}

std::vector<Segment> CandidateSegments(const OpGraph& g, int64_t max_ops) {
  std::vector<Segment> out;
  for (int j = 1; j <= g.Size(); ++j)
    for (int i = j; i >= 1 && j - i + 1 <= max_ops; --i) {
      const Segment s{i, j};
      if (CiCount(g, s) > kMaxCiPerSegment) break;  // longer ones only add CI ops
      out.push_back(s);
    }
  return out;
}

Expected<TuneResult> FinishResult(TuneContext& ctx, const SchemeEval& eval,
                                  const SchemeEval& initial) {
  TuneResult r;
  r.method = ctx.Options().method;
  // Codes are written starting with 1, as in the paper ("10000011100011" for BERT); a code
  // and its complement are the same segments.
  const auto normal = [&](const FusionScheme& s) {
    auto n = FusionScheme::FromSegments(s.Segments(), ctx.Graph(), '1');
    return n.IsOk() ? *n : s;
  };
  r.scheme = normal(eval.scheme);
  r.choices = eval.choices;
  r.total_us = eval.total_us;
  r.measured = ctx.Source().Measures();
  r.initial_scheme = normal(initial.scheme);
  r.initial_us = initial.total_us;
  for (size_t i = 0; i < eval.scheme.Segments().size(); ++i) {
    const Segment& s = eval.scheme.Segments()[i];
    SegmentResult sr;
    sr.segment = s;
    const TemplateKind kind = RunningTemplate(ctx.Graph(), s, eval.choices[i]);
    sr.tmpl = TemplateName(kind);
    sr.choice = eval.choices[i];
    sr.choice_text = ChoiceText(eval.choices[i], kind);
    sr.cost = eval.costs[i];
    STOF_ASSIGN_OR_RETURN(auto def, OrderedChoices(ctx, s));
    STOF_ASSIGN_OR_RETURN(auto dc, ctx.Cost(s, def.front()));
    if (dc.has_value()) sr.default_cost = *dc;
    r.segments.push_back(std::move(sr));
  }
  r.stopped_by = ctx.StopReason().empty() ? "converged" : ctx.StopReason();
  r.cancelled = ctx.Cancelled();
  return r;
}

Expected<TuneResult> Tune(CostSource& source, const TuneOptions& options, TuneObserver* observer,
                          TuneCache* cache) {
  STOF_RETURN_IF_ERROR(options.Validate());
  if (source.Graph().Size() == 0) return MakeError("tune: graph: has no ops");
  TuneContext ctx(source, options, observer, cache);
  Expected<TuneResult> r = MakeError("tune: unknown method");
  switch (options.method) {
    case TuneMethod::kStof: r = TuneStof(ctx); break;
    case TuneMethod::kGtco: r = TuneGtco(ctx); break;
    case TuneMethod::kMcfuser: r = TuneMcfuser(ctx); break;
    case TuneMethod::kExhaustive: r = TuneExhaustive(ctx); break;
  }
  if (!r.IsOk()) return r;
  TuneStats& st = ctx.Stats();
  st.total_s = ctx.Elapsed();
  st.search_s = std::max(0.0, st.total_s - st.measure_s - st.predict_s - st.cache_s -
                                  st.rules_s - st.reward_s);
  r->stats = st;
  ctx.Stage("done");
  return r;
}

}  // namespace stof::engine
