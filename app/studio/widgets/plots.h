// The studio's plots, drawn with ImDrawList (ImPlot is not packaged): line plots (the tuner's
// best latency over time), scatter plots (predicted vs measured candidates), grouped bars
// (the fusion ladder, per-kernel and per-segment latency and DRAM bytes, with a baseline
// overlaid), a histogram (repeated runs' latencies), a roofline (achieved FLOP/s against
// arithmetic intensity under the device's roofs) and a kernel timeline with zoom and pan.
// Used by the tune, fusion and profile panels. Every plot takes its data as plain vectors
// (computed once per input change by the caller, never per frame), draws axes with tick
// labels and a legend, shows the hovered item's values in a tooltip, and draws "no data"
// instead of failing on empty or non-finite input. Log axes skip values <= 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stof::app::plots {

// Colours (IM_COL32 layout): one per series index, and the baseline's.
uint32_t SeriesColor(int index);
inline constexpr uint32_t kBaselineColor = 0xB4A0A0A0u;  // grey, translucent
inline constexpr uint32_t kGapColor = 0x50808080u;       // a timeline's idle stretch

// One entry of a colour key drawn under a plot (KeyRow).
struct LegendItem {
  std::string name;
  uint32_t color = 0;
  bool outline = false;   // drawn as an outlined swatch (a baseline, a gap)
};
// A colour key as ImGui items: a swatch and a name per entry, wrapped to the available width.
void KeyRow(const std::vector<LegendItem>& items);

// Tick-label style number: three significant digits with an SI suffix from 1e3 up
// ("950", "1.5k", "10M", "1T"; "0.25" below 1). Tables use it too, so plots and tables agree.
std::string FormatSI(double v);
// With a unit, the prefix joins the unit: (9.89e14, "FLOP/s") -> "989 TFLOP/s", (950, "B") -> "950 B".
std::string FormatSI(double v, const char* unit);

struct Axis {
  std::string label;          // "time (s)", "latency (us)"
  bool log = false;           // base-10 log scale (ticks at powers of ten)
  double min = 0, max = 0;    // min >= max: fit the data (with a 5 % margin on linear axes)
};

struct Series {
  std::string name;            // legend entry; "" = not in the legend
  std::vector<double> x, y;    // same length
  uint32_t color = 0;          // 0 = SeriesColor(index in the vector)
  bool step = false;           // LinePlot: hold each y until the next x (a best-so-far curve)
  bool points = false;         // LinePlot: also mark each point
  std::vector<std::string> tips;  // optional per-point tooltip text (same length as x)
};

// Lines through each series' points, in x order as given.
void LinePlot(const char* id, const std::vector<Series>& series, const Axis& x, const Axis& y,
              float height);

// One dot per point; `diagonal` draws y = x (for predicted vs measured).
void ScatterPlot(const char* id, const std::vector<Series>& series, const Axis& x, const Axis& y,
                 float height, bool diagonal);

// Grouped bars: for each category (x axis), one bar per group (legend), side by side.
// values[g][c] is group g's value of category c (NaN = no bar). Each bar carries its value
// above it (FormatSI, with `value_unit`) where the text fits the bar's slot; `tags[g][c]`
// (optional) is drawn above that (e.g. "measured" / "pred."). A group whose name starts with
// "baseline" is drawn in kBaselineColor as an outline.
struct BarGroup {
  std::string name;
  std::vector<double> values;
  std::vector<std::string> tags;  // empty or one per category
  uint32_t color = 0;
};
void GroupedBars(const char* id, const std::vector<std::string>& categories,
                 const std::vector<BarGroup>& groups, const Axis& y, float height,
                 const char* value_unit = "");

// A histogram of `bins` (counts over [edges[i], edges[i+1])), with an optional baseline
// histogram on the same bins: each bin then holds two bars side by side (current left,
// baseline right, outlined), so neither hides the other; vertical markers (e.g. medians).
struct Histogram {
  std::vector<double> edges;   // bins + 1 ascending edges
  std::vector<double> counts;  // per bin
  std::string name;            // legend entry ("current", "baseline"); "" = not in the legend
};
struct Marker {
  double x = 0;
  std::string label;
  uint32_t color = 0;
};
void HistogramPlot(const char* id, const Histogram& current, const Histogram* baseline,
                   const std::vector<Marker>& markers, const Axis& x, float height);

// Roofline, log-log: x = arithmetic intensity (FLOP/byte), y = achieved FLOP/s; the roof
// min(peak_flops, peak_bw * x) is drawn with its ridge point labelled; each point a dot with
// its label on hover; baseline points (optional) as hollow grey dots joined to the current
// point of the same label by a thin line.
struct RooflinePoint {
  std::string label;
  double intensity = 0;        // FLOP / DRAM byte
  double flops_per_s = 0;
};
void RooflinePlot(const char* id, double peak_flops_per_s, double peak_bytes_per_s,
                  const std::vector<RooflinePoint>& points,
                  const std::vector<RooflinePoint>& baseline, float height);

// Timeline of spans in lanes (one lane per row name); mouse wheel zooms about the pointer,
// dragging pans, double-click resets. View state lives with the caller.
struct Span {
  int lane = 0;
  double start = 0, end = 0;   // microseconds
  std::string name;            // shown inside the span when it fits, and in the tooltip
  std::string tip;             // extra tooltip lines
  uint32_t color = 0;          // 0 = by name hash
  std::string label;           // shown instead of `name` when only it fits (the key's number)
  bool gap = false;            // an idle stretch: hatched, "gap N us", never clicked
};
struct TimelineView {
  double t0 = 0, t1 = 0;       // visible range; t0 >= t1 = fit all spans on the next draw
};
// Returns the index of the span clicked this frame, or -1.
int TimelinePlot(const char* id, const std::vector<std::string>& lanes,
                 const std::vector<Span>& spans, TimelineView* view, float height);

}  // namespace stof::app::plots
