// The scaffolding every plot of plots.h shares, drawn with ImDrawList: the colours, the
// mapping between axis values and pixels (linear or log10) with fitted ranges and 1-2-5 /
// power-of-ten ticks, the plot's rectangles (reserved with an InvisibleButton so it scrolls
// and takes the mouse like any item), the axes with their grid and tick labels, the legend on
// the title line and the "no data" face. Used only by the plots of plots.h (plots.cpp,
// bar_plots.cpp, roofline_plot.cpp, timeline_plot.cpp).
#pragma once

#include <imgui.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "app/studio/widgets/plots.h"

namespace stof::app::plots::detail {

inline constexpr ImU32 kBackground = IM_COL32(24, 26, 32, 255);
inline constexpr ImU32 kBorder = IM_COL32(80, 84, 96, 255);
inline constexpr ImU32 kGrid = IM_COL32(58, 62, 74, 255);
inline constexpr ImU32 kMinorGrid = IM_COL32(40, 43, 52, 255);
inline constexpr ImU32 kText = IM_COL32(205, 205, 215, 255);
inline constexpr ImU32 kDim = IM_COL32(140, 142, 155, 255);
inline constexpr float kPointPick = 8.0f;  // px: how near the pointer a point must be for its tooltip

inline bool Finite(double v) { return std::isfinite(v); }

// A map between axis values and pixels; lo/hi are log10 values on log axes.
struct Scale {
  bool log = false;
  double lo = 0, hi = 1;
  float p0 = 0, p1 = 1;  // pixels of lo and hi (p1 < p0 for y)
  bool Usable(double v) const { return Finite(v) && (!log || v > 0); }
  double T(double v) const { return log ? std::log10(v) : v; }
  float Px(double v) const { return p0 + (p1 - p0) * static_cast<float>((T(v) - lo) / (hi - lo)); }
  double Value(float px) const {
    const double t = lo + (px - p0) / (p1 - p0) * (hi - lo);
    return log ? std::pow(10.0, t) : t;
  }
};

// The axis range in axis space: the caller's, or fitted to `values` (5 % margin on linear
// axes, whole decades on log axes). False when nothing is drawable.
bool FitScale(const Axis& axis, const std::vector<double>& values, bool from_zero, Scale* s);
// Tick values: 1-2-5 steps on linear axes, powers of ten (thinned to fit) on log axes.
std::vector<double> Ticks(const Scale& s, float pixels, float spacing);

// A plot's rectangles: `outer` is the widget, `plot` the data area inside the margins.
struct Frame {
  ImDrawList* dl = nullptr;
  ImVec2 outer0, outer1, plot0, plot1;
  bool hovered = false;
  ImVec2 mouse;
  bool InPlot() const {
    return hovered && mouse.x >= plot0.x && mouse.x <= plot1.x && mouse.y >= plot0.y && mouse.y <= plot1.y;
  }
};

inline float LineH() { return ImGui::GetTextLineHeight(); }

// Reserves the widget; the plot's left margin is fixed later by YAxis.
Frame BeginFrame(const char* id, float height);
void DrawNoData(const Frame& f, const std::string& y_label, const char* why);
// Text clipped to `max_w` pixels with a trailing "..".
std::string Fit(const std::string& s, float max_w);
// Y axis: sets the plot's left margin from the widest tick label, then draws grid and labels.
void YAxis(Frame* f, Scale* y, const std::string& label);
// X axis on a numeric scale: vertical grid, tick labels below the plot, the label under them.
void XAxis(const Frame& f, Scale* x, const std::string& label);
inline void Border(const Frame& f) { f.dl->AddRect(f.plot0, f.plot1, kBorder); }

// Legend on the title line, right-aligned: a swatch and a name per entry (outline = outlined).
struct LegendEntry {
  std::string name;
  ImU32 color;
  bool outline = false;
};
void Legend(const Frame& f, const std::vector<LegendEntry>& entries);

inline void PushPlotClip(const Frame& f) { f.dl->PushClipRect(f.plot0, f.plot1, true); }
inline uint32_t ColorOr(uint32_t color, int index) { return color ? color : SeriesColor(index); }
uint32_t HashColor(const std::string& s);  // a palette colour chosen by the text

}  // namespace stof::app::plots::detail
