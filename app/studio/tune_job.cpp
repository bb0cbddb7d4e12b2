// The tuning run (tune_job.h): the observer that feeds TuneLive and the job body.
#include "app/studio/tune_job.h"

#include <cstdio>

#include "app/common/run_choice.h"
#include "engine/tune/tune_cache.h"

namespace stof::app {

namespace {

// The tuner's events into the live feed (on the worker thread).
class LiveObserver : public engine::TuneObserver {
 public:
  LiveObserver(TuneLiveFeed& live, std::string method, JobContext& ctx)
      : m_live(live), m_method(std::move(method)), m_ctx(ctx) {
    m_live.Update([&](TuneLive& l) {
      l.traces.push_back({m_method, {}, {}});
      m_trace = l.traces.size() - 1;
    });
  }
  void OnStage(const engine::TuneProgress& p) override { Progress(p); }
  void OnProgress(const engine::TuneProgress& p) override { Progress(p); }
  void OnCandidate(const engine::CandidateEvent& e, const engine::TuneProgress& p) override {
    if (!e.cost.Ok()) return;
    m_live.Update([&](TuneLive& l) {
      l.points.push_back({m_method, engine::SegmentLabel(e.segment), e.tmpl, e.choice, e.cost.predicted_us,
                          e.cost.us, e.cost.measured});
      l.progress = p;
    });
  }
  void OnBest(const engine::BestEvent& e, const engine::TuneProgress&) override {
    m_live.Update([&](TuneLive& l) {
      TuneLive::Trace& t = l.traces[m_trace];
      t.t_s.push_back(e.elapsed_s);
      t.best_us.push_back(e.total_us);
    });
  }
  void OnReward(const engine::RewardEvent& e, const engine::TuneProgress&) override {
    m_live.Update([&](TuneLive& l) {
      l.rewards.push_back({engine::SegmentLabel(e.segment), e.iteration, e.samples, e.gain_us, e.best_us});
    });
  }

 private:
  void Progress(const engine::TuneProgress& p) {
    m_live.Update([&](TuneLive& l) { l.progress = p; });
    const std::string text = TuneProgressText(p);
    m_ctx.progress(text, p.fraction);
  }
  TuneLiveFeed& m_live;
  std::string m_method;
  JobContext& m_ctx;
  size_t m_trace = 0;
};

}  // namespace

TuneLive TuneLiveFeed::Snapshot() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_live;
}

uint64_t TuneLiveFeed::Version() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_live.version;
}

void TuneLiveFeed::Reset() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_live = TuneLive{};
}

std::optional<double> TuneSpeedup(const engine::TuneSessionResult& s) {
  if (!s.default_layer_us || !(s.result.total_us > 0)) return std::nullopt;
  return *s.default_layer_us / s.result.total_us;
}

std::string TuneProgressText(const engine::TuneProgress& p) {
  char best[40] = "-";
  if (p.best_us > 0) std::snprintf(best, sizeof best, "%.1f us", p.best_us);
  char left[40] = "";
  if (p.remaining_s >= 0) std::snprintf(left, sizeof left, ", ~%.0f s left", p.remaining_s);
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s %s: %lld candidates, best %s, %.1f s%s", p.method.c_str(),
                p.stage.c_str(), static_cast<long long>(p.candidates), best, p.elapsed_s, left);
  return buf;
}

std::vector<TuneMethodRow> AllTuneMethodRows() {
  std::vector<TuneMethodRow> rows;
  for (engine::TuneMethod m : engine::AllTuneMethods()) rows.push_back({m, m == engine::TuneMethod::kStof});
  return rows;
}

TuneJobResult RunTuneJob(const TuneJobRequest& in, TuneLiveFeed& live, JobContext& ctx) {
  TuneJobResult out;
  std::optional<engine::TuneCache> cache;
  if (in.use_cache && ctx.backend) {
    auto c = engine::TuneCache::Open(engine::DefaultTuneCachePath());
    if (c.IsOk()) cache = std::move(*c);
  }
  for (engine::TuneMethod m : in.methods) {
    if (ctx.cancel->load()) break;
    engine::TuneSessionRequest rq;
    rq.graph = in.graph;
    rq.mask = in.mask.get();
    rq.spec = in.spec;
    rq.backend = ctx.backend;
    rq.gpu = ctx.backend != nullptr;
    rq.device = in.device;
    rq.run_chooser = MakeMhaRunChooser();  // predictions start from what the kernels run
    rq.options = in.options;
    rq.options.method = m;
    rq.options.cancel = ctx.cancel;
    rq.cache = cache ? &*cache : nullptr;
    rq.created_by = "stof-studio";
    LiveObserver observer(live, engine::TuneMethodName(m), ctx);
    auto s = engine::RunTuneSession(rq, &observer);
    if (!s.IsOk()) {
      out.error = std::string(engine::TuneMethodName(m)) + ": " + s.Message();
      break;
    }
    out.results.push_back({std::move(*s)});
  }
  return out;
}

}  // namespace stof::app
