// DrawProfilePanel (profile_panel.h). The tabs only format the cache of
// profile_view_state.h.
#include "app/studio/panels/profile_panel.h"

#include <imgui.h>

#include <array>
#include <cmath>
#include <cstdio>

#include "app/studio/widgets/elided_text.h"
#include "app/studio/widgets/input_text.h"

namespace stof::app {

namespace {

namespace pf = stof::profiler;

std::string Bytes(std::optional<double> v) {
  return v && std::isfinite(*v) ? plots::FormatSI(*v, "B") : std::string("-");
}

std::string Num(std::optional<double> v) {
  return v && std::isfinite(*v) ? plots::FormatSI(*v) : std::string("-");
}
std::string Signed(std::optional<double> v, const char* fmt) {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, *v);
  return buf;
}

// The one-line reason shown instead of a plot or table without data.
void Reason(const char* what, const std::string& why) { ImGui::TextDisabled("%s: %s.", what, why.c_str()); }

// A delta cell: green when the current run is lower (faster, fewer bytes), red when higher.
void DeltaText(std::optional<double> v, const char* fmt) {
  const std::string t = Signed(v, fmt);
  if (v && std::isfinite(*v) && *v != 0)
    ImGui::TextColored(*v < 0 ? ImVec4(0.45f, 0.85f, 0.45f, 1) : ImVec4(0.95f, 0.45f, 0.45f, 1), "%s", t.c_str());
  else
    ImGui::TextUnformatted(t.c_str());
}

// The profiles shipped in assets/profiles/ (measured on an H100), one Open button each.
void ShippedProfiles(const ProfilePanelState& s, ProfilePanelActions* a) {
  if (s.shipped.empty()) {
    ImGui::TextDisabled("The project ships H100 profiles in assets/profiles/ (not found from here).");
    return;
  }
  ImGui::TextUnformatted("Or open a profile shipped with the project (measured on an H100):");
  for (const std::string& path : s.shipped) {
    ImGui::PushID(path.c_str());
    if (ImGui::SmallButton("Open")) {
      a->open = true;
      a->open_path = path;
    }
    ImGui::SameLine();
    const size_t slash = path.find_last_of('/');
    ImGui::TextUnformatted(slash == std::string::npos ? path.c_str() : path.c_str() + slash + 1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
    ImGui::PopID();
  }
}

void RunList(ProfilePanelState& s, ProfilePanelActions* a, bool can_profile, const std::string& status) {
  ImGui::BeginDisabled(!can_profile);
  if (ImGui::Button("Profile now")) a->profile_now = true;
  ImGui::EndDisabled();
  ImGui::SameLine();
  // The status may be a long reason (no usable GPU, and why): cut to the line, whole on hover.
  ElidedText(status, /*disabled=*/true);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Profile or plan JSON:");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 80));
  InputTextString("##open_path", &s.open_path);
  ImGui::SameLine();
  ImGui::BeginDisabled(s.open_path.empty());
  const bool open = ImGui::Button("Open");
  ImGui::EndDisabled();
  if (open) {
    a->open = true;
    a->open_path = s.open_path;
  }
  if (s.runs.empty()) {
    Reason("No profiles yet", "press \"Profile now\" (needs a GPU) or open a .profile.json made by "
                              "`stof profile layer`");
    ShippedProfiles(s, a);
    return;
  }
  int remove = -1;
  // Up to 5 runs show whole; more scroll.
  const bool scroll = s.runs.size() > 5;
  if (ImGui::BeginTable("##runs", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH |
                                         (scroll ? ImGuiTableFlags_ScrollY : 0),
                        ImVec2(0, scroll ? 5.5f * ImGui::GetFrameHeightWithSpacing() : 0))) {
    ImGui::TableSetupColumn("run", ImGuiTableColumnFlags_WidthStretch, 2);
    ImGui::TableSetupColumn("source", ImGuiTableColumnFlags_WidthStretch, 3);
    ImGui::TableSetupColumn("role", ImGuiTableColumnFlags_WidthFixed, 70);
    ImGui::TableSetupColumn("actions", ImGuiTableColumnFlags_WidthFixed, 190);
    for (int i = 0; i < static_cast<int>(s.runs.size()); ++i) {
      const ProfileRun& r = s.runs[static_cast<size_t>(i)];
      ImGui::PushID(i);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string name = ElideToWidth(r.name, ImGui::GetContentRegionAvail().x);
      if (ImGui::Selectable(name.c_str(), s.current == i)) s.current = i;
      if (name.size() != r.name.size() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.name.c_str());
      ImGui::TableNextColumn();
      ElidedText(r.source, /*disabled=*/true);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(s.current == i ? (s.baseline == i ? "both" : "current")
                                            : (s.baseline == i ? "baseline" : ""));
      ImGui::TableNextColumn();
      if (ImGui::SmallButton(s.baseline == i ? "Unpin baseline" : "Pin as baseline"))
        s.baseline = s.baseline == i ? -1 : i;
      ImGui::SameLine();
      if (ImGui::SmallButton("Remove")) remove = i;
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  if (remove >= 0) {
    s.runs.erase(s.runs.begin() + remove);
    auto fix = [remove](int& idx) { idx = idx == remove ? -1 : idx > remove ? idx - 1 : idx; };
    fix(s.current);
    fix(s.baseline);
    if (s.current < 0 && !s.runs.empty()) s.current = static_cast<int>(s.runs.size()) - 1;
  }
}

void SummaryLine(const ProfilePanelState& s, const ProfilePanelCache& c) {
  const pf::LayerProfile& p = *c.current;
  const pf::ProfileSummary& sum = p.layer.summary;
  ImGui::Text("%s", p.label.empty() ? s.runs[static_cast<size_t>(s.current)].name.c_str() : p.label.c_str());
  std::string where = p.device_name.empty() ? std::string("device unknown") : p.device_name;
  if (!p.scheme_code.empty()) {
    where += ", fusion scheme ";
    where += p.scheme_code;
  }
  if (!p.backend.empty()) {
    where += ", backend ";
    where += p.backend;
  }
  ImGui::TextDisabled("%s", where.c_str());
  if (!sum.latency_us) {
    const pf::Availability& av = p.layer.availability;
    return Reason("Layer not measured", !av.events_why_not.empty() ? av.events_why_not
                                        : !av.activity_why_not.empty() ? av.activity_why_not
                                                                       : std::string("no latency in this profile"));
  }
  ImGui::Text("Layer latency %s us (median of %d runs), %d kernels per run, DRAM %s per run",
              ProfileUsText(sum.latency_us).c_str(), p.layer.latency.runs, sum.kernels_per_run, Bytes(sum.dram_bytes).c_str());
  if (c.baseline && sum.latency_us && c.baseline->layer.summary.latency_us) {
    const pf::Delta d = pf::MakeDelta(sum.latency_us, c.baseline->layer.summary.latency_us);
    ImGui::SameLine();
    ImGui::Text("| baseline %s us, change:", ProfileUsText(d.base).c_str());
    ImGui::SameLine();
    DeltaText(d.abs, "%+.2f us");
    ImGui::SameLine();
    DeltaText(d.pct, "(%+.1f %%)");
  } else if (s.baseline >= 0 && s.baseline == s.current) {
    ImGui::SameLine();
    ImGui::TextDisabled("| the baseline is this run: pin another run to compare");
  }
}

std::string Dims(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// Grid, block, registers per thread and shared memory per block of the first launch; "*"
// marks a kernel whose later launches differed (the timeline's tooltips have each one).
void LaunchCells(const pf::KernelRow& r, bool here) {
  const char* mark = r.launch_varies ? " *" : "";
  auto cell = [&](const std::string& text) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(here ? (text + mark).c_str() : "-");
    if (here && r.launch_varies && ImGui::IsItemHovered())
      ImGui::SetTooltip("the first launch's; later launches of this kernel differed");
  };
  cell(Dims(r.grid));
  cell(Dims(r.block));
  cell(std::to_string(r.registers));
  cell(plots::FormatSI(static_cast<double>(r.smem_bytes), "B"));
}

void KernelsTab(ProfilePanelState& s, const ProfilePanelCache& c) {
  const pf::KernelTable& t = c.view.kernels;
  if (t.rows.empty()) return Reason("No kernel table", t.why_empty);
  ImGui::TextDisabled("Per run: median over %d traced runs. Mean/min/max: one launch.%s", t.runs,
                      c.baseline ? " Deltas: current - baseline." : "");
  if (!t.have_dram) Reason("DRAM columns empty", t.dram_why_not);
  const bool base = c.baseline != nullptr;
  const int ncol = base ? 16 : 13;
  // Scrolls sideways rather than squeezing the kernel names: 13 to 16 columns do not fit 1280 px.
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersOuter | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##kernels", ncol, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) return;
  using K = pf::KernelColumn;
  auto col = [](const char* name, K id, ImGuiTableColumnFlags f = 0) {
    ImGui::TableSetupColumn(name, f | ImGuiTableColumnFlags_PreferSortDescending, 0, static_cast<ImGuiID>(id));
  };
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("kernel", ImGuiTableColumnFlags_WidthFixed, 260, static_cast<ImGuiID>(K::kName));
  col("launches/run", K::kLaunches);
  col("total us/run", K::kTotal, ImGuiTableColumnFlags_DefaultSort);
  col("mean us", K::kMean);
  col("min us", K::kMin);
  col("max us", K::kMax);
  col("share", K::kShare);
  col("DRAM read", K::kDramRead);
  col("DRAM write", K::kDramWrite);
  for (const char* h : {"grid", "block", "registers", "smem/block"})
    ImGui::TableSetupColumn(h, ImGuiTableColumnFlags_NoSort);
  if (base) {
    col("delta us", K::kDeltaTotal);
    col("delta %", K::kDeltaTotalPct);
    ImGui::TableSetupColumn("in", ImGuiTableColumnFlags_NoSort);
  }
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* spec = ImGui::TableGetSortSpecs(); spec && spec->SpecsDirty) {
    if (spec->SpecsCount > 0) {
      s.sort_column = static_cast<K>(spec->Specs[0].ColumnUserID);
      s.sort_ascending = spec->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
    }
    spec->SpecsDirty = false;  // the cache re-sorts on the next frame's update
  }
  for (const pf::KernelRow& r : c.sorted_kernels) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.short_name.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.name.c_str());
    const bool here = r.match != pf::RowMatch::kOnlyBaseline;
    auto cell = [](const std::string& text) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(text.c_str());
    };
    char share[16];
    std::snprintf(share, sizeof share, "%.1f %%", 100 * r.share);
    cell(here ? Signed(r.launches, "%g") : "-");
    cell(here ? ProfileUsText(r.total_us) : "-");
    cell(here ? ProfileUsText(r.mean_us) : "-");
    cell(here ? ProfileUsText(r.min_us) : "-");
    cell(here ? ProfileUsText(r.max_us) : "-");
    cell(here ? share : "-");
    cell(Bytes(r.dram_read));
    cell(Bytes(r.dram_write));
    LaunchCells(r, here);
    if (base) {
      ImGui::TableNextColumn();
      DeltaText(r.d_total_us.abs, "%+.2f");
      ImGui::TableNextColumn();
      DeltaText(r.d_total_us.pct, "%+.1f %%");
      cell(r.match == pf::RowMatch::kBoth ? "both" : r.match == pf::RowMatch::kOnlyCurrent ? "new" : "gone");
    }
  }
  ImGui::EndTable();
}

// Current and baseline share one view, so equal times line up; "fit" covers the longer run.
void FitTimeline(ProfilePanelState& s, const pf::ProfileView& v) {
  if (s.timeline_view.t0 < s.timeline_view.t1) return;
  const double end = std::max(v.timeline.span_us, v.base_timeline.span_us);
  s.timeline_view.t0 = -0.02 * end;
  s.timeline_view.t1 = 1.02 * end;
}

// "traced run 2 of 2 (the shortest; ...)": which traced run is drawn (1-based) and why.
std::string RunText(const pf::Timeline& t, bool chosen) {
  std::string out = "traced run " + std::to_string(t.run + 1) + " of " + std::to_string(t.runs);
  if (!chosen && t.runs > 1) out += " (the shortest; the first run of a process carries one-time host work)";
  return out;
}

void TimelineHeader(const pf::Timeline& t, bool chosen, const char* who) {
  const double gaps = t.span_us - t.busy_us;
  ImGui::TextWrapped("%s%s: %zu kernels over %s us; kernels ran %s us (%.0f %%), gaps %s us.", who,
                     RunText(t, chosen).c_str(), t.spans.size(), ProfileUsText(t.span_us).c_str(),
                     ProfileUsText(t.busy_us).c_str(), t.span_us > 0 ? 100 * t.busy_us / t.span_us : 0.0,
                     ProfileUsText(gaps).c_str());
}

// The run chooser: each traced run with its span.
void RunChooser(ProfilePanelState& s, const pf::Timeline& t) {
  if (t.runs < 2) return;
  std::string preview = s.timeline_run < 0 ? "steady (shortest)" : "run " + std::to_string(s.timeline_run + 1);
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo("traced run", preview.c_str())) {
    if (ImGui::Selectable("steady (shortest)", s.timeline_run < 0)) s.timeline_run = -1;
    for (int i = 0; i < t.runs; ++i) {
      char label[64];
      std::snprintf(label, sizeof label, "run %d: %s us", i + 1,
                    ProfileUsText(i < static_cast<int>(t.run_spans_us.size()) ? t.run_spans_us[static_cast<size_t>(i)] : NAN).c_str());
      if (ImGui::Selectable(label, s.timeline_run == i)) s.timeline_run = i;
    }
    ImGui::EndCombo();
  }
}

void TimelineTab(ProfilePanelState& s, const ProfilePanelCache& c) {
  const pf::ProfileView& v = c.view;
  const float lane_h = 36.0f;
  if (v.timeline.spans.empty()) {
    Reason("No timeline", v.timeline.why_empty);
  } else {
    RunChooser(s, v.timeline);
    TimelineHeader(v.timeline, s.timeline_run >= 0, "");
    FitTimeline(s, v);
    const int hit = plots::TimelinePlot("##timeline", v.timeline.lanes, c.spans, &s.timeline_view,
                                        70.0f + lane_h * static_cast<float>(v.timeline.lanes.size()));
    if (hit >= 0) s.selected_span = hit;
    plots::KeyRow(c.timeline_key);
    if (s.selected_span >= 0 && s.selected_span < static_cast<int>(c.spans.size())) {
      const plots::Span& sp = c.spans[static_cast<size_t>(s.selected_span)];
      ImGui::TextWrapped("Selected: %s, %.2f us\n%s", sp.name.c_str(), sp.end - sp.start, sp.tip.c_str());
    }
  }
  if (!c.baseline) return;
  ImGui::Separator();
  if (v.base_timeline.spans.empty()) return Reason("No baseline timeline", v.base_timeline.why_empty);
  TimelineHeader(v.base_timeline, s.timeline_run >= 0, "Baseline, ");
  ImGui::TextDisabled("Same time axis: zoom and pan move both.");
  FitTimeline(s, v);
  plots::TimelinePlot("##base_timeline", v.base_timeline.lanes, c.base_spans, &s.timeline_view,
                      70.0f + lane_h * static_cast<float>(v.base_timeline.lanes.size()));
  plots::KeyRow(c.base_timeline_key);
}

void BarsTab(const ProfilePanelCache& c) {
  const pf::ProfileView& v = c.view;
  const float h = 220;
  if (ImGui::CollapsingHeader("Per kernel", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (v.kernels.rows.empty()) {
      Reason("No kernel bars", v.kernels.why_empty);
    } else {
      plots::GroupedBars("##k_lat", c.kernel_categories, c.kernel_latency, {"time per run (us)"}, h);
      if (v.kernels.have_dram)
        plots::GroupedBars("##k_dram", c.kernel_categories, c.kernel_dram, {"DRAM bytes per run"}, h);
      else Reason("No DRAM bars", v.kernels.dram_why_not);
    }
  }
  if (ImGui::CollapsingHeader("Per segment", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (v.segments.empty()) return Reason("No segment bars", v.segments_why_empty);
    plots::GroupedBars("##s_lat", c.segment_categories, c.segment_latency, {"segment latency (us)"}, h);
    bool dram = false;
    for (const pf::SegmentRow& r : v.segments) dram = dram || r.dram_read || r.dram_write;
    if (dram) plots::GroupedBars("##s_dram", c.segment_categories, c.segment_dram, {"DRAM bytes per run"}, h);
    else Reason("No segment DRAM bars", "no segment has DRAM counters");
  }
}

void SegmentsTable(const ProfilePanelCache& c) {
  const bool base = c.baseline != nullptr;
  if (!ImGui::BeginTable("##segments", base ? 12 : 9,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_SizingFixedFit))
    return;
  for (const char* h : {"ops", "template", "latency us", "kernels", "DRAM read", "DRAM write", "FLOP",
                        "FLOP/s", "FLOP/byte"})
    ImGui::TableSetupColumn(h);
  if (base)
    for (const char* h : {"delta us", "delta %", "in"}) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const pf::SegmentRow& r : c.view.segments) {
    ImGui::TableNextRow();
    auto cell = [](const std::string& text) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(text.c_str());
    };
    cell(r.ops);
    cell(r.tmpl.empty() ? "(op by op)" : r.tmpl);
    cell(ProfileUsText(r.latency_us));
    cell(r.match == pf::RowMatch::kOnlyBaseline ? "-" : std::to_string(r.kernels));
    cell(Bytes(r.dram_read));
    cell(Bytes(r.dram_write));
    cell(Num(r.flops));
    cell(Num(r.flops_per_s));
    cell(Num(r.intensity));
    if (base) {
      ImGui::TableNextColumn();
      DeltaText(r.d_latency_us.abs, "%+.2f");
      ImGui::TableNextColumn();
      DeltaText(r.d_latency_us.pct, "%+.1f %%");
      cell(r.match == pf::RowMatch::kBoth ? "both" : r.match == pf::RowMatch::kOnlyCurrent ? "new" : "gone");
    }
  }
  ImGui::EndTable();
}

void RooflineTab(const ProfilePanelCache& c) {
  const pf::Roofline& r = c.view.roofline;
  if (!r.why_empty.empty()) return Reason("No roofline", r.why_empty);
  ImGui::TextDisabled("One dot per segment: its FLOPs over its measured DRAM bytes and latency.%s",
                      c.baseline ? " Grey rings: the baseline's segments." : "");
  ImGui::TextDisabled("Roofs: %s (%s fp16 tensor, %s DRAM)%s.", r.peaks_from.c_str(),
                      plots::FormatSI(r.peak_flops_per_s, "FLOP/s").c_str(),
                      plots::FormatSI(r.peak_bytes_per_s, "B/s").c_str(),
                      c.peaks ? ", the device every view uses" : ", as the profile recorded them");
  if (r.skipped > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("Left out (no FLOPs, counters or latency): %d of %zu segments.", r.skipped,
                        c.current->segments.size());
  }
  plots::RooflinePlot("##roofline", r.peak_flops_per_s, r.peak_bytes_per_s, c.roof_points, c.roof_base_points,
                      std::max(300.0f, ImGui::GetContentRegionAvail().y - 170));
  SegmentsTable(c);
}

void HistogramTab(const ProfilePanelCache& c) {
  const pf::LatencyHistogram& h = c.view.histogram;
  if (!h.why_empty.empty()) return Reason("No histogram", h.why_empty);
  ImGui::TextDisabled("Whole-layer latency of each timed run (CUDA events), bins of %s us.%s",
                      h.edges.size() >= 2 ? ProfileUsText(h.edges[1] - h.edges[0]).c_str() : "-",
                      c.baseline ? " Right half of each bin, outlined: the baseline's runs." : "");
  if (h.below + h.above > 0)
    ImGui::TextDisabled("%zu runs below and %zu above the range drawn are counted in the edge bins.", h.below,
                        h.above);
  plots::HistogramPlot("##hist", c.hist, c.baseline ? &c.base_hist : nullptr, c.hist_markers,
                       {"layer latency (us)"}, std::max(260.0f, ImGui::GetContentRegionAvail().y - 10));
}

}  // namespace

ProfilePanelActions DrawProfilePanel(ProfilePanelState& s, bool can_profile, const std::string& status_line) {
  ProfilePanelActions a;
  RunList(s, &a, can_profile, status_line);
  UpdateProfilePanelCache(s);
  if (!s.cache) {
    if (!s.runs.empty()) Reason("No run selected", "click a run above to see its profile");
    return a;
  }
  ImGui::Separator();
  SummaryLine(s, *s.cache);
  const ProfilePanelCache& c = *s.cache;
  const int want = s.select_tab;
  s.select_tab = -1;
  auto tab = [want](const char* name, int i) {
    return ImGui::BeginTabItem(name, nullptr, want == i ? ImGuiTabItemFlags_SetSelected : 0);
  };
  if (ImGui::BeginTabBar("##profile_tabs")) {
    if (tab("Kernels", 0)) {
      KernelsTab(s, c);
      ImGui::EndTabItem();
    }
    if (tab("Timeline", 1)) {
      TimelineTab(s, c);
      ImGui::EndTabItem();
    }
    if (tab("Bars", 2)) {
      BarsTab(c);
      ImGui::EndTabItem();
    }
    if (tab("Roofline", 3)) {
      RooflineTab(c);
      ImGui::EndTabItem();
    }
    if (tab("Histogram", 4)) {
      HistogramTab(c);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  return a;
}

}  // namespace stof::app
