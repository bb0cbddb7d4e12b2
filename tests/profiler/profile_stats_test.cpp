// CPU: the profile view's numbers (profiler/model/profile_stats.h) on hand-built profiles: kernel rows
// over two traced runs (medians, shares, DRAM bytes from auto ranges with a NaN counter),
// sorting, the timeline of run 0, segment rows and kernel rows against a baseline that fused
// differently, roofline points, histogram bins shared by current and baseline, empty input.
#include <gtest/gtest.h>

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
  const sp::LatencyHistogram h = sp::ComputeLatencyHistogram(cur, &base);
  EXPECT_EQ(h.edges.size(), 16u);  // ceil(sqrt(200)) = 15 bins
  EXPECT_DOUBLE_EQ(std::accumulate(h.counts.begin(), h.counts.end(), 0.0), 200);
  EXPECT_DOUBLE_EQ(std::accumulate(h.base_counts.begin(), h.base_counts.end(), 0.0), 50);
  EXPECT_DOUBLE_EQ(h.edges.front(), std::min(*std::min_element(cur.begin(), cur.end()),
                                             *std::min_element(base.begin(), base.end())));
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
  EXPECT_EQ(v.base_timeline.spans.size(), 4u);
}
