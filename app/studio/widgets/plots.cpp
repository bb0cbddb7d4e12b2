// The studio's line and scatter plots and the colour key row (plots.h), drawn with ImDrawList
// on the scaffolding of plot_frame.h; the bars and histogram are in bar_plots.cpp, the
// roofline in roofline_plot.cpp, the timeline in timeline_plot.cpp. Each plot reserves its
// rectangle with an InvisibleButton (so it scrolls and takes the mouse like any item), lays
// out margins from its tick labels, draws axes, clips its data to the plot rectangle, and
// shows a tooltip for the hovered item. The y axis label sits above the plot (ImGui 1.86
// cannot rotate text) and the legend on the same line, right-aligned, so neither covers data.
// O(points) per frame.
#include "app/studio/widgets/plots.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
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
