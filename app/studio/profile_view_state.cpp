// The profile view's state and its cache (profile_view_state.h): a profiler::ProfileView
// turned into plot inputs once per (current, baseline, sort) change, and the JSON the GUI
// tests read.
#include "app/studio/profile_view_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stof::app {

namespace {

namespace pf = stof::profiler;

using ProfilePtr = std::shared_ptr<const pf::LayerProfile>;

ProfilePtr ProfileAt(const ProfilePanelState& s, int i) {
  return i >= 0 && i < static_cast<int>(s.runs.size()) ? s.runs[static_cast<size_t>(i)].profile : nullptr;
}
// The baseline in use: none when it is the current run itself.
ProfilePtr BaselineOf(const ProfilePanelState& s) {
  return s.baseline != s.current ? ProfileAt(s, s.baseline) : nullptr;
}

// Joins pieces (GCC 12 warns falsely on "literal" + std::string).
std::string Cat(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out += p;
  return out;
}

double Or(std::optional<double> v) { return v ? *v : NAN; }

std::string GapText(double us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "gap %.1f us", us);
  return buf;
}

// Kernels coloured by their key entry and labelled with its number where the name does not
// fit; then the gaps, in every lane (no kernel ran anywhere), hatched and labelled.
std::vector<plots::Span> ToSpans(const pf::Timeline& t) {
  std::vector<plots::Span> out;
  for (const pf::TimelineSpan& s : t.spans)
    out.push_back({s.lane, s.start_us, s.end_us, s.name, s.detail, plots::SeriesColor(s.key),
                   std::to_string(s.key + 1), false});
  for (const pf::TimelineGap& g : t.gaps)
    for (int lane = 0; lane < static_cast<int>(t.lanes.size()); ++lane)
      out.push_back({lane, g.start_us, g.end_us, GapText(g.end_us - g.start_us),
                     "no kernel ran: host work, launch latency or synchronisation", plots::kGapColor,
                     "", true});
  return out;
}

// "1 GemmBias<128, 64>", ... and the gap swatch: the colour key under a timeline.
std::vector<plots::LegendItem> TimelineKey(const pf::Timeline& t) {
  std::vector<plots::LegendItem> key;
  for (size_t i = 0; i < t.keys.size(); ++i)
    key.push_back({std::to_string(i + 1) + " " + t.keys[i], plots::SeriesColor(static_cast<int>(i)), false});
  if (!t.gaps.empty()) key.push_back({"gap: no kernel running", plots::kGapColor, false});
  return key;
}

// The bars of one chart pair (latency; DRAM read and write), current and baseline, one value
// per category in each series.
struct BarSeries {
  plots::BarGroup lat{"current", {}, {}, 0}, base{"baseline", {}, {}, 0};
  plots::BarGroup rd{"read", {}, {}, plots::SeriesColor(0)}, wr{"write", {}, {}, plots::SeriesColor(1)};
  plots::BarGroup brd{"baseline read", {}, {}, 0}, bwr{"baseline write", {}, {}, 0};

  void Add(double latency, double base_latency, double read, double write, double base_read,
           double base_write) {
    lat.values.push_back(latency);
    base.values.push_back(base_latency);
    rd.values.push_back(read);
    wr.values.push_back(write);
    brd.values.push_back(base_read);
    bwr.values.push_back(base_write);
  }
  // Latency: current (then baseline); DRAM: read (then baseline read), write (then baseline
  // write). The baseline series only when there is a baseline.
  void Emit(bool has_baseline, std::vector<plots::BarGroup>* latency,
            std::vector<plots::BarGroup>* dram) const {
    *latency = {lat};
    *dram = {rd};
    if (has_baseline) {
      latency->push_back(base);
      dram->push_back(brd);
    }
    dram->push_back(wr);
    if (has_baseline) dram->push_back(bwr);
  }
};

std::shared_ptr<ProfilePanelCache> BuildCache(const ProfilePanelState& s, const ProfilePtr& cur,
                                              const ProfilePtr& base) {
  auto c = std::make_shared<ProfilePanelCache>();
  c->current = cur;
  c->baseline = base;
  c->peaks = s.peaks;
  c->timeline_run = s.timeline_run;
  c->sorted_by = s.sort_column;
  c->sorted_ascending = s.sort_ascending;
  c->view = pf::ComputeProfileView(*cur, base.get(), s.peaks ? &*s.peaks : nullptr, s.timeline_run);
  const pf::ProfileView& v = c->view;
  c->sorted_kernels = v.kernels.rows;
  pf::SortKernelRows(&c->sorted_kernels, s.sort_column, s.sort_ascending);
  c->spans = ToSpans(v.timeline);
  c->base_spans = ToSpans(v.base_timeline);
  c->timeline_key = TimelineKey(v.timeline);
  c->base_timeline_key = TimelineKey(v.base_timeline);
  // Bars keep the layer order (first launch / segment order): it reads like the timeline.
  BarSeries kernels;
  for (const pf::KernelRow& r : v.kernels.rows) {
    c->kernel_categories.push_back(r.short_name);
    const bool here = r.match != pf::RowMatch::kOnlyBaseline;
    kernels.Add(here ? r.total_us : NAN, Or(r.d_total_us.base), Or(r.dram_read), Or(r.dram_write),
                Or(r.d_dram_read.base), Or(r.d_dram_write.base));
  }
  kernels.Emit(v.has_baseline, &c->kernel_latency, &c->kernel_dram);
  BarSeries segments;
  for (const pf::SegmentRow& r : v.segments) {
    std::string cat = r.ops;
    if (!r.tmpl.empty()) {
      cat += ' ';
      cat += r.tmpl;
    }
    c->segment_categories.push_back(cat);
    segments.Add(Or(r.latency_us), Or(r.d_latency_us.base), Or(r.dram_read), Or(r.dram_write),
                 Or(r.d_dram_read.base), Or(r.d_dram_write.base));
  }
  segments.Emit(v.has_baseline, &c->segment_latency, &c->segment_dram);
  for (const pf::RoofPoint& p : v.roofline.points) c->roof_points.push_back({p.label, p.intensity, p.flops_per_s});
  for (const pf::RoofPoint& p : v.roofline.base_points)
    c->roof_base_points.push_back({p.label, p.intensity, p.flops_per_s});
  const pf::LatencyHistogram& h = v.histogram;
  c->hist = {h.edges, h.counts, Cat({"current (", std::to_string(h.samples), " runs)"})};
  if (v.has_baseline) c->base_hist = {h.edges, h.base_counts, Cat({"baseline (", std::to_string(h.base_samples), " runs)"})};
  if (h.median_us) c->hist_markers.push_back({*h.median_us, Cat({"median ", ProfileUsText(h.median_us), " us"}), plots::SeriesColor(1)});
  if (h.base_median_us)
    c->hist_markers.push_back({*h.base_median_us, Cat({"baseline median ", ProfileUsText(h.base_median_us), " us"}), plots::kBaselineColor});
  return c;
}

nlohmann::json DeltaJson(const pf::Delta& d) {
  nlohmann::json j = nlohmann::json::object();
  if (d.base) j["base"] = *d.base;
  if (d.abs) j["abs"] = *d.abs;
  if (d.pct) j["pct"] = *d.pct;
  return j;
}

nlohmann::json Opt(std::optional<double> v) { return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

std::string ProfileUsText(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *v);
  return buf;
}

void UpdateProfilePanelCache(ProfilePanelState& s) {
  if (s.current >= static_cast<int>(s.runs.size())) s.current = -1;
  if (s.baseline >= static_cast<int>(s.runs.size())) s.baseline = -1;
  const ProfilePtr cur = ProfileAt(s, s.current);
  const ProfilePtr base = BaselineOf(s);
  if (!cur) {
    s.cache.reset();
    return;
  }
  ProfilePanelCache* c = s.cache.get();
  if (c && c->current == cur && c->baseline == base && c->peaks == s.peaks &&
      c->timeline_run == s.timeline_run) {
    if (c->sorted_by != s.sort_column || c->sorted_ascending != s.sort_ascending) {
      c->sorted_by = s.sort_column;
      c->sorted_ascending = s.sort_ascending;
      pf::SortKernelRows(&c->sorted_kernels, s.sort_column, s.sort_ascending);
    }
    return;
  }
  const bool same_current = c && c->current == cur;
  s.cache = BuildCache(s, cur, base);
  if (!same_current) s.selected_span = -1;  // a new profile: forget the old selection
  s.timeline_view = {};  // refit: the baseline's run may be longer
}

nlohmann::json ProfilePanelStateJson(const ProfilePanelState& s) {
  nlohmann::json j;
  j["current"] = s.current;
  j["baseline"] = s.baseline;
  j["runs"] = nlohmann::json::array();
  for (const ProfileRun& r : s.runs) j["runs"].push_back({{"name", r.name}, {"source", r.source}});
  const ProfilePtr cur = ProfileAt(s, s.current);
  if (!cur) return j;
  std::shared_ptr<ProfilePanelCache> c = s.cache;
  if (!c || c->current != cur || c->baseline != BaselineOf(s) || c->sorted_by != s.sort_column ||
      c->sorted_ascending != s.sort_ascending || c->peaks != s.peaks || c->timeline_run != s.timeline_run)
    c = BuildCache(s, cur, BaselineOf(s));
  const pf::ProfileView& v = c->view;
  j["has_baseline"] = v.has_baseline;
  j["kernels_why_empty"] = v.kernels.why_empty;
  j["kernel_rows_total"] = v.kernels.rows.size();
  j["kernel_rows"] = nlohmann::json::array();
  for (size_t i = 0; i < std::min<size_t>(10, c->sorted_kernels.size()); ++i) {
    const pf::KernelRow& r = c->sorted_kernels[i];
    j["kernel_rows"].push_back({{"name", r.short_name}, {"launches", r.launches}, {"total_us", r.total_us},
                                {"mean_us", r.mean_us}, {"share", r.share}, {"dram_read", Opt(r.dram_read)},
                                {"dram_write", Opt(r.dram_write)}, {"match", pf::RowMatchName(r.match)},
                                {"d_total_us", DeltaJson(r.d_total_us)}, {"grid", r.grid}, {"block", r.block},
                                {"registers", r.registers}, {"smem_bytes", r.smem_bytes},
                                {"launch_varies", r.launch_varies}});
  }
  j["segment_rows"] = nlohmann::json::array();
  for (const pf::SegmentRow& r : v.segments)
    j["segment_rows"].push_back({{"ops", r.ops}, {"template", r.tmpl}, {"latency_us", Opt(r.latency_us)},
                                 {"match", pf::RowMatchName(r.match)}, {"d_latency_us", DeltaJson(r.d_latency_us)},
                                 {"d_dram_read", DeltaJson(r.d_dram_read)}, {"d_dram_write", DeltaJson(r.d_dram_write)}});
  double n = 0, nb = 0;
  for (double x : v.histogram.counts) n += x;
  for (double x : v.histogram.base_counts) nb += x;
  const pf::LatencyHistogram& h = v.histogram;
  auto bin_of = [&h](std::optional<double> x) -> nlohmann::json {
    if (!x || h.edges.size() < 2) return nullptr;
    for (size_t i = 0; i + 1 < h.edges.size(); ++i)
      if (*x >= h.edges[i] && (*x < h.edges[i + 1] || i + 2 == h.edges.size())) return i;
    return nullptr;
  };
  j["histogram"] = {{"bins", h.counts.size()}, {"count", n}, {"base_count", nb},
                    {"bin_width_us", h.edges.size() >= 2 ? h.edges[1] - h.edges[0] : 0.0},
                    {"median_us", Opt(h.median_us)}, {"base_median_us", Opt(h.base_median_us)},
                    {"median_bin", bin_of(h.median_us)}, {"base_median_bin", bin_of(h.base_median_us)},
                    {"below", h.below}, {"above", h.above}};
  j["roofline"] = {{"points", v.roofline.points.size()}, {"base_points", v.roofline.base_points.size()},
                   {"why_empty", v.roofline.why_empty}, {"peak_flops_per_s", v.roofline.peak_flops_per_s},
                   {"peak_bytes_per_s", v.roofline.peak_bytes_per_s}, {"peaks_from", v.roofline.peaks_from}};
  j["timeline_spans"] = v.timeline.spans.size();
  const pf::Timeline& t = v.timeline;
  j["timeline"] = {{"run", t.run}, {"runs", t.runs}, {"run_spans_us", t.run_spans_us},
                   {"span_us", t.span_us}, {"busy_us", t.busy_us}, {"gaps", t.gaps.size()},
                   {"key", c->timeline_key.size()}, {"kernels", t.spans.size()}};
  j["shipped"] = s.shipped;
  return j;
}

}  // namespace stof::app
