// The numbers behind the studio's profile view, derived from a ProfileResult or a LayerProfile:
// per-kernel rows (launches, times, share, DRAM bytes from the auto-range counters), the kernel
// timeline of one traced run, per-segment rows with deltas against a baseline profile, roofline
// points and a latency histogram with bins shared by current and baseline. Pure and CUDA-free
// (no ImGui): the profile panel computes a ProfileView once when its inputs change and draws it
// every frame; the tests check the arithmetic here.
// Invariants: every time is in microseconds, bytes and FLOPs are doubles; a value that cannot
// be known (no counters, NaN counter, no latency) is std::nullopt, never 0; a view part with no
// data says why in its `why_empty`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/layer_profile.h"
#include "profiler/model/profile_result.h"

namespace stof::profiler {

inline constexpr const char* kDramReadMetric = "dram__bytes_read.sum";
inline constexpr const char* kDramWriteMetric = "dram__bytes_write.sum";

// A value of the current profile next to the baseline's: `abs` = current - base and
// `pct` = 100 * abs / base, set only when both sides are known (pct also needs base != 0).
struct Delta {
  std::optional<double> base, abs, pct;
};
Delta MakeDelta(std::optional<double> current, std::optional<double> base);

// Where a compared row comes from.
enum class RowMatch { kNoBaseline, kBoth, kOnlyCurrent, kOnlyBaseline };
const char* RowMatchName(RowMatch m);  // "", "both", "only current", "only baseline"

// ---- Kernels ----------------------------------------------------------------------------

struct KernelRow {
  std::string name;            // demangled, as CUPTI reported it
  std::string short_name;      // ShortKernelName(name), for plot labels
  double launches = 0;         // per run: launches in all traced runs / runs
  double total_us = 0;         // per run: median over the traced runs of this kernel's summed time
  double mean_us = 0;          // one launch: mean over every traced launch
  double min_us = 0, max_us = 0;  // one launch: shortest and longest traced launch
  double share = 0;            // total_us / the table's kernel_time_us, in [0, 1]
  std::optional<double> dram_read, dram_write;  // bytes per run (one counter pass)
  // The launch configuration of the first traced launch; `launch_varies` when a later launch
  // of the same kernel had another grid, block, register count or shared memory.
  std::array<int, 3> grid{0, 0, 0}, block{0, 0, 0};
  int registers = 0;               // per thread
  int64_t smem_bytes = 0;          // static + dynamic shared memory per block
  bool launch_varies = false;
  RowMatch match = RowMatch::kNoBaseline;
  Delta d_total_us, d_dram_read, d_dram_write;  // set by CompareKernelRows
};

struct KernelTable {
  std::vector<KernelRow> rows;    // first-launch order of run 0 (then of later runs)
  int runs = 0;                   // traced runs the rows are over
  double kernel_time_us = 0;      // sum of the rows' total_us (the share's denominator)
  bool have_dram = false;         // at least one row has DRAM bytes
  std::string why_empty;          // set when rows is empty
  std::string dram_why_not;       // set when !have_dram
};

// Rows of `r`'s traced kernels over runs = activity_runs (or, when that is 0, 1 + the largest
// run seen); records whose run lies outside [0, runs) are ignored. A kernel absent from some
// run counts 0 us for that run. DRAM bytes: the sum over the auto ranges named after the kernel; unknown
// when the range pass is unavailable or any of the kernel's ranges lacks a finite value.
KernelTable ComputeKernelTable(const ProfileResult& r);

enum class KernelColumn {
  kName, kLaunches, kTotal, kMean, kMin, kMax, kShare, kDramRead, kDramWrite,
  kDeltaTotal, kDeltaTotalPct
};
// Stable sort by one column; unknown values sort last either way; ties keep the name order.
void SortKernelRows(std::vector<KernelRow>* rows, KernelColumn column, bool ascending);

// Fills current rows' match and deltas against `base` by kernel name and appends the baseline's
// kernels the current table lacks (match kOnlyBaseline, current values 0 / unknown).
void CompareKernelRows(KernelTable* current, const KernelTable& base);

// "void stof::kernels::(anonymous namespace)::GemmBias<128, 64>(float const*, int)" ->
// "GemmBias<128, 64>": drops the return type, namespaces and the argument list.
std::string ShortKernelName(const std::string& name);

// ---- Timeline ---------------------------------------------------------------------------

struct TimelineSpan {
  int lane = 0;                 // index into Timeline::lanes
  double start_us = 0, end_us = 0;  // relative to the run's first kernel start
  std::string name;             // short kernel name
  std::string detail;           // full name, grid, block, registers, shared memory
  int key = 0;                  // index into Timeline::keys (one per distinct kernel)
};
// A stretch of the run in which no kernel ran (host work, launch latency, synchronisation).
struct TimelineGap {
  double start_us = 0, end_us = 0;
};
struct Timeline {
  std::vector<std::string> lanes;   // "stream 7", in stream id order
  std::vector<TimelineSpan> spans;  // in start order
  std::vector<std::string> keys;    // distinct short kernel names, in first-start order
  std::vector<TimelineGap> gaps;    // idle stretches between the run's first start and last end
  double span_us = 0;               // last end - first start
  double busy_us = 0;               // time some kernel ran (the union of the spans)
  int run = 0, runs = 0;            // the run shown, of how many traced
  std::vector<double> run_spans_us; // each traced run's span (first start to last end)
  std::string why_empty;
};
Timeline ComputeTimeline(const ProfileResult& r, int run = 0);
// The traced run a timeline shows by default: the one with the shortest span (ties: the
// later), as the first run of a process often carries one-time host work in its gaps.
// 0 when nothing was traced.
int SteadyTimelineRun(const ProfileResult& r);

// ---- Segments ---------------------------------------------------------------------------

struct SegmentRow {
  int index = -1;                 // in the current layer; -1 for a baseline-only row
  std::string ops, tmpl;          // tmpl "" = run op by op
  std::optional<double> latency_us;
  int kernels = 0;                // kernels per run
  std::optional<double> dram_read, dram_write, flops, flops_per_s, intensity;
  RowMatch match = RowMatch::kNoBaseline;
  Delta d_latency_us, d_dram_read, d_dram_write;
};
// Current segments in layer order, then (with a baseline) the baseline's segments whose ops
// label the current lacks. Intensity = flops / (DRAM read + write); FLOP/s = flops / latency.
std::vector<SegmentRow> ComputeSegmentRows(const LayerProfile& current, const LayerProfile* base);

// ---- Roofline and histogram ---------------------------------------------------------------

struct RoofPoint {
  std::string label;              // segment ops label
  double intensity = 0, flops_per_s = 0;
};
// The roofs: a device's dense fp16 tensor peak and DRAM bandwidth, with the device's name.
struct DevicePeaks {
  std::string name;
  double flops_per_s = 0, bytes_per_s = 0;
  bool operator==(const DevicePeaks&) const = default;
};
struct Roofline {
  double peak_flops_per_s = 0, peak_bytes_per_s = 0;
  std::string peaks_from;         // the device whose peaks are the roofs
  std::vector<RoofPoint> points, base_points;
  int skipped = 0;                // current segments without FLOPs, DRAM bytes or latency
  std::string why_empty;          // no point, or no roofs
};
// Roofs from `peaks` when given (the caller's device spec, so that every view shows one peak
// per device), else from the profile's own record.
Roofline ComputeRoofline(const LayerProfile& current, const LayerProfile* base,
                         const DevicePeaks* peaks = nullptr);

struct LatencyHistogram {
  std::vector<double> edges;      // bins + 1, shared by current and baseline
  std::vector<double> counts, base_counts;  // base_counts empty without a baseline
  size_t samples = 0, base_samples = 0;     // finite samples counted
  std::optional<double> median_us, base_median_us;
  size_t below = 0, above = 0;    // samples outside [edges.front(), edges.back()], counted in
                                  // the first / last bin (both sets together)
  std::string why_empty;
};
inline constexpr int kMaxHistogramBins = 120;
// Bins over [min, max] of both sample sets together (a single value gets a 1 us wide range
// around it); the maximum falls in the last bin. bins <= 0: ceil(sqrt(samples)) within
// [5, 40], narrowed so that bins are at most half the distance between the two medians (two
// medians 1 % apart fall in different bins); when that needs more than kMaxHistogramBins the
// range is cut around the medians and the samples outside it are counted in the edge bins
// (`below`, `above`). Non-finite samples are skipped.
LatencyHistogram ComputeLatencyHistogram(const std::vector<double>& current,
                                         const std::vector<double>* base, int bins = 0);

// ---- Everything the profile view shows ---------------------------------------------------

struct ProfileView {
  KernelTable kernels;            // of current.layer, compared with the baseline's layer
  Timeline timeline, base_timeline;
  std::vector<SegmentRow> segments;
  std::string segments_why_empty;
  Roofline roofline;
  LatencyHistogram histogram;
  bool has_baseline = false;
};
// `peaks`: the roofs (ComputeRoofline); `timeline_run` < 0: SteadyTimelineRun of each profile.
ProfileView ComputeProfileView(const LayerProfile& current, const LayerProfile* base,
                               const DevicePeaks* peaks = nullptr, int timeline_run = -1);

}  // namespace stof::profiler
