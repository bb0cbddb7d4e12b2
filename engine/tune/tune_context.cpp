// TuneContext (tune_context.h).
#include "engine/tune/tune_context.h"

#include <algorithm>
#include <cmath>

#include "engine/tune/tune_cache.h"

namespace stof::engine {

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string ShapeKey(const OpGraph& g) {
  std::string s = "b";
  s += std::to_string(g.batch);
  s += " l";
  s += std::to_string(g.seq_len);
  s += ' ';
  s += DTypeName(g.dtype);
  return s;
}

}  // namespace

TuneContext::TuneContext(CostSource& source, const TuneOptions& options, TuneObserver* observer,
                         TuneCache* cache)
    : m_source(source),
      m_options(options),
      m_observer(observer),
      m_cache(cache),
      m_rng(options.seed),
      m_start(Clock::now()) {}

double TuneContext::Elapsed() const { return Since(m_start); }

void TuneContext::Charge(double TuneStats::*bucket, Clock::time_point t0) {
  m_stats.*bucket += Since(t0);
}

bool TuneContext::Cancelled() const {
  return m_options.cancel != nullptr && m_options.cancel->load();
}

bool TuneContext::Stopped() {
  if (!m_stop_reason.empty()) return true;
  if (Cancelled()) {
    m_stop_reason = "cancelled";
  } else if (m_options.budget_s > 0 && Elapsed() >= m_options.budget_s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "budget (%g s)", m_options.budget_s);
    m_stop_reason = buf;
  } else if (m_options.budget_candidates > 0 &&
             m_stats.candidates >= m_options.budget_candidates) {
    m_stop_reason = "budget (" + std::to_string(m_options.budget_candidates) + " candidates)";
  }
  return !m_stop_reason.empty();
}

Expected<std::vector<SegmentChoice>> TuneContext::Choices(const Segment& s) {
  const auto key = std::make_pair(s.first, s.last);
  auto it = m_choices.find(key);
  if (it != m_choices.end()) return it->second;
  const auto t0 = Clock::now();
  auto c = m_source.Choices(s);
  Charge(&TuneStats::measure_s, t0);  // asks the backend (and rebinds the layer)
  if (!c.IsOk()) return c.ToStatus();
  if (c->empty()) c->push_back(SegmentChoice{});
  m_choices[key] = *c;
  return *c;
}

Expected<std::optional<SegmentCost>> TuneContext::Cost(const Segment& s, const SegmentChoice& c,
                                                       bool force) {
  // The candidate's identity, computed once: the memo key and the cache file's key parts.
  auto t_rules = Clock::now();
  const TemplateKind kind = RunningTemplate(Graph(), s, c);
  const std::string signature = SegmentSignature(Graph(), s, m_source.UserMask());
  const std::string choice_text = ChoiceText(c, kind);
  const std::string key = signature + "#" + TemplateName(kind) + "#" + choice_text;
  Charge(&TuneStats::rules_s, t_rules);
  auto it = m_memo.find(key);
  if (it != m_memo.end()) return std::optional<SegmentCost>(it->second);
  if (Cancelled() || (!force && Stopped())) {
    Stopped();  // records the reason
    return std::optional<SegmentCost>();
  }

  SegmentCost cost;
  // Beside a measurement, the model's prediction (the studio plots one against the other);
  // a source that only predicts returns it from Cost itself.
  Expected<Prediction> pred = MakeError("not asked");
  if (m_source.Measures()) {
    const auto t_pred = Clock::now();
    pred = m_source.Predict(s, c);
    Charge(&TuneStats::predict_s, t_pred);
  }
  bool hit = false;
  std::string cache_key;
  if (m_cache != nullptr && m_source.Measures()) {
    const auto t0 = Clock::now();
    cache_key = TuneCacheKey(m_source.DeviceName(), ShapeKey(Graph()), signature,
                             TemplateName(kind), choice_text);
    if (auto cached = m_cache->Find(cache_key)) {
      hit = true;
      cost.us = cached->us;
      cost.error = cached->error;
      cost.measured = true;
      cost.cached = true;
    }
    Charge(&TuneStats::cache_s, t0);
  }
  if (!hit) {
    const auto t0 = Clock::now();
    auto fresh = m_source.Cost(s, c);
    Charge(&TuneStats::measure_s, t0);
    if (!fresh.IsOk()) return fresh.ToStatus();
    cost = *fresh;
    if (m_cache != nullptr && m_source.Measures()) {
      const auto t1 = Clock::now();
      CachedCost cc;
      cc.us = cost.us;
      cc.bytes = pred.IsOk() ? pred->bytes : -1;
      cc.error = cost.error;
      cc.method = m_source.Describe();
      (void)m_cache->Put(cache_key, cc);  // a full disk costs a re-measurement later, no more
      Charge(&TuneStats::cache_s, t1);
    }
  }
  if (pred.IsOk()) {
    cost.predicted_us = pred->us;
    cost.bytes = pred->bytes;
  }
  if (!m_source.Measures()) cost.measured = false;
  ++m_stats.candidates;
  if (hit) ++m_stats.cache_hits;
  else ++m_stats.measured;
  if (!cost.Ok()) {
    ++m_stats.failed;
    m_last_failure = SegmentLabel(s) + " " + (kind == TemplateKind::kNone ? "op by op" : TemplateName(kind)) +
                     " (" + choice_text + "): " + cost.error;
    if (hit)
      m_last_failure += " (a failure kept in the cache file " + m_cache->Path() +
                        "; --no-cache measures again)";
  }
  m_memo[key] = cost;
  if (m_observer != nullptr) {
    CandidateEvent e;
    e.segment = s;
    e.tmpl = TemplateName(kind);
    e.choice = choice_text;
    e.params = c;
    e.cost = cost;
    e.elapsed_s = Elapsed();
    e.index = m_stats.candidates;
    const TuneProgress p = Progress();
    m_observer->OnCandidate(e, p);
    m_observer->OnProgress(p);
  }
  return std::optional<SegmentCost>(cost);
}

Expected<std::optional<TuneContext::Best>> TuneContext::BestOf(
    const Segment& s, const std::vector<SegmentChoice>& choices, bool force_first) {
  std::optional<Best> best;
  for (size_t i = 0; i < choices.size(); ++i) {
    STOF_ASSIGN_OR_RETURN(auto c, Cost(s, choices[i], force_first && i == 0));
    if (!c.has_value() || !c->Ok()) continue;
    if (!best || c->us < best->cost.us) best = Best{i, *c};
  }
  return best;
}

void TuneContext::Stage(const std::string& name) {
  m_stage = name;
  if (m_observer != nullptr) m_observer->OnStage(Progress());
}

void TuneContext::OfferBest(double total_us, const FusionScheme& scheme) {
  if (m_best_us > 0 && total_us >= m_best_us) return;
  m_best_us = total_us;
  if (m_observer != nullptr) {
    BestEvent e{total_us, scheme.Code(), Elapsed(), m_stats.candidates};
    m_observer->OnBest(e, Progress());
  }
}

void TuneContext::Reward(RewardEvent e) {
  if (m_observer == nullptr) return;
  const TuneProgress p = Progress();
  e.elapsed_s = p.elapsed_s;
  m_observer->OnReward(e, p);
}

TuneProgress TuneContext::Progress() const {
  TuneProgress p;
  p.method = TuneMethodName(m_options.method);
  p.stage = m_stage;
  p.candidates = m_stats.candidates;
  p.measured = m_stats.measured;
  p.cache_hits = m_stats.cache_hits;
  p.best_us = m_best_us;
  p.elapsed_s = Elapsed();
  std::vector<double> fractions;
  if (m_options.budget_s > 0) fractions.push_back(p.elapsed_s / m_options.budget_s);
  if (m_options.budget_candidates > 0)
    fractions.push_back(static_cast<double>(p.candidates) /
                        static_cast<double>(m_options.budget_candidates));
  if (m_planned > 0)
    fractions.push_back(static_cast<double>(p.candidates) / static_cast<double>(m_planned));
  if (!fractions.empty()) {
    p.fraction = std::min(1.0, *std::max_element(fractions.begin(), fractions.end()));
    if (p.fraction > 0) p.remaining_s = p.elapsed_s * (1 - p.fraction) / p.fraction;
  }
  if (m_options.budget_s > 0)
    p.remaining_s = p.remaining_s < 0 ? m_options.budget_s - p.elapsed_s
                                      : std::min(p.remaining_s, m_options.budget_s - p.elapsed_s);
  if (p.remaining_s < 0 && p.fraction >= 0) p.remaining_s = 0;
  return p;
}

}  // namespace stof::engine
