// CPU: the profile view's numbers (profiler/model/profile_stats.h) on hand-built profiles: kernel rows
// over two traced runs (medians, shares, DRAM bytes from auto ranges with a NaN counter, the
// launch configuration), sorting, the timeline (lanes, gaps, busy time, the colour key, the
// steady run), segment rows and kernel rows against a baseline that fused differently,
// roofline points and roofs, histogram bins shared by current and baseline (two close medians
// in different bins, a far outlier in the edge bin), empty input.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "profiler/model/profile_stats.h"

namespace sp = stof::profiler;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

sp::KernelRecord Kernel(const std::string& name, int run, uint64_t start_us, uint64_t end_us,
                        uint32_t stream = 7) {
  sp::KernelRecord k;
  k.name = name;
  k.mangled_name = name;
  k.run = run;
  k.start_ns = 1'000'000 + start_us * 1000;
  k.end_ns = 1'000'000 + end_us * 1000;
  k.stream_id = stream;
  return k;
}

sp::RangeRecord Range(int index, const std::string& kernel, double read, double write) {
  sp::RangeRecord r;
  r.index = index;
  r.name = std::to_string(index);
  r.kernel_name = kernel;
  r.metrics = {{sp::kDramReadMetric, read, "byte"}, {sp::kDramWriteMetric, write, "byte"}};
  return r;
}

// Two traced runs of A, B, C (stream 9), A: per-run sums A 20/20, B 20/18, C 8/6 us.
sp::ProfileResult ThreeKernels() {
  sp::ProfileResult r;
  r.availability.activity = true;
  r.availability.range = true;
  r.activity_runs = 2;
  r.kernels = {Kernel("void ns::A<1>(int)", 0, 0, 10), Kernel("B", 0, 10, 30),
               Kernel("C", 0, 12, 20, 9), Kernel("void ns::A<1>(int)", 0, 30, 40),
               Kernel("void ns::A<1>(int)", 1, 100, 112), Kernel("B", 1, 112, 130),
               Kernel("C", 1, 115, 121, 9), Kernel("void ns::A<1>(int)", 1, 130, 138)};
  r.ranges = {Range(0, "void ns::A<1>(int)", 100, 10), Range(1, "B", 1000, 500),
              Range(2, "C", kNaN, 7), Range(3, "void ns::A<1>(int)", 300, 30)};
  return r;
}

const sp::KernelRow& RowNamed(const sp::KernelTable& t, const std::string& name) {
  for (const sp::KernelRow& r : t.rows)
    if (r.name == name) return r;
  ADD_FAILURE() << "no row " << name;
  return t.rows.front();
}

std::vector<std::string> Names(const std::vector<sp::KernelRow>& rows) {
  std::vector<std::string> out;
  for (const sp::KernelRow& r : rows) out.push_back(r.short_name);
  return out;
}

sp::SegmentProfile Segment(int index, const std::string& ops, double latency, double read,
                           double write, double flops) {
  sp::SegmentProfile s;
  s.index = index;
  s.ops = ops;
  s.flops = flops;
  s.profile.summary.latency_us = latency;
  s.profile.summary.kernels_per_run = 2;
  if (!std::isnan(read)) s.profile.summary.dram_bytes_read = read;
  if (!std::isnan(write)) s.profile.summary.dram_bytes_write = write;
  return s;
}

}  // namespace

TEST(ProfileStatsKernels, RowsOverTwoRuns) {
  const sp::KernelTable t = sp::ComputeKernelTable(ThreeKernels());
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.runs, 2);
  EXPECT_EQ(Names(t.rows), (std::vector<std::string>{"A<1>", "B", "C"}));  // first launch order
  const sp::KernelRow& a = t.rows[0];
  EXPECT_DOUBLE_EQ(a.launches, 2);
  EXPECT_DOUBLE_EQ(a.total_us, 20);
  EXPECT_DOUBLE_EQ(a.mean_us, 10);
  EXPECT_DOUBLE_EQ(a.min_us, 8);
  EXPECT_DOUBLE_EQ(a.max_us, 12);
  const sp::KernelRow& b = t.rows[1];
  EXPECT_DOUBLE_EQ(b.launches, 1);
  EXPECT_DOUBLE_EQ(b.total_us, 19);  // median of 20 and 18
  EXPECT_DOUBLE_EQ(t.rows[2].total_us, 7);
  EXPECT_DOUBLE_EQ(t.kernel_time_us, 46);
  EXPECT_DOUBLE_EQ(a.share, 20.0 / 46);
  EXPECT_NEAR(a.share + b.share + t.rows[2].share, 1.0, 1e-12);
  // DRAM bytes: A's two ranges add up; C's NaN read is unknown, its write is known.
  EXPECT_TRUE(t.have_dram);
  EXPECT_EQ(a.dram_read, 400);
  EXPECT_EQ(a.dram_write, 40);
  EXPECT_EQ(b.dram_read, 1000);
  EXPECT_FALSE(t.rows[2].dram_read.has_value());
  EXPECT_EQ(t.rows[2].dram_write, 7);
}

TEST(ProfileStatsKernels, RecordsOutsideTracedRunsAreIgnored) {
  sp::ProfileResult r = ThreeKernels();
  r.kernels.push_back(Kernel("B", 2, 200, 900));   // run 2 of 2 traced: not counted
  r.kernels.push_back(Kernel("B", -1, 200, 900));
  const sp::KernelTable t = sp::ComputeKernelTable(r);
  EXPECT_DOUBLE_EQ(RowNamed(t, "B").max_us, 20);
  EXPECT_DOUBLE_EQ(RowNamed(t, "B").launches, 1);
}

TEST(ProfileStatsKernels, NoCountersSaysWhy) {
  sp::ProfileResult r = ThreeKernels();
  r.availability.range = false;
  r.availability.range_why_not = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  const sp::KernelTable t = sp::ComputeKernelTable(r);
  EXPECT_FALSE(t.have_dram);
  EXPECT_FALSE(t.rows[0].dram_read.has_value());
  EXPECT_NE(t.dram_why_not.find("INSUFFICIENT_PRIVILEGES"), std::string::npos);
}

TEST(ProfileStatsKernels, Sorting) {
  sp::KernelTable t = sp::ComputeKernelTable(ThreeKernels());
  sp::SortKernelRows(&t.rows, sp::KernelColumn::kTotal, false);
  EXPECT_EQ(Names(t.rows), (std::vector<std::string>{"A<1>", "B", "C"}));
  sp::SortKernelRows(&t.rows, sp::KernelColumn::kTotal, true);
  EXPECT_EQ(Names(t.rows), (std::vector<std::string>{"C", "B", "A<1>"}));
  sp::SortKernelRows(&t.rows, sp::KernelColumn::kDramRead, false);
  EXPECT_EQ(Names(t.rows), (std::vector<std::string>{"B", "A<1>", "C"}));  // unknown last
  sp::SortKernelRows(&t.rows, sp::KernelColumn::kDramRead, true);
  EXPECT_EQ(Names(t.rows), (std::vector<std::string>{"A<1>", "B", "C"}));  // unknown still last
  sp::SortKernelRows(&t.rows, sp::KernelColumn::kName, false);
  EXPECT_EQ(Names(t.rows), (std::vector<std::string>{"A<1>", "C", "B"}));  // "void ns::A" > "C"
  sp::SortKernelRows(&t.rows, sp::KernelColumn::kLaunches, false);
  EXPECT_EQ(Names(t.rows), (std::vector<std::string>{"A<1>", "B", "C"}));  // B = C: name order
}

TEST(ProfileStatsKernels, CompareWithBaseline) {
  sp::KernelTable cur = sp::ComputeKernelTable(ThreeKernels());
  sp::ProfileResult base_r = ThreeKernels();
  base_r.kernels.erase(base_r.kernels.begin() + 2);  // C of run 0
  for (sp::KernelRecord& k : base_r.kernels)
    if (k.name == "C") k.name = "D";                  // run 1's C becomes D
  base_r.ranges[2].kernel_name = "D";
  const sp::KernelTable base = sp::ComputeKernelTable(base_r);
  sp::CompareKernelRows(&cur, base);
  ASSERT_EQ(cur.rows.size(), 4u);
  EXPECT_EQ(cur.rows[0].match, sp::RowMatch::kBoth);
  EXPECT_DOUBLE_EQ(*cur.rows[0].d_total_us.abs, 0);
  EXPECT_DOUBLE_EQ(*cur.rows[0].d_total_us.pct, 0);
  const sp::KernelRow c = RowNamed(cur, "C");
  EXPECT_EQ(c.match, sp::RowMatch::kOnlyCurrent);
  EXPECT_DOUBLE_EQ(*c.d_total_us.abs, 7);   // the baseline spent 0 us in C
  EXPECT_FALSE(c.d_total_us.pct.has_value());
  const sp::KernelRow d = RowNamed(cur, "D");
  EXPECT_EQ(d.match, sp::RowMatch::kOnlyBaseline);
  EXPECT_DOUBLE_EQ(*d.d_total_us.base, 3);  // median of 0 (run 0) and 6 (run 1)
  EXPECT_DOUBLE_EQ(*d.d_total_us.pct, -100);
  EXPECT_EQ(d.d_dram_write.base, 7);
}

TEST(ProfileStatsKernels, ShortNames) {
  EXPECT_EQ(sp::ShortKernelName("void stof::kernels::(anonymous namespace)::GemmBias<128, 64>"
                                "(float const*, int)"),
            "GemmBias<128, 64>");
  EXPECT_EQ(sp::ShortKernelName("softmax_kernel"), "softmax_kernel");
  EXPECT_EQ(sp::ShortKernelName("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::"
                                "gemm::threadblock::MmaPipelined<128>>>(Params)"),
            "Kernel<...>");
  EXPECT_EQ(sp::ShortKernelName(""), "");
}

TEST(ProfileStatsTimeline, RunZeroInLanesByStream) {
  const sp::Timeline t = sp::ComputeTimeline(ThreeKernels(), 0);
  EXPECT_EQ(t.lanes, (std::vector<std::string>{"stream 7", "stream 9"}));
  ASSERT_EQ(t.spans.size(), 4u);
  EXPECT_DOUBLE_EQ(t.span_us, 40);
  EXPECT_EQ(t.spans[2].name, "C");
  EXPECT_EQ(t.spans[2].lane, 1);
  EXPECT_DOUBLE_EQ(t.spans[2].start_us, 12);
  EXPECT_DOUBLE_EQ(t.spans[2].end_us, 20);
  EXPECT_DOUBLE_EQ(t.spans[3].start_us, 30);
  EXPECT_NE(t.spans[0].detail.find("grid 0 x 0 x 0"), std::string::npos);
  EXPECT_FALSE(sp::ComputeTimeline(ThreeKernels(), 5).why_empty.empty());
}

// Run 0 (40 us, no gap: kernel C overlaps B) and run 1 (38 us); gaps are idle stretches of
// the run, busy time is the union of the kernels.
TEST(ProfileStatsTimeline, GapsBusyTimeKeysAndTheSteadyRun) {
  sp::ProfileResult r = ThreeKernels();
  // Run 0 with host work after its first kernel, as a process's first traced run has.
  r.kernels[1] = Kernel("B", 0, 900, 920);
  r.kernels[2] = Kernel("C", 0, 902, 910, 9);
  r.kernels[3] = Kernel("void ns::A<1>(int)", 0, 930, 940);
  const sp::Timeline t0 = sp::ComputeTimeline(r, 0);
  EXPECT_DOUBLE_EQ(t0.span_us, 940);
  ASSERT_EQ(t0.gaps.size(), 2u);
  EXPECT_DOUBLE_EQ(t0.gaps[0].start_us, 10);
  EXPECT_DOUBLE_EQ(t0.gaps[0].end_us, 900);
  EXPECT_DOUBLE_EQ(t0.gaps[1].start_us, 920);
  EXPECT_DOUBLE_EQ(t0.busy_us, 10 + 20 + 10);
  EXPECT_EQ(t0.keys, (std::vector<std::string>{"A<1>", "B", "C"}));
  EXPECT_EQ(t0.spans[3].key, 0);
  EXPECT_EQ(t0.runs, 2);
  EXPECT_EQ(t0.run_spans_us, (std::vector<double>{940, 38}));
  EXPECT_EQ(sp::SteadyTimelineRun(r), 1);
  const sp::Timeline t1 = sp::ComputeTimeline(r, 1);
  EXPECT_DOUBLE_EQ(t1.span_us, 38);
  EXPECT_TRUE(t1.gaps.empty());
  EXPECT_DOUBLE_EQ(t1.busy_us, 38);
  // The view shows the steady run unless asked for another.
  sp::LayerProfile p;
  p.layer = r;
  EXPECT_EQ(sp::ComputeProfileView(p, nullptr).timeline.run, 1);
  EXPECT_EQ(sp::ComputeProfileView(p, nullptr, nullptr, 0).timeline.run, 0);
}

TEST(ProfileStatsKernels, LaunchConfigurationAndVariation) {
  sp::ProfileResult r = ThreeKernels();
  for (sp::KernelRecord& k : r.kernels) {
    k.grid = {768, 1, 1};
    k.block = {128, 1, 1};
    k.registers_per_thread = 128;
    k.static_smem_bytes = 1024;
    k.dynamic_smem_bytes = 45056;
  }
  r.kernels[7].registers_per_thread = 96;  // A's last launch
  const sp::KernelTable t = sp::ComputeKernelTable(r);
  const sp::KernelRow& b = RowNamed(t, "B");
  EXPECT_EQ(b.grid, (std::array<int, 3>{768, 1, 1}));
  EXPECT_EQ(b.block, (std::array<int, 3>{128, 1, 1}));
  EXPECT_EQ(b.registers, 128);
  EXPECT_EQ(b.smem_bytes, 46080);
  EXPECT_FALSE(b.launch_varies);
  EXPECT_TRUE(RowNamed(t, "void ns::A<1>(int)").launch_varies);
}

TEST(ProfileStatsSegments, DeltasAgainstBaselineWithMissingSegment) {
  sp::LayerProfile cur, base;
  cur.segments = {Segment(0, "1", 10, 100, 50, 3000), Segment(1, "2-4", 20, 200, 100, 6000),
                  Segment(2, "5", 5, kNaN, kNaN, 0)};
  base.segments = {Segment(0, "1", 8, 120, 50, 3000), Segment(1, "2-3", 15, 1, 1, 1),
                   Segment(2, "4", 9, 1, 1, 1), Segment(3, "5", 5, 10, 10, 0)};
  const std::vector<sp::SegmentRow> rows = sp::ComputeSegmentRows(cur, &base);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].match, sp::RowMatch::kBoth);
  EXPECT_DOUBLE_EQ(*rows[0].d_latency_us.abs, 2);
  EXPECT_DOUBLE_EQ(*rows[0].d_latency_us.pct, 25);
  EXPECT_DOUBLE_EQ(*rows[0].d_dram_read.abs, -20);
  EXPECT_DOUBLE_EQ(*rows[0].intensity, 3000.0 / 150);
  EXPECT_DOUBLE_EQ(*rows[0].flops_per_s, 3000 / 10e-6);
  EXPECT_EQ(rows[1].match, sp::RowMatch::kOnlyCurrent);
  EXPECT_FALSE(rows[1].d_latency_us.base.has_value());
  // "5": no counters now, so no DRAM delta, but the latency compares; no FLOPs, no intensity.
  EXPECT_EQ(rows[2].match, sp::RowMatch::kBoth);
  EXPECT_DOUBLE_EQ(*rows[2].d_latency_us.abs, 0);
  EXPECT_FALSE(rows[2].d_dram_read.abs.has_value());
  EXPECT_EQ(rows[2].d_dram_read.base, 10);
  EXPECT_FALSE(rows[2].intensity.has_value());
  EXPECT_EQ(rows[3].ops, "2-3");
  EXPECT_EQ(rows[3].match, sp::RowMatch::kOnlyBaseline);
  EXPECT_EQ(rows[3].index, -1);
  EXPECT_EQ(rows[3].d_latency_us.base, 15);
  EXPECT_FALSE(rows[3].latency_us.has_value());
  EXPECT_EQ(rows[4].ops, "4");
  // Without a baseline nothing is matched.
  EXPECT_EQ(sp::ComputeSegmentRows(cur, nullptr)[0].match, sp::RowMatch::kNoBaseline);
}

TEST(ProfileStatsSegments, Roofline) {
  sp::LayerProfile cur, base;
  cur.peak_flops_per_s = 989e12;
  cur.peak_dram_bytes_per_s = 3.35e12;
  cur.segments = {Segment(0, "1", 10, 100, 50, 3000), Segment(1, "2", 20, kNaN, 100, 6000),
                  Segment(2, "3", 5, 10, 10, 0)};
  base.segments = {Segment(0, "1", 8, 100, 100, 3000)};
  const sp::Roofline r = sp::ComputeRoofline(cur, &base);
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.skipped, 2);
  EXPECT_DOUBLE_EQ(r.points[0].intensity, 20);
  EXPECT_DOUBLE_EQ(r.points[0].flops_per_s, 3e8);
  ASSERT_EQ(r.base_points.size(), 1u);
  EXPECT_DOUBLE_EQ(r.base_points[0].intensity, 15);
  EXPECT_TRUE(r.why_empty.empty());
  EXPECT_DOUBLE_EQ(r.peak_flops_per_s, 989e12);
  // The caller's device peaks replace the profile's record (one peak per device everywhere).
  cur.device_name = "NVIDIA H100 80GB HBM3";
  const sp::DevicePeaks h100{"H100-SXM-80GB", 989.4e12, 3.35e12};
  const sp::Roofline d = sp::ComputeRoofline(cur, &base, &h100);
  EXPECT_DOUBLE_EQ(d.peak_flops_per_s, 989.4e12);
  EXPECT_EQ(d.peaks_from, "H100-SXM-80GB");
  EXPECT_EQ(sp::ComputeRoofline(cur, &base).peaks_from, "NVIDIA H100 80GB HBM3");
  cur.segments.erase(cur.segments.begin());
  EXPECT_FALSE(sp::ComputeRoofline(cur, nullptr).why_empty.empty());
}

TEST(ProfileStatsHistogram, SharedBinsAndCounts) {
  const std::vector<double> cur = {1, 2, 2, 3, kNaN};
  const std::vector<double> base = {3, 5, INFINITY};
  const sp::LatencyHistogram h = sp::ComputeLatencyHistogram(cur, &base, 4);
  EXPECT_EQ(h.edges, (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(h.counts, (std::vector<double>{1, 2, 1, 0}));
  EXPECT_EQ(h.base_counts, (std::vector<double>{0, 0, 1, 1}));  // the maximum in the last bin
  EXPECT_EQ(h.samples, 4u);
  EXPECT_EQ(h.base_samples, 2u);
  EXPECT_EQ(h.median_us, 2);
  EXPECT_EQ(h.base_median_us, 4);
}

TEST(ProfileStatsHistogram, CountsSumToSamples) {
  std::vector<double> cur, base;
  for (int i = 0; i < 200; ++i) cur.push_back(40 + std::sin(i) * 7 + (i % 13));
  for (int i = 0; i < 50; ++i) base.push_back(45 + (i % 7) * 3.5);
  EXPECT_EQ(sp::ComputeLatencyHistogram(cur, nullptr).edges.size(), 16u);  // ceil(sqrt(200)) = 15 bins
  const sp::LatencyHistogram h = sp::ComputeLatencyHistogram(cur, &base);
  EXPECT_DOUBLE_EQ(std::accumulate(h.counts.begin(), h.counts.end(), 0.0), 200);
  EXPECT_DOUBLE_EQ(std::accumulate(h.base_counts.begin(), h.base_counts.end(), 0.0), 50);
  EXPECT_DOUBLE_EQ(h.edges.front(), std::min(*std::min_element(cur.begin(), cur.end()),
                                             *std::min_element(base.begin(), base.end())));
}

int BinOf(const sp::LatencyHistogram& h, double x) {
  for (size_t i = 0; i + 1 < h.edges.size(); ++i)
    if (x >= h.edges[i] && x < h.edges[i + 1]) return static_cast<int>(i);
  return static_cast<int>(h.edges.size()) - 2;
}

// The shipped H100 profiles' case: 20 runs each, one slow outlier, medians 2.8 % apart; with
// sqrt-rule bins (13 us wide) both medians shared a bin.
TEST(ProfileStatsHistogram, MediansOnePercentApartFallInDifferentBins) {
  std::vector<double> cur, base;
  for (int i = 0; i < 19; ++i) {
    cur.push_back(150 + 0.4 * i);   // median 153.6
    base.push_back(151.5 + 0.4 * i);  // median 155.1, 1 % above
  }
  cur.push_back(215.9);
  base.push_back(202.0);
  const sp::LatencyHistogram h = sp::ComputeLatencyHistogram(cur, &base);
  ASSERT_TRUE(h.median_us && h.base_median_us);
  EXPECT_NEAR(*h.base_median_us / *h.median_us, 1.01, 0.001);
  EXPECT_NE(BinOf(h, *h.median_us), BinOf(h, *h.base_median_us));
  EXPECT_LE(h.edges[1] - h.edges[0], (*h.base_median_us - *h.median_us) / 2 + 1e-9);
  EXPECT_LE(h.counts.size(), static_cast<size_t>(sp::kMaxHistogramBins));
  EXPECT_EQ(h.below + h.above, 0u);  // 66 us at 0.75 us per bin fits in the bin limit
  EXPECT_DOUBLE_EQ(std::accumulate(h.counts.begin(), h.counts.end(), 0.0), 20);
  EXPECT_DOUBLE_EQ(std::accumulate(h.base_counts.begin(), h.base_counts.end(), 0.0), 20);
}

// A far outlier would need more bins than allowed: the range is cut around the medians and
// the outlier is counted in the last bin (and reported).
TEST(ProfileStatsHistogram, FarOutlierGoesToTheEdgeBin) {
  std::vector<double> cur = {100, 100.2, 100.4, 100.6, 5000}, base = {101, 101.2, 101.4, 101.6};
  const sp::LatencyHistogram h = sp::ComputeLatencyHistogram(cur, &base);
  EXPECT_EQ(h.counts.size(), static_cast<size_t>(sp::kMaxHistogramBins));
  EXPECT_EQ(h.above, 1u);
  EXPECT_EQ(h.below, 0u);
  EXPECT_DOUBLE_EQ(h.counts.back(), 1);
  EXPECT_NE(BinOf(h, *h.median_us), BinOf(h, *h.base_median_us));
  EXPECT_DOUBLE_EQ(std::accumulate(h.counts.begin(), h.counts.end(), 0.0), 5);
}

TEST(ProfileStatsHistogram, SingleValueAndEmpty) {
  const sp::LatencyHistogram one = sp::ComputeLatencyHistogram({7, 7, 7}, nullptr, 5);
  EXPECT_DOUBLE_EQ(one.edges.front(), 6.5);
  EXPECT_DOUBLE_EQ(one.edges.back(), 7.5);
  EXPECT_DOUBLE_EQ(one.counts[2], 3);
  EXPECT_TRUE(one.base_counts.empty());
  const sp::LatencyHistogram none = sp::ComputeLatencyHistogram({kNaN}, nullptr);
  EXPECT_TRUE(none.edges.empty());
  EXPECT_FALSE(none.why_empty.empty());
  EXPECT_FALSE(none.median_us.has_value());
}

TEST(ProfileStatsDelta, Cases) {
  const sp::Delta d = sp::MakeDelta(12.0, 8.0);
  EXPECT_DOUBLE_EQ(*d.abs, 4);
  EXPECT_DOUBLE_EQ(*d.pct, 50);
  EXPECT_FALSE(sp::MakeDelta(3.0, 0.0).pct.has_value());
  EXPECT_TRUE(sp::MakeDelta(3.0, 0.0).abs.has_value());
  EXPECT_FALSE(sp::MakeDelta(kNaN, 1.0).abs.has_value());
  EXPECT_FALSE(sp::MakeDelta(1.0, std::nullopt).base.has_value());
}

TEST(ProfileStatsView, EmptyProfileSaysWhyEverywhere) {
  sp::LayerProfile empty;
  empty.layer.availability.activity_why_not = "no usable GPU";
  const sp::ProfileView v = sp::ComputeProfileView(empty, &empty);
  EXPECT_TRUE(v.kernels.rows.empty());
  EXPECT_NE(v.kernels.why_empty.find("no usable GPU"), std::string::npos);
  EXPECT_FALSE(v.timeline.why_empty.empty());
  EXPECT_FALSE(v.segments_why_empty.empty());
  EXPECT_FALSE(v.roofline.why_empty.empty());
  EXPECT_FALSE(v.histogram.why_empty.empty());
  EXPECT_TRUE(v.has_baseline);
}

TEST(ProfileStatsView, LayerKernelsComparedWithBaseline) {
  sp::LayerProfile cur, base;
  cur.layer = ThreeKernels();
  base.layer = ThreeKernels();
  base.layer.kernels.pop_back();  // run 1 lost its last A: 12 us instead of 20
  const sp::ProfileView v = sp::ComputeProfileView(cur, &base);
  EXPECT_DOUBLE_EQ(*v.kernels.rows[0].d_total_us.base, 16);  // median of 20 and 12
  EXPECT_DOUBLE_EQ(*v.kernels.rows[0].d_total_us.pct, 25);
  // Each timeline shows its profile's steady (shortest) run: the baseline's run 1 is now
  // shorter, with its three kernels.
  EXPECT_EQ(v.base_timeline.run, 1);
  EXPECT_EQ(v.base_timeline.spans.size(), 3u);
  EXPECT_EQ(v.timeline.run, 1);
}
