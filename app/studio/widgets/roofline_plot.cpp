// RooflinePlot (plots.h), log-log: the device's roofs (DRAM slope up to the ridge, then the
// flat compute peak), the baseline's points as outlines joined to the current point of the
// same label, the current points labelled where labels do not overlap, and the hovered
// point's share of the roof above it. On the scaffolding of plot_frame.h.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "app/studio/widgets/plot_frame.h"
#include "app/studio/widgets/plots.h"

namespace stof::app::plots {

using namespace detail;  // NOLINT: the scaffolding is this file's vocabulary

namespace {

constexpr ImU32 kRoofColor = IM_COL32(235, 200, 90, 255);

bool Usable(const RooflinePoint& p) {
  return Finite(p.intensity) && p.intensity > 0 && Finite(p.flops_per_s) && p.flops_per_s > 0;
}

struct Roofs {
  bool drawn = false;  // both peaks are known
  double flops = 0, bandwidth = 0, ridge = 0;
};

// The DRAM slope, the flat roof, the dashed ridge and their labels.
void DrawRoofs(const Frame& f, const Scale& x, const Scale& y, const Roofs& r) {
  const double xl = std::pow(10.0, x.lo), xh = std::pow(10.0, x.hi);
  f.dl->AddLine(ImVec2(x.Px(xl), y.Px(r.bandwidth * xl)), ImVec2(x.Px(r.ridge), y.Px(r.flops)), kRoofColor, 2);
  f.dl->AddLine(ImVec2(x.Px(r.ridge), y.Px(r.flops)), ImVec2(x.Px(xh), y.Px(r.flops)), kRoofColor, 2);
  for (float yy = y.Px(r.flops); yy < f.plot1.y; yy += 8)
    f.dl->AddLine(ImVec2(x.Px(r.ridge), yy), ImVec2(x.Px(r.ridge), std::min(yy + 4, f.plot1.y)), kDim);
  std::string flat = "peak ";
  flat += FormatSI(r.flops, "FLOP/s");
  f.dl->AddText(ImVec2(x.Px(r.ridge) + 6, y.Px(r.flops) - LineH() - 3), kRoofColor, flat.c_str());
  // Left of a point on the slope and above it: the rising line stays below the text.
  std::string slope = "DRAM ";
  slope += FormatSI(r.bandwidth, "B/s");
  const double sx = std::max(r.ridge / 10, xl * 1.2);
  const float sw = ImGui::CalcTextSize(slope.c_str()).x;
  f.dl->AddText(ImVec2(std::max(f.plot0.x + 4, x.Px(sx) - sw), y.Px(r.bandwidth * sx) - LineH() - 6), kRoofColor,
                slope.c_str());
  std::string ridge = "ridge ";
  ridge += FormatSI(r.ridge);
  ridge += " FLOP/B";
  f.dl->AddText(ImVec2(x.Px(r.ridge) + 4, f.plot1.y - LineH() - 2), kDim, ridge.c_str());
}

struct RooflineHit {
  const RooflinePoint* point = nullptr;  // nearest the pointer, within kPointPick
  bool baseline = false;
};

// The baseline's outlined points joined to the current ones of the same label, then every
// point (current ones filled, labelled where a label does not overlap one already drawn);
// returns the point nearest the pointer.
RooflineHit DrawPoints(const Frame& f, const Scale& x, const Scale& y, const std::vector<RooflinePoint>& points,
                       const std::vector<RooflinePoint>& baseline) {
  auto at = [&](const RooflinePoint& p) { return ImVec2(x.Px(p.intensity), y.Px(p.flops_per_s)); };
  for (const RooflinePoint& b : baseline) {
    if (!Usable(b)) continue;
    for (const RooflinePoint& p : points)
      if (p.label == b.label && Usable(p)) f.dl->AddLine(at(b), at(p), kBaselineColor, 1);
    f.dl->AddCircle(at(b), 4, kBaselineColor, 0, 1.5f);
  }
  std::vector<ImVec4> taken;  // label rectangles already drawn
  RooflineHit hit;
  float best = kPointPick * kPointPick;
  for (const auto* set : {&points, &baseline})
    for (const RooflinePoint& p : *set) {
      if (!Usable(p)) continue;
      const ImVec2 c = at(p);
      if (set == &points) {
        f.dl->AddCircleFilled(c, 4, SeriesColor(0));
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
        hit = {&p, set == &baseline};
      }
    }
  return hit;
}

void PointTooltip(const RooflineHit& hit, const Roofs& r) {
  const RooflinePoint& p = *hit.point;
  ImGui::BeginTooltip();
  ImGui::Text("%s%s", hit.baseline ? "baseline " : "", p.label.c_str());
  ImGui::Text("intensity %s", FormatSI(p.intensity, "FLOP/B").c_str());
  ImGui::Text("achieved %s", FormatSI(p.flops_per_s, "FLOP/s").c_str());
  if (r.drawn) {
    const double roof = std::min(r.flops, r.bandwidth * p.intensity);
    ImGui::Text("%.0f %% of the roof here (%s-bound)", 100 * p.flops_per_s / roof,
                p.intensity < r.ridge ? "memory" : "compute");
  }
  ImGui::EndTooltip();
}

}  // namespace

void RooflinePlot(const char* id, double peak_flops, double peak_bw,
                  const std::vector<RooflinePoint>& points,
                  const std::vector<RooflinePoint>& baseline, float height) {
  Frame f = BeginFrame(id, height);
  const Axis xa{"arithmetic intensity (FLOP per DRAM byte)", true};
  const Axis ya{"achieved FLOP/s", true};
  Roofs roofs;
  roofs.drawn = Finite(peak_flops) && Finite(peak_bw) && peak_flops > 0 && peak_bw > 0;
  roofs.flops = peak_flops;
  roofs.bandwidth = peak_bw;
  roofs.ridge = roofs.drawn ? peak_flops / peak_bw : 0;
  std::vector<double> xs, ys;
  for (const auto* v : {&points, &baseline})
    for (const RooflinePoint& p : *v)
      if (Usable(p)) {
        xs.push_back(p.intensity);
        ys.push_back(p.flops_per_s);
      }
  if (xs.empty()) {
    DrawNoData(f, ya.label, "no data");
    return;
  }
  if (roofs.drawn) {  // show the ridge and the flat roof even when every point is memory-bound
    xs.push_back(roofs.ridge * 1.5);
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
  if (roofs.drawn) DrawRoofs(f, x, y, roofs);
  const RooflineHit hit = DrawPoints(f, x, y, points, baseline);
  f.dl->PopClipRect();
  Border(f);
  std::vector<LegendEntry> legend{{"segments", SeriesColor(0)}};
  if (!baseline.empty()) legend.push_back({"baseline", kBaselineColor, true});
  if (roofs.drawn) legend.push_back({"roof", kRoofColor});
  Legend(f, legend);
  if (!roofs.drawn) f.dl->AddText(ImVec2(f.plot0.x + 6, f.plot0.y + 4), kDim, "no device peaks: roofs not drawn");
  if (hit.point) PointTooltip(hit, roofs);
}

}  // namespace stof::app::plots
