// BuildTunePlots and TunePlotsJson (tune_plots.h).
#include "app/studio/tune_plots.h"

#include <cstdio>
#include <map>

namespace stof::app {

namespace {

std::string PointTip(const TuneLive::Point& pt) {
  std::string tip = pt.method + ": " + pt.segment + ' ' + (pt.tmpl.empty() ? "op by op" : pt.tmpl);
  if (!pt.choice.empty()) tip += " (" + pt.choice + ')';
  char figures[96];
  if (pt.measured)
    std::snprintf(figures, sizeof figures, "\npredicted %.2f us, measured %.2f us", pt.predicted_us, pt.us);
  else
    std::snprintf(figures, sizeof figures, "\npredicted %.2f us (not measured)", pt.predicted_us);
  return tip + figures;
}

// One series per method; only measured points when any was measured.
void Candidates(TunePlots& p, const TuneLive& live) {
  for (const TuneLive::Point& pt : live.points) p.measured = p.measured || pt.measured;
  std::map<std::string, size_t> by_method;
  double index = 0;
  for (const TuneLive::Point& pt : live.points) {
    index += 1;
    if (p.measured && !pt.measured) continue;
    auto [it, fresh] = by_method.emplace(pt.method, p.candidates.size());
    if (fresh) p.candidates.push_back(plots::Series{pt.method, {}, {}});
    plots::Series& s = p.candidates[it->second];
    s.x.push_back(p.measured ? pt.predicted_us : index);
    s.y.push_back(p.measured ? pt.us : pt.predicted_us);
    s.tips.push_back(PointTip(pt));
  }
  if (p.measured) {
    p.candidates_title = "Each measured candidate: predicted vs measured";
    p.candidates_x = plots::Axis{"predicted (us)", true};
    p.candidates_y = plots::Axis{"measured (us)", true};
  } else {
    p.candidates_title = "Each candidate's prediction (nothing measured)";
    p.candidates_x = plots::Axis{"candidate, in evaluation order"};
    p.candidates_y = plots::Axis{"predicted segment time (us)", true};
  }
}

}  // namespace

TunePlots BuildTunePlots(const TuneLive& live) {
  TunePlots p;
  p.live = live;
  p.version = live.version;
  for (const TuneLive::Trace& t : live.traces) {
    plots::Series s;
    s.name = t.method;
    s.x = t.t_s;
    s.y = t.best_us;
    s.step = true;
    s.points = true;
    p.best.push_back(std::move(s));
  }
  Candidates(p, live);
  std::map<std::string, size_t> by_segment;
  for (const TuneLive::Reward& r : live.rewards) {
    auto [it, fresh] = by_segment.emplace(r.segment, p.rewards.size());
    if (fresh) {
      plots::Series s;
      s.name = r.segment;
      s.points = true;
      p.rewards.push_back(std::move(s));
    }
    plots::Series& s = p.rewards[it->second];
    s.x.push_back(static_cast<double>(r.iteration + 1));
    s.y.push_back(r.gain_us);
    char tip[96];
    std::snprintf(tip, sizeof tip, "iteration %lld: %lld settings, saved %.2f us, best %.1f us",
                  static_cast<long long>(r.iteration + 1), static_cast<long long>(r.samples), r.gain_us,
                  r.best_us);
    s.tips.push_back(tip);
  }
  return p;
}

nlohmann::json TunePlotsJson(const TunePlots& p) {
  nlohmann::json series = nlohmann::json::array();
  for (const plots::Series& s : p.candidates) series.push_back({{"name", s.name}, {"points", s.x.size()}});
  return {{"measured", p.measured},
          {"title", p.candidates_title},
          {"x_axis", p.candidates_x.label},
          {"y_axis", p.candidates_y.label},
          {"series", series},
          {"measured_series", p.measured ? p.candidates.size() : 0}};
}

}  // namespace stof::app
