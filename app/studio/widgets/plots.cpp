// The studio's plots (plots.h), drawn with ImDrawList on the scaffolding of plot_frame.h.
// Each plot reserves its rectangle with an InvisibleButton (so it scrolls and takes the mouse
// like any item), lays out margins from its tick labels, draws axes, clips its data to the
// plot rectangle, and shows a tooltip for the hovered item. The y axis label sits above the
// plot (ImGui 1.86 cannot rotate text) and the legend on the same line, right-aligned, so
// neither covers data. O(points) per frame.
#include "app/studio/widgets/plots.h"

#include <imgui.h>
#include <imgui_internal.h>  // SetItemUsingMouseWheel: the timeline zooms instead of scrolling

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "app/studio/widgets/plot_frame.h"

namespace stof::app::plots {

using namespace detail;  // NOLINT: the scaffolding is this file's vocabulary

namespace {

// Shared by the line and scatter plots: fit, axes, then `draw` per series, then the tooltip of
// the point nearest the pointer.
void PointPlot(const char* id, const std::vector<Series>& series, const Axis& xa, const Axis& ya,
               float height, const std::function<void(const Frame&, const Scale&, const Scale&)>& extra,
               const std::function<void(const Frame&, const Series&, ImU32, const Scale&, const Scale&)>& draw) {
  Frame f = BeginFrame(id, height);
  std::vector<double> xs, ys;
  Scale x, y;
  x.log = xa.log;
  y.log = ya.log;
  for (const Series& s : series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (x.Usable(s.x[i]) && y.Usable(s.y[i])) {
        xs.push_back(s.x[i]);
        ys.push_back(s.y[i]);
      }
  if (!FitScale(xa, xs, false, &x) || !FitScale(ya, ys, false, &y)) {
    DrawNoData(f, ya.label, "no data");
    return;
  }
  YAxis(&f, &y, ya.label);
  XAxis(f, &x, xa.label);
  PushPlotClip(f);
  if (extra) extra(f, x, y);
  std::vector<LegendEntry> legend;
  float best = kPointPick * kPointPick;
  const Series* hit = nullptr;
  size_t hit_i = 0;
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const ImU32 c = ColorOr(s.color, static_cast<int>(k));
    legend.push_back({s.name, c});
    draw(f, s, c, x, y);
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!x.Usable(s.x[i]) || !y.Usable(s.y[i])) continue;
      const float dx = x.Px(s.x[i]) - f.mouse.x, dy = y.Px(s.y[i]) - f.mouse.y;
      if (f.InPlot() && dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        hit = &s;
        hit_i = i;
      }
    }
  }
  if (hit) f.dl->AddCircle(ImVec2(x.Px(hit->x[hit_i]), y.Px(hit->y[hit_i])), 6, kText, 0, 1.5f);
  f.dl->PopClipRect();
  Border(f);
  Legend(f, legend);
  if (hit) {
    ImGui::BeginTooltip();
    if (!hit->name.empty()) ImGui::TextUnformatted(hit->name.c_str());
    ImGui::Text("%s: %s", xa.label.c_str(), FormatSI(hit->x[hit_i]).c_str());
    ImGui::Text("%s: %s", ya.label.c_str(), FormatSI(hit->y[hit_i]).c_str());
    if (hit_i < hit->tips.size() && !hit->tips[hit_i].empty()) ImGui::TextUnformatted(hit->tips[hit_i].c_str());
    ImGui::EndTooltip();
  }
}

}  // namespace

void LinePlot(const char* id, const std::vector<Series>& series, const Axis& x, const Axis& y,
              float height) {
  PointPlot(id, series, x, y, height, nullptr,
            [](const Frame& f, const Series& s, ImU32 c, const Scale& xs, const Scale& ys) {
              ImVec2 prev;
              bool have = false;
              for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
                if (!xs.Usable(s.x[i]) || !ys.Usable(s.y[i])) continue;  // a gap, not a crash
                const ImVec2 p(xs.Px(s.x[i]), ys.Px(s.y[i]));
                if (have && s.step) {
                  f.dl->AddLine(prev, ImVec2(p.x, prev.y), c, 2);
                  f.dl->AddLine(ImVec2(p.x, prev.y), p, c, 2);
                } else if (have) {
                  f.dl->AddLine(prev, p, c, 2);
                }
                if (s.points) f.dl->AddCircleFilled(p, 2.5f, c);
                prev = p;
                have = true;
              }
            });
}

void ScatterPlot(const char* id, const std::vector<Series>& series, const Axis& x, const Axis& y,
                 float height, bool diagonal) {
  auto diag = [diagonal](const Frame& f, const Scale& xs, const Scale& ys) {
    if (!diagonal) return;
    // y = x over the visible x range, in small steps so log/linear mixes still draw right.
    const double a = xs.Value(xs.p0), b = xs.Value(xs.p1);
    ImVec2 prev;
    for (int i = 0; i <= 32; ++i) {
      const double v = xs.log ? a * std::pow(b / a, i / 32.0) : a + (b - a) * i / 32.0;
      if (!ys.Usable(v)) continue;
      const ImVec2 p(xs.Px(v), ys.Px(v));
      if (i > 0) f.dl->AddLine(prev, p, kDim, 1);
      prev = p;
    }
  };
  PointPlot(id, series, x, y, height, diag,
            [](const Frame& f, const Series& s, ImU32 c, const Scale& xs, const Scale& ys) {
              for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
                if (xs.Usable(s.x[i]) && ys.Usable(s.y[i]))
                  f.dl->AddCircleFilled(ImVec2(xs.Px(s.x[i]), ys.Px(s.y[i])), 3, c);
            });
}

void GroupedBars(const char* id, const std::vector<std::string>& categories,
                 const std::vector<BarGroup>& groups, const Axis& ya, float height,
                 const char* value_unit) {
  Frame f = BeginFrame(id, height);
  std::vector<double> values;
  bool tagged = false;
  for (const BarGroup& g : groups) {
    values.insert(values.end(), g.values.begin(), g.values.end());
    tagged = tagged || !g.tags.empty();
  }
  if (!ya.log && ya.min >= ya.max) {  // room above the tallest bar for its value and tag
    double top = 0;
    for (double v : values)
      if (std::isfinite(v)) top = std::max(top, v);
    if (top > 0) values.push_back(top * (tagged ? 1.3 : 1.15));
  }
  Scale y;
  if (categories.empty() || groups.empty() || !FitScale(ya, values, true, &y)) {
    DrawNoData(f, ya.label, "no data");
    return;
  }
  YAxis(&f, &y, ya.label);
  const int n = static_cast<int>(categories.size()), ng = static_cast<int>(groups.size());
  const float slot = (f.plot1.x - f.plot0.x) / n;
  const float bar = std::max(1.0f, slot * 0.8f / ng);
  const float base_px = y.log ? f.plot1.y : y.Px(0);
  auto is_baseline = [](const BarGroup& g) { return g.name.rfind("baseline", 0) == 0; };
  PushPlotClip(f);
  for (int c = 0; c < n; ++c) {
    const float x0 = f.plot0.x + slot * c + slot * 0.1f;
    for (int g = 0; g < ng; ++g) {
      const BarGroup& grp = groups[static_cast<size_t>(g)];
      if (static_cast<size_t>(c) >= grp.values.size()) continue;
      const double v = grp.values[static_cast<size_t>(c)];
      if (!y.Usable(v)) continue;
      const float bx = x0 + bar * g, top = y.Px(v);
      const ImVec2 a(bx + (bar > 4 ? 1.0f : 0.0f), std::min(top, base_px)), b(bx + bar, std::max(top, base_px));
      if (is_baseline(grp)) f.dl->AddRect(a, b, kBaselineColor, 0, 0, 1.5f);
      else f.dl->AddRectFilled(a, b, ColorOr(grp.color, g));
      // The value over the bar, where it fits the bar and its share of the gap between slots.
      float text_y = a.y;
      const std::string value = value_unit && *value_unit ? FormatSI(v, value_unit) : FormatSI(v);
      const ImVec2 vs = ImGui::CalcTextSize(value.c_str());
      if (vs.x <= bar + slot * 0.2f / ng) {
        text_y -= vs.y + 1;
        f.dl->AddText(ImVec2(bx + (bar - vs.x) * 0.5f, text_y), kText, value.c_str());
      }
      if (static_cast<size_t>(c) < grp.tags.size() && !grp.tags[static_cast<size_t>(c)].empty()) {
        const std::string tag = Fit(grp.tags[static_cast<size_t>(c)], bar + slot * 0.1f);
        const ImVec2 sz = ImGui::CalcTextSize(tag.c_str());
        f.dl->AddText(ImVec2(bx + (bar - sz.x) * 0.5f, text_y - sz.y - 1), kDim, tag.c_str());
      }
    }
  }
  f.dl->PopClipRect();
  Border(f);
  // Category labels under their slot, cut to fit it.
  for (int c = 0; c < n; ++c) {
    const std::string s = Fit(categories[static_cast<size_t>(c)], slot - 4);
    const ImVec2 sz = ImGui::CalcTextSize(s.c_str());
    f.dl->AddText(ImVec2(f.plot0.x + slot * (c + 0.5f) - sz.x * 0.5f, f.plot1.y + 3), kText, s.c_str());
  }
  std::vector<LegendEntry> legend;
  for (int g = 0; g < ng; ++g) {
    const BarGroup& grp = groups[static_cast<size_t>(g)];
    legend.push_back({grp.name, is_baseline(grp) ? kBaselineColor : ColorOr(grp.color, g), is_baseline(grp)});
  }
  Legend(f, legend);
  if (f.InPlot()) {
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
}

void HistogramPlot(const char* id, const Histogram& current, const Histogram* baseline,
                   const std::vector<Marker>& markers, const Axis& xa, float height) {
  Frame f = BeginFrame(id, height);
  auto valid = [](const Histogram& h) {
    if (h.edges.size() < 2 || h.counts.size() + 1 != h.edges.size()) return false;
    for (double e : h.edges) if (!Finite(e)) return false;
    return true;
  };
  const bool have_base = baseline && valid(*baseline);
  if (!valid(current)) {
    DrawNoData(f, "runs per bin", "no data");
    return;
  }
  std::vector<double> xs = current.edges, ys = current.counts;
  if (have_base) {
    xs.insert(xs.end(), baseline->edges.begin(), baseline->edges.end());
    ys.insert(ys.end(), baseline->counts.begin(), baseline->counts.end());
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
  const ImU32 color = SeriesColor(0);
  // With a baseline each bin holds two bars: current on the left half, baseline on the right.
  auto bars = [&](const Histogram& h, bool right, bool outline) {
    for (size_t i = 0; i < h.counts.size(); ++i) {
      if (!Finite(h.counts[i]) || h.counts[i] <= 0) continue;
      float x0 = x.Px(h.edges[i]) + 1, x1 = x.Px(h.edges[i + 1]);
      if (have_base) {
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
      char count[16];  // the bar's value, over it, where it fits
      std::snprintf(count, sizeof count, "%g", h.counts[i]);
      const ImVec2 t = ImGui::CalcTextSize(count);
      if (t.x <= b.x - a.x + 2 && a.y - t.y - 1 >= f.plot0.y)
        f.dl->AddText(ImVec2((a.x + b.x - t.x) * 0.5f, a.y - t.y - 1), outline ? kDim : kText, count);
    }
  };
  bars(current, false, false);
  if (have_base) bars(*baseline, true, true);
  float label_y = f.plot0.y + 2;
  for (size_t m = 0; m < markers.size(); ++m) {
    if (!x.Usable(markers[m].x)) continue;
    const float px = x.Px(markers[m].x);
    const ImU32 c = markers[m].color ? markers[m].color : kText;
    for (float yy = f.plot0.y; yy < f.plot1.y; yy += 8)  // dashed
      f.dl->AddLine(ImVec2(px, yy), ImVec2(px, std::min(yy + 4, f.plot1.y)), c, 1.5f);
    const ImVec2 sz = ImGui::CalcTextSize(markers[m].label.c_str());
    const float lx = px + 4 + sz.x > f.plot1.x ? px - 4 - sz.x : px + 4;
    f.dl->AddText(ImVec2(lx, label_y), c, markers[m].label.c_str());
    label_y += sz.y + 1;  // stacked so two close medians do not overwrite each other
  }
  f.dl->PopClipRect();
  Border(f);
  std::vector<LegendEntry> legend{{current.name, color}};
  if (have_base) legend.push_back({baseline->name, kBaselineColor, true});
  Legend(f, legend);
  if (f.InPlot()) {
    const double v = x.Value(f.mouse.x);
    auto bin_of = [v](const Histogram& h) {
      for (size_t i = 0; i + 1 < h.edges.size(); ++i)
        if (v >= h.edges[i] && v < h.edges[i + 1]) return static_cast<int>(i);
      return -1;
    };
    const int b = bin_of(current), bb = have_base ? bin_of(*baseline) : -1;
    if (b >= 0 || bb >= 0) {
      ImGui::BeginTooltip();
      const Histogram& h = b >= 0 ? current : *baseline;
      const int i = b >= 0 ? b : bb;
      ImGui::Text("%s: %s .. %s", xa.label.c_str(), FormatSI(h.edges[static_cast<size_t>(i)]).c_str(),
                  FormatSI(h.edges[static_cast<size_t>(i) + 1]).c_str());
      if (b >= 0) ImGui::Text("%s: %g runs", current.name.empty() ? "current" : current.name.c_str(), current.counts[static_cast<size_t>(b)]);
      if (bb >= 0) ImGui::Text("%s: %g runs", baseline->name.empty() ? "baseline" : baseline->name.c_str(), baseline->counts[static_cast<size_t>(bb)]);
      ImGui::EndTooltip();
    }
  }
}

void RooflinePlot(const char* id, double peak_flops, double peak_bw,
                  const std::vector<RooflinePoint>& points,
                  const std::vector<RooflinePoint>& baseline, float height) {
  Frame f = BeginFrame(id, height);
  const Axis xa{"arithmetic intensity (FLOP per DRAM byte)", true};
  const Axis ya{"achieved FLOP/s", true};
  const bool roofs = Finite(peak_flops) && Finite(peak_bw) && peak_flops > 0 && peak_bw > 0;
  const double ridge = roofs ? peak_flops / peak_bw : 0;
  std::vector<double> xs, ys;
  for (const auto* v : {&points, &baseline})
    for (const RooflinePoint& p : *v)
      if (Finite(p.intensity) && p.intensity > 0 && Finite(p.flops_per_s) && p.flops_per_s > 0) {
        xs.push_back(p.intensity);
        ys.push_back(p.flops_per_s);
      }
  if (xs.empty()) {
    DrawNoData(f, ya.label, "no data");
    return;
  }
  if (roofs) {  // show the ridge and the flat roof even when every point is memory-bound
    xs.push_back(ridge * 1.5);
    ys.push_back(peak_flops);
    ys.push_back(peak_flops * 3);  // room above the roof for its label, clear of every point
  }
  Scale x, y;
  x.log = y.log = true;
  FitScale(xa, xs, false, &x);
  FitScale(ya, ys, false, &y);
  YAxis(&f, &y, ya.label);
  XAxis(f, &x, xa.label);
  PushPlotClip(f);
  const ImU32 roof_color = IM_COL32(235, 200, 90, 255);
  if (roofs) {
    const double xl = std::pow(10.0, x.lo), xh = std::pow(10.0, x.hi);
    f.dl->AddLine(ImVec2(x.Px(xl), y.Px(peak_bw * xl)), ImVec2(x.Px(ridge), y.Px(peak_flops)), roof_color, 2);
    f.dl->AddLine(ImVec2(x.Px(ridge), y.Px(peak_flops)), ImVec2(x.Px(xh), y.Px(peak_flops)), roof_color, 2);
    for (float yy = y.Px(peak_flops); yy < f.plot1.y; yy += 8)
      f.dl->AddLine(ImVec2(x.Px(ridge), yy), ImVec2(x.Px(ridge), std::min(yy + 4, f.plot1.y)), kDim);
    std::string flat = "peak ";
    flat += FormatSI(peak_flops, "FLOP/s");
    f.dl->AddText(ImVec2(x.Px(ridge) + 6, y.Px(peak_flops) - LineH() - 3), roof_color, flat.c_str());
    // Left of a point on the slope and above it: the rising line stays below the text.
    std::string slope = "DRAM ";
    slope += FormatSI(peak_bw, "B/s");
    const double sx = std::max(ridge / 10, xl * 1.2);
    const float sw = ImGui::CalcTextSize(slope.c_str()).x;
    f.dl->AddText(ImVec2(std::max(f.plot0.x + 4, x.Px(sx) - sw), y.Px(peak_bw * sx) - LineH() - 6), roof_color,
                  slope.c_str());
    std::string r = "ridge ";
    r += FormatSI(ridge);
    r += " FLOP/B";
    f.dl->AddText(ImVec2(x.Px(ridge) + 4, f.plot1.y - LineH() - 2), kDim, r.c_str());
  }
  auto usable = [](const RooflinePoint& p) {
    return Finite(p.intensity) && p.intensity > 0 && Finite(p.flops_per_s) && p.flops_per_s > 0;
  };
  auto at = [&](const RooflinePoint& p) { return ImVec2(x.Px(p.intensity), y.Px(p.flops_per_s)); };
  for (const RooflinePoint& b : baseline) {
    if (!usable(b)) continue;
    for (const RooflinePoint& p : points)
      if (p.label == b.label && usable(p)) f.dl->AddLine(at(b), at(p), kBaselineColor, 1);
    f.dl->AddCircle(at(b), 4, kBaselineColor, 0, 1.5f);
  }
  const ImU32 color = SeriesColor(0);
  std::vector<ImVec4> taken;  // label rectangles already drawn, to skip overlapping labels
  const RooflinePoint* hit = nullptr;
  bool hit_base = false;
  float best = kPointPick * kPointPick;
  for (const auto* set : {&points, &baseline})
    for (const RooflinePoint& p : *set) {
      if (!usable(p)) continue;
      const ImVec2 c = at(p);
      if (set == &points) {
        f.dl->AddCircleFilled(c, 4, color);
        const ImVec2 sz = ImGui::CalcTextSize(p.label.c_str());
        const ImVec4 r(c.x + 6, c.y - sz.y, c.x + 6 + sz.x, c.y);
        bool clash = false;
        for (const ImVec4& t : taken) clash = clash || (r.x < t.z && t.x < r.z && r.y < t.w && t.y < r.w);
        if (!clash && points.size() <= 24) {
          f.dl->AddText(ImVec2(r.x, r.y), kText, p.label.c_str());
          taken.push_back(r);
        }
      }
      const float dx = c.x - f.mouse.x, dy = c.y - f.mouse.y;
      if (f.InPlot() && dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        hit = &p;
        hit_base = set == &baseline;
      }
    }
  f.dl->PopClipRect();
  Border(f);
  std::vector<LegendEntry> legend{{"segments", color}};
  if (!baseline.empty()) legend.push_back({"baseline", kBaselineColor, true});
  if (roofs) legend.push_back({"roof", roof_color});
  Legend(f, legend);
  if (!roofs) f.dl->AddText(ImVec2(f.plot0.x + 6, f.plot0.y + 4), kDim, "no device peaks: roofs not drawn");
  if (hit) {
    ImGui::BeginTooltip();
    ImGui::Text("%s%s", hit_base ? "baseline " : "", hit->label.c_str());
    ImGui::Text("intensity %s", FormatSI(hit->intensity, "FLOP/B").c_str());
    ImGui::Text("achieved %s", FormatSI(hit->flops_per_s, "FLOP/s").c_str());
    if (roofs) {
      const double roof = std::min(peak_flops, peak_bw * hit->intensity);
      ImGui::Text("%.0f %% of the roof here (%s-bound)", 100 * hit->flops_per_s / roof,
                  hit->intensity < ridge ? "memory" : "compute");
    }
    ImGui::EndTooltip();
  }
}

int TimelinePlot(const char* id, const std::vector<std::string>& lanes,
                 const std::vector<Span>& spans, TimelineView* view, float height) {
  Frame f = BeginFrame(id, height);
  ImGui::SetItemUsingMouseWheel();
  double lo = INFINITY, hi = -INFINITY;
  for (const Span& s : spans)
    if (Finite(s.start) && Finite(s.end) && s.end >= s.start) {
      lo = std::min(lo, s.start);
      hi = std::max(hi, s.end);
    }
  if (lanes.empty() || lo > hi) {
    DrawNoData(f, "", "no data");
    return -1;
  }
  const ImGuiIO& io = ImGui::GetIO();
  if (f.hovered && ImGui::IsMouseDoubleClicked(0)) view->t0 = view->t1 = 0;
  if (view->t0 >= view->t1 || !Finite(view->t0) || !Finite(view->t1)) {
    const double pad = std::max(0.02 * (hi - lo), 1e-3);
    view->t0 = lo - pad;
    view->t1 = hi + pad;
  }
  float lane_w = 0;
  for (const std::string& l : lanes) lane_w = std::max(lane_w, ImGui::CalcTextSize(l.c_str()).x);
  f.plot0.x = f.outer0.x + lane_w + 12;
  Scale x;
  x.lo = view->t0;
  x.hi = view->t1;
  // Zoom about the pointer, pan by dragging (before drawing, so this frame shows the result).
  if (f.InPlot() && io.MouseWheel != 0) {
    x.p0 = f.plot0.x;
    x.p1 = f.plot1.x;
    const double at = x.Value(f.mouse.x), k = std::pow(0.8, io.MouseWheel);
    view->t0 = at - (at - view->t0) * k;
    view->t1 = at + (view->t1 - at) * k;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(0)) {
    const double dt = -io.MouseDelta.x / (f.plot1.x - f.plot0.x) * (view->t1 - view->t0);
    view->t0 += dt;
    view->t1 += dt;
  }
  x.lo = view->t0;
  x.hi = view->t1;
  f.dl->AddRectFilled(f.plot0, f.plot1, kBackground);
  XAxis(f, &x, "time since the run's first kernel (us)");
  const int n = static_cast<int>(lanes.size());
  const float lane_h = std::min(3 * LineH(), (f.plot1.y - f.plot0.y) / n);
  for (int l = 0; l < n; ++l) {
    const float y0 = f.plot0.y + lane_h * l;
    f.dl->AddText(ImVec2(f.outer0.x + 4, y0 + (lane_h - LineH()) * 0.5f), kText, lanes[static_cast<size_t>(l)].c_str());
    if (l > 0) f.dl->AddLine(ImVec2(f.plot0.x, y0), ImVec2(f.plot1.x, y0), kGrid);
  }
  PushPlotClip(f);
  int hovered = -1;
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    if (!Finite(s.start) || !Finite(s.end) || s.end < s.start || s.lane < 0 || s.lane >= n) continue;
    const float x0 = x.Px(s.start), x1 = std::max(x.Px(s.end), x0 + 1);
    if (x1 < f.plot0.x || x0 > f.plot1.x) continue;
    const float y0 = f.plot0.y + lane_h * s.lane + 2, y1 = y0 + lane_h - 4;
    const float vis0 = std::max(x0, f.plot0.x), vis1 = std::min(x1, f.plot1.x);
    if (s.gap) {  // hatched, labelled with its length where that fits
      f.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), s.color ? s.color : kGapColor);
      for (float hx = x0 - (y1 - y0); hx < x1; hx += 8)
        f.dl->AddLine(ImVec2(std::max(hx, x0), y1 - (std::max(hx, x0) - hx)),
                      ImVec2(std::min(hx + (y1 - y0), x1), y1 - (std::min(hx + (y1 - y0), x1) - hx)),
                      IM_COL32(150, 150, 160, 90));
      const ImVec2 sz = ImGui::CalcTextSize(s.name.c_str());
      if (sz.x + 6 <= vis1 - vis0)
        f.dl->AddText(ImVec2((vis0 + vis1 - sz.x) * 0.5f, (y0 + y1 - LineH()) * 0.5f), kText, s.name.c_str());
    } else {
      const ImU32 c = s.color ? s.color : HashColor(s.name);
      f.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), c);
      f.dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(0, 0, 0, 120));
      // The whole name where it fits, else the short label (the key's number), never "n..".
      const float room = vis1 - vis0 - 6;
      const std::string* text = ImGui::CalcTextSize(s.name.c_str()).x <= room ? &s.name
                                : !s.label.empty() && ImGui::CalcTextSize(s.label.c_str()).x <= room ? &s.label
                                                                                                   : nullptr;
      if (text)
        f.dl->AddText(ImVec2(vis0 + 3, (y0 + y1 - LineH()) * 0.5f), IM_COL32(10, 10, 14, 255), text->c_str());
    }
    if (f.InPlot() && f.mouse.x >= x0 && f.mouse.x <= x1 && f.mouse.y >= y0 && f.mouse.y <= y1 &&
        (hovered < 0 || !s.gap))
      hovered = static_cast<int>(i);
  }
  f.dl->PopClipRect();
  Border(f);
  Legend(f, {{"wheel: zoom   drag: pan   double-click: fit all", 0}});
  int clicked = -1;
  if (hovered >= 0) {
    const Span& s = spans[static_cast<size_t>(hovered)];
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(s.name.c_str());
    ImGui::Text("%s us .. %s us (%s us)", FormatSI(s.start).c_str(), FormatSI(s.end).c_str(),
                FormatSI(s.end - s.start).c_str());
    if (!s.tip.empty()) ImGui::TextUnformatted(s.tip.c_str());
    ImGui::EndTooltip();
    if (!s.gap && ImGui::IsMouseReleased(0) && io.MouseDragMaxDistanceSqr[0] < 9) clicked = hovered;
  }
  return clicked;
}

void KeyRow(const std::vector<LegendItem>& items) {
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetTextLineHeight();
  bool first = true;
  for (const LegendItem& it : items) {
    const float w = h + 4 + ImGui::CalcTextSize(it.name.c_str()).x;
    if (!first) {
      ImGui::SameLine(0, 14);
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    first = false;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 a(p.x, p.y + 2), b(p.x + h - 2, p.y + h - 2);
    if (it.outline) {
      dl->AddRect(a, b, it.color, 0, 0, 1.5f);
    } else {
      dl->AddRectFilled(a, b, it.color);
      dl->AddRect(a, b, IM_COL32(150, 150, 160, 255));  // a dark colour stays visible
    }
    ImGui::Dummy(ImVec2(h + 2, h));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(it.name.c_str());
  }
}

}  // namespace stof::app::plots
