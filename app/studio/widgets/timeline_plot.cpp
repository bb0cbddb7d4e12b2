// TimelinePlot (plots.h): a lane per stream, each kernel a box named where the name fits (else
// its short label), idle stretches hatched; the wheel zooms about the pointer, a drag pans and
// a double-click fits every span again. On the scaffolding of plot_frame.h.
#include <imgui.h>
#include <imgui_internal.h>  // SetItemUsingMouseWheel: the timeline zooms instead of scrolling

#include <algorithm>
#include <cmath>
#include <string>

#include "app/studio/widgets/plot_frame.h"
#include "app/studio/widgets/plots.h"

namespace stof::app::plots {

using namespace detail;  // NOLINT: the scaffolding is this file's vocabulary

namespace {

bool Drawable(const Span& s) { return Finite(s.start) && Finite(s.end) && s.end >= s.start; }

// The visible range: every span with a 2 % margin when unset (or after a double-click), then
// moved by the wheel (zoom about the pointer) and a drag (pan) before drawing, so this frame
// shows the result.
void FitZoomAndPan(const Frame& f, double lo, double hi, TimelineView* view) {
  const ImGuiIO& io = ImGui::GetIO();
  if (f.hovered && ImGui::IsMouseDoubleClicked(0)) view->t0 = view->t1 = 0;
  if (view->t0 >= view->t1 || !Finite(view->t0) || !Finite(view->t1)) {
    const double pad = std::max(0.02 * (hi - lo), 1e-3);
    view->t0 = lo - pad;
    view->t1 = hi + pad;
  }
  if (f.InPlot() && io.MouseWheel != 0) {
    Scale x;
    x.lo = view->t0;
    x.hi = view->t1;
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
}

// One span in its lane: an idle gap hatched with its length where that fits, a kernel filled
// with its whole name where it fits, else its short label (the key's number), never "n..".
void DrawSpan(const Frame& f, const Scale& x, const Span& s, float lane_h) {
  const float x0 = x.Px(s.start), x1 = std::max(x.Px(s.end), x0 + 1);
  const float y0 = f.plot0.y + lane_h * s.lane + 2, y1 = y0 + lane_h - 4;
  const float vis0 = std::max(x0, f.plot0.x), vis1 = std::min(x1, f.plot1.x);
  if (s.gap) {
    f.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), s.color ? s.color : kGapColor);
    for (float hx = x0 - (y1 - y0); hx < x1; hx += 8)
      f.dl->AddLine(ImVec2(std::max(hx, x0), y1 - (std::max(hx, x0) - hx)),
                    ImVec2(std::min(hx + (y1 - y0), x1), y1 - (std::min(hx + (y1 - y0), x1) - hx)),
                    IM_COL32(150, 150, 160, 90));
    const ImVec2 sz = ImGui::CalcTextSize(s.name.c_str());
    if (sz.x + 6 <= vis1 - vis0)
      f.dl->AddText(ImVec2((vis0 + vis1 - sz.x) * 0.5f, (y0 + y1 - LineH()) * 0.5f), kText, s.name.c_str());
    return;
  }
  const ImU32 c = s.color ? s.color : HashColor(s.name);
  f.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), c);
  f.dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(0, 0, 0, 120));
  const float room = vis1 - vis0 - 6;
  const std::string* text = ImGui::CalcTextSize(s.name.c_str()).x <= room ? &s.name
                            : !s.label.empty() && ImGui::CalcTextSize(s.label.c_str()).x <= room ? &s.label
                                                                                               : nullptr;
  if (text) f.dl->AddText(ImVec2(vis0 + 3, (y0 + y1 - LineH()) * 0.5f), IM_COL32(10, 10, 14, 255), text->c_str());
}

// Every span in view; returns the one under the pointer (a kernel before a gap), or -1.
int DrawSpans(const Frame& f, const Scale& x, const std::vector<Span>& spans, int lanes, float lane_h) {
  int hovered = -1;
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    if (!Drawable(s) || s.lane < 0 || s.lane >= lanes) continue;
    const float x0 = x.Px(s.start), x1 = std::max(x.Px(s.end), x0 + 1);
    if (x1 < f.plot0.x || x0 > f.plot1.x) continue;
    DrawSpan(f, x, s, lane_h);
    const float y0 = f.plot0.y + lane_h * s.lane + 2, y1 = y0 + lane_h - 4;
    if (f.InPlot() && f.mouse.x >= x0 && f.mouse.x <= x1 && f.mouse.y >= y0 && f.mouse.y <= y1 &&
        (hovered < 0 || !s.gap))
      hovered = static_cast<int>(i);
  }
  return hovered;
}

// The hovered span's name, times and tip; returns it when clicked (a kernel, not a drag).
int SpanTooltip(const Span& s, int index) {
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(s.name.c_str());
  ImGui::Text("%s us .. %s us (%s us)", FormatSI(s.start).c_str(), FormatSI(s.end).c_str(),
              FormatSI(s.end - s.start).c_str());
  if (!s.tip.empty()) ImGui::TextUnformatted(s.tip.c_str());
  ImGui::EndTooltip();
  const ImGuiIO& io = ImGui::GetIO();
  return !s.gap && ImGui::IsMouseReleased(0) && io.MouseDragMaxDistanceSqr[0] < 9 ? index : -1;
}

}  // namespace

int TimelinePlot(const char* id, const std::vector<std::string>& lanes,
                 const std::vector<Span>& spans, TimelineView* view, float height) {
  Frame f = BeginFrame(id, height);
  ImGui::SetItemUsingMouseWheel();
  double lo = INFINITY, hi = -INFINITY;
  for (const Span& s : spans)
    if (Drawable(s)) {
      lo = std::min(lo, s.start);
      hi = std::max(hi, s.end);
    }
  if (lanes.empty() || lo > hi) {
    DrawNoData(f, "", "no data");
    return -1;
  }
  float lane_w = 0;
  for (const std::string& l : lanes) lane_w = std::max(lane_w, ImGui::CalcTextSize(l.c_str()).x);
  f.plot0.x = f.outer0.x + lane_w + 12;
  FitZoomAndPan(f, lo, hi, view);
  Scale x;
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
  const int hovered = DrawSpans(f, x, spans, n, lane_h);
  f.dl->PopClipRect();
  Border(f);
  Legend(f, {{"wheel: zoom   drag: pan   double-click: fit all", 0}});
  return hovered >= 0 ? SpanTooltip(spans[static_cast<size_t>(hovered)], hovered) : -1;
}

}  // namespace stof::app::plots
