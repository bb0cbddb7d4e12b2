// The profile view's state, without ImGui: the layer profiles listed (measured here, opened
// from a `stof profile layer` JSON, or made from a plan), which one is current and which is
// pinned as the baseline, the kernel table's sort, and the cache of everything the view shows
// for one (current, baseline) pair. LayerWorkbench owns one ProfilePanelState (it adds the
// runs it measures or opens and dumps it with ProfilePanelStateJson for --dump-state);
// panels/profile_panel draws it and calls UpdateProfilePanelCache.
// Invariants: every number the view draws comes from a cache computed once per (current,
// baseline) profile pair (profiler::ComputeProfileView); a frame only formats it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/studio/widgets/plots.h"
#include "profiler/layer_profile.h"
#include "profiler/model/profile_stats.h"

namespace stof::app {

struct ProfileRun {
  std::string name;    // list entry: "bert 8x512 bigbird #2"
  std::string source;  // where it came from: "measured 14:02 on H100", a file path
  std::shared_ptr<const profiler::LayerProfile> profile;  // never null in a listed run
};

// Everything the view shows, derived from one (current, baseline) pair. Built by
// UpdateProfilePanelCache; plot inputs are ready to pass to the plots module.
struct ProfilePanelCache {
  // The inputs, held so their identity (the key) cannot be reused by a new profile.
  std::shared_ptr<const profiler::LayerProfile> current, baseline;
  std::optional<profiler::DevicePeaks> peaks;  // the roofs the view was computed with
  int timeline_run = -1;                       // as ProfilePanelState::timeline_run
  profiler::KernelColumn sorted_by = profiler::KernelColumn::kTotal;  // sorted_kernels' order
  bool sorted_ascending = false;
  profiler::ProfileView view;
  std::vector<profiler::KernelRow> sorted_kernels;   // view.kernels.rows in the sort order
  std::vector<plots::Span> spans, base_spans;  // kernels, then the gaps (plots::kGapColor)
  std::vector<plots::LegendItem> timeline_key, base_timeline_key;
  // Bars: categories (short names / ops labels) and groups (current, then "baseline").
  std::vector<std::string> kernel_categories, segment_categories;
  std::vector<plots::BarGroup> kernel_latency, kernel_dram, segment_latency, segment_dram;
  std::vector<plots::RooflinePoint> roof_points, roof_base_points;
  plots::Histogram hist, base_hist;
  std::vector<plots::Marker> hist_markers;
};

struct ProfilePanelState {
  std::vector<ProfileRun> runs;
  int current = -1, baseline = -1;   // indices into runs; -1 = none
  std::string open_path;             // the "Open profile or plan..." field
  // Kernel table sort (mirrors the ImGui table's sort spec so GUI tests can read it).
  profiler::KernelColumn sort_column = profiler::KernelColumn::kTotal;
  bool sort_ascending = false;
  plots::TimelineView timeline_view;  // shared by the current and baseline timelines
  int timeline_run = -1;             // the traced run the timelines show; -1 = the steady one
                                     // (profiler::SteadyTimelineRun)
  // The roofs: the studio's device (the one every view predicts for); unset: the profile's.
  std::optional<profiler::DevicePeaks> peaks;
  // Profiles shipped with the project (assets/profiles/), offered while the list is empty.
  std::vector<std::string> shipped;
  int selected_span = -1;            // index into cache.spans clicked last, -1 = none
  int select_tab = -1;               // 0..4 = Kernels, Timeline, Bars, Roofline, Histogram:
                                     // selected on the next draw, then reset (tests, screenshots)
  std::shared_ptr<ProfilePanelCache> cache;  // rebuilt when the profile pair or sort changes
};

// Makes sure s.cache matches s's current and baseline runs and sort (cheap when it does).
// DrawProfilePanel calls it; GUI tests and the JSON below may call it directly.
void UpdateProfilePanelCache(ProfilePanelState& s);

// For GUI tests: current, baseline, run names, the first 10 kernel rows in the table's sort
// order, segment rows with deltas, histogram totals and medians, roofline point counts.
// Uses the cache when it matches, else computes the view once (does not store it).
nlohmann::json ProfilePanelStateJson(const ProfilePanelState& s);

// Microseconds as the view writes them: "%.2f", "-" when absent or not finite (the tables,
// the summary line and the histogram's median markers).
std::string ProfileUsText(std::optional<double> v);

}  // namespace stof::app
