// GroupedBars and HistogramPlot (plots.h): bars on a shared y scale from zero, each with its
// value over it where that fits, a baseline drawn as outlines beside the current bars, and a
// tooltip for the hovered category or bin. On the scaffolding of plot_frame.h.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/studio/widgets/plot_frame.h"
#include "app/studio/widgets/plots.h"

namespace stof::app::plots {

using namespace detail;  // NOLINT: the scaffolding is this file's vocabulary

namespace {

bool IsBaseline(const BarGroup& g) { return g.name.rfind("baseline", 0) == 0; }

// Every bar's value, and room above the tallest for its value and tag on a fitted linear axis.
std::vector<double> BarScaleValues(const std::vector<BarGroup>& groups, const Axis& ya) {
  std::vector<double> values;
  bool tagged = false;
  for (const BarGroup& g : groups) {
    values.insert(values.end(), g.values.begin(), g.values.end());
    tagged = tagged || !g.tags.empty();
  }
  if (!ya.log && ya.min >= ya.max) {
    double top = 0;
    for (double v : values)
      if (std::isfinite(v)) top = std::max(top, v);
    if (top > 0) values.push_back(top * (tagged ? 1.3 : 1.15));
  }
  return values;
}

// A category's slot across the plot, and each group's bar in it.
struct BarSlots {
  float slot = 0, bar = 0, base_px = 0;
  int groups = 0;
};

// Group g's bar in category c, with its value over it where it fits the bar and its share of
// the gap between slots, and its tag above that.
void DrawBar(const Frame& f, const Scale& y, const BarSlots& s, const BarGroup& grp, int g, int c,
             const char* value_unit) {
  if (static_cast<size_t>(c) >= grp.values.size()) return;
  const double v = grp.values[static_cast<size_t>(c)];
  if (!y.Usable(v)) return;
  const float x0 = f.plot0.x + s.slot * c + s.slot * 0.1f;
  const float bx = x0 + s.bar * g, top = y.Px(v);
  const ImVec2 a(bx + (s.bar > 4 ? 1.0f : 0.0f), std::min(top, s.base_px)), b(bx + s.bar, std::max(top, s.base_px));
  if (IsBaseline(grp)) f.dl->AddRect(a, b, kBaselineColor, 0, 0, 1.5f);
  else f.dl->AddRectFilled(a, b, ColorOr(grp.color, g));
  float text_y = a.y;
  const std::string value = value_unit && *value_unit ? FormatSI(v, value_unit) : FormatSI(v);
  const ImVec2 vs = ImGui::CalcTextSize(value.c_str());
  if (vs.x <= s.bar + s.slot * 0.2f / s.groups) {
    text_y -= vs.y + 1;
    f.dl->AddText(ImVec2(bx + (s.bar - vs.x) * 0.5f, text_y), kText, value.c_str());
  }
  if (static_cast<size_t>(c) < grp.tags.size() && !grp.tags[static_cast<size_t>(c)].empty()) {
    const std::string tag = Fit(grp.tags[static_cast<size_t>(c)], s.bar + s.slot * 0.1f);
    const ImVec2 sz = ImGui::CalcTextSize(tag.c_str());
    f.dl->AddText(ImVec2(bx + (s.bar - sz.x) * 0.5f, text_y - sz.y - 1), kDim, tag.c_str());
  }
}

// The hovered category highlighted, and every group's value in it.
void BarsTooltip(const Frame& f, const std::vector<std::string>& categories, const std::vector<BarGroup>& groups,
                 const Axis& ya, float slot) {
  const int n = static_cast<int>(categories.size());
  const int c = std::clamp(static_cast<int>((f.mouse.x - f.plot0.x) / slot), 0, n - 1);
  f.dl->AddRect(ImVec2(f.plot0.x + slot * c, f.plot0.y), ImVec2(f.plot0.x + slot * (c + 1), f.plot1.y),
                IM_COL32(255, 255, 255, 40));
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(categories[static_cast<size_t>(c)].c_str());
  for (const BarGroup& g : groups) {
    const double v = static_cast<size_t>(c) < g.values.size() ? g.values[static_cast<size_t>(c)] : NAN;
    std::string tag = static_cast<size_t>(c) < g.tags.size() ? g.tags[static_cast<size_t>(c)] : "";
    ImGui::Text("%s: %s %s", g.name.c_str(), Finite(v) ? FormatSI(v).c_str() : "n/a", tag.c_str());
  }
  ImGui::TextDisabled("%s", ya.label.c_str());
  ImGui::EndTooltip();
}

bool ValidHistogram(const Histogram& h) {
  if (h.edges.size() < 2 || h.counts.size() + 1 != h.edges.size()) return false;
  for (double e : h.edges) if (!Finite(e)) return false;
  return true;
}

// One histogram's bars, each with its count over it where it fits. `split`: a baseline shares
// each bin, current on the left half, baseline (`right`, outlined) on the right.
void DrawHistogramBars(const Frame& f, const Scale& x, const Scale& y, const Histogram& h, bool split, bool right,
                       bool outline) {
  const ImU32 color = SeriesColor(0);
  for (size_t i = 0; i < h.counts.size(); ++i) {
    if (!Finite(h.counts[i]) || h.counts[i] <= 0) continue;
    float x0 = x.Px(h.edges[i]) + 1, x1 = x.Px(h.edges[i + 1]);
    if (split) {
      const float mid = (x0 + x1) * 0.5f;
      (right ? x0 : x1) = mid;
    }
    const ImVec2 a(x0, y.Px(h.counts[i])), b(std::max(x1, x0 + 1), y.Px(0));
    if (outline) {
      f.dl->AddRectFilled(a, b, IM_COL32(160, 160, 160, 70));
      f.dl->AddRect(a, b, kBaselineColor, 0, 0, 1.5f);
    } else {
      f.dl->AddRectFilled(a, b, color);
    }
    char count[16];
    std::snprintf(count, sizeof count, "%g", h.counts[i]);
    const ImVec2 t = ImGui::CalcTextSize(count);
    if (t.x <= b.x - a.x + 2 && a.y - t.y - 1 >= f.plot0.y)
      f.dl->AddText(ImVec2((a.x + b.x - t.x) * 0.5f, a.y - t.y - 1), outline ? kDim : kText, count);
  }
}

// Dashed vertical markers, their labels stacked so two close medians do not overwrite each other.
void DrawMarkers(const Frame& f, const Scale& x, const std::vector<Marker>& markers) {
  float label_y = f.plot0.y + 2;
  for (const Marker& m : markers) {
    if (!x.Usable(m.x)) continue;
    const float px = x.Px(m.x);
    const ImU32 c = m.color ? m.color : kText;
    for (float yy = f.plot0.y; yy < f.plot1.y; yy += 8)
      f.dl->AddLine(ImVec2(px, yy), ImVec2(px, std::min(yy + 4, f.plot1.y)), c, 1.5f);
    const ImVec2 sz = ImGui::CalcTextSize(m.label.c_str());
    const float lx = px + 4 + sz.x > f.plot1.x ? px - 4 - sz.x : px + 4;
    f.dl->AddText(ImVec2(lx, label_y), c, m.label.c_str());
    label_y += sz.y + 1;
  }
}

// The bin under the pointer: its range and each histogram's count.
void HistogramTooltip(const Frame& f, const Scale& x, const Histogram& current, const Histogram* baseline,
                      const Axis& xa) {
  const double v = x.Value(f.mouse.x);
  auto bin_of = [v](const Histogram& h) {
    for (size_t i = 0; i + 1 < h.edges.size(); ++i)
      if (v >= h.edges[i] && v < h.edges[i + 1]) return static_cast<int>(i);
    return -1;
  };
  const int b = bin_of(current), bb = baseline ? bin_of(*baseline) : -1;
  if (b < 0 && bb < 0) return;
  ImGui::BeginTooltip();
  const Histogram& h = b >= 0 ? current : *baseline;
  const int i = b >= 0 ? b : bb;
  ImGui::Text("%s: %s .. %s", xa.label.c_str(), FormatSI(h.edges[static_cast<size_t>(i)]).c_str(),
              FormatSI(h.edges[static_cast<size_t>(i) + 1]).c_str());
  if (b >= 0) ImGui::Text("%s: %g runs", current.name.empty() ? "current" : current.name.c_str(), current.counts[static_cast<size_t>(b)]);
  if (bb >= 0) ImGui::Text("%s: %g runs", baseline->name.empty() ? "baseline" : baseline->name.c_str(), baseline->counts[static_cast<size_t>(bb)]);
  ImGui::EndTooltip();
}

}  // namespace

void GroupedBars(const char* id, const std::vector<std::string>& categories,
                 const std::vector<BarGroup>& groups, const Axis& ya, float height,
                 const char* value_unit) {
  Frame f = BeginFrame(id, height);
  Scale y;
  if (categories.empty() || groups.empty() || !FitScale(ya, BarScaleValues(groups, ya), true, &y)) {
    DrawNoData(f, ya.label, "no data");
    return;
  }
  YAxis(&f, &y, ya.label);
  const int n = static_cast<int>(categories.size()), ng = static_cast<int>(groups.size());
  BarSlots s;
  s.slot = (f.plot1.x - f.plot0.x) / n;
  s.bar = std::max(1.0f, s.slot * 0.8f / ng);
  s.base_px = y.log ? f.plot1.y : y.Px(0);
  s.groups = ng;
  PushPlotClip(f);
  for (int c = 0; c < n; ++c)
    for (int g = 0; g < ng; ++g) DrawBar(f, y, s, groups[static_cast<size_t>(g)], g, c, value_unit);
  f.dl->PopClipRect();
  Border(f);
  // Category labels under their slot, cut to fit it.
  for (int c = 0; c < n; ++c) {
    const std::string label = Fit(categories[static_cast<size_t>(c)], s.slot - 4);
    const ImVec2 sz = ImGui::CalcTextSize(label.c_str());
    f.dl->AddText(ImVec2(f.plot0.x + s.slot * (c + 0.5f) - sz.x * 0.5f, f.plot1.y + 3), kText, label.c_str());
  }
  std::vector<LegendEntry> legend;
  for (int g = 0; g < ng; ++g) {
    const BarGroup& grp = groups[static_cast<size_t>(g)];
    legend.push_back({grp.name, IsBaseline(grp) ? kBaselineColor : ColorOr(grp.color, g), IsBaseline(grp)});
  }
  Legend(f, legend);
  if (f.InPlot()) BarsTooltip(f, categories, groups, ya, s.slot);
}

void HistogramPlot(const char* id, const Histogram& current, const Histogram* baseline,
                   const std::vector<Marker>& markers, const Axis& xa, float height) {
  Frame f = BeginFrame(id, height);
  const Histogram* base = baseline && ValidHistogram(*baseline) ? baseline : nullptr;
  if (!ValidHistogram(current)) {
    DrawNoData(f, "runs per bin", "no data");
    return;
  }
  std::vector<double> xs = current.edges, ys = current.counts;
  if (base) {
    xs.insert(xs.end(), base->edges.begin(), base->edges.end());
    ys.insert(ys.end(), base->counts.begin(), base->counts.end());
  }
  double top = 0;  // room above the tallest bar for its count
  for (double c : ys)
    if (Finite(c)) top = std::max(top, c);
  ys.push_back(top * 1.15);
  Scale x, y;
  Axis count_axis;
  if (!FitScale(xa, xs, false, &x) || !FitScale(count_axis, ys, true, &y)) {
    DrawNoData(f, "runs per bin", "no data");
    return;
  }
  YAxis(&f, &y, "runs per bin");
  XAxis(f, &x, xa.label);
  PushPlotClip(f);
  DrawHistogramBars(f, x, y, current, base != nullptr, false, false);
  if (base) DrawHistogramBars(f, x, y, *base, true, true, true);
  DrawMarkers(f, x, markers);
  f.dl->PopClipRect();
  Border(f);
  std::vector<LegendEntry> legend{{current.name, SeriesColor(0)}};
  if (base) legend.push_back({base->name, kBaselineColor, true});
  Legend(f, legend);
  if (f.InPlot()) HistogramTooltip(f, x, current, base, xa);
}

}  // namespace stof::app::plots
