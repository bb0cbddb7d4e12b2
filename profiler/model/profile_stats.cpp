// The profile view's numbers (profile_stats.h): pure arithmetic over ProfileResult and
// LayerProfile, run once per input change by the studio's profile panel.
#include "profiler/model/profile_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace stof::profiler {

namespace {

bool Finite(std::optional<double> v) { return v && std::isfinite(*v); }

// The sum over the auto ranges named `kernel`; unknown when any of them lacks the metric.
std::optional<double> KernelCounter(const ProfileResult& r, const std::string& kernel,
                                    const char* metric) {
  std::optional<double> sum;
  for (const RangeRecord& range : r.ranges) {
    if (range.kernel_name != kernel) continue;
    const std::optional<double> v = range.Find(metric);  // NaN reads as absent
    if (!v) return std::nullopt;
    sum = sum.value_or(0) + *v;
  }
  return sum;
}

std::string WithReason(std::string what, const std::string& why) {
  if (!why.empty()) {
    what += ": ";
    what += why;
  }
  return what;
}

}  // namespace

Delta MakeDelta(std::optional<double> current, std::optional<double> base) {
  Delta d;
  if (!Finite(base)) return d;
  d.base = base;
  if (!Finite(current)) return d;
  d.abs = *current - *base;
  if (*base != 0) d.pct = 100.0 * *d.abs / *base;
  return d;
}

const char* RowMatchName(RowMatch m) {
  switch (m) {
    case RowMatch::kBoth: return "both";
    case RowMatch::kOnlyCurrent: return "only current";
    case RowMatch::kOnlyBaseline: return "only baseline";
    case RowMatch::kNoBaseline: break;
  }
  return "";
}

std::string ShortKernelName(const std::string& name) {
  std::string s = name;
  for (size_t at; (at = s.find("(anonymous namespace)")) != std::string::npos;)
    s.replace(at, 21, "anon");
  // Cut the argument list: the first '(' outside template brackets.
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == '(' && depth == 0 && i > 0) {
      s.resize(i);
      break;
    }
  }
  // Drop the return type and the namespaces: the last ' ' or "::" outside template brackets.
  size_t start = 0;
  depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (depth == 0 && s[i] == ' ') start = i + 1;
    else if (depth == 0 && s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':') start = i + 2;
  }
  s = s.substr(start);
  // Long template argument lists (CUTLASS) say little in a label; the table keeps the name.
  if (s.size() > 40) {
    if (size_t lt = s.find('<'); lt != std::string::npos && lt > 0) s = s.substr(0, lt) + "<...>";
  }
  return s.empty() ? name : s;
}

KernelTable ComputeKernelTable(const ProfileResult& r) {
  KernelTable t;
  int runs = r.activity_runs;
  if (runs <= 0)
    for (const KernelRecord& k : r.kernels) runs = std::max(runs, k.run + 1);
  t.runs = runs;
  // Order of first launch: by (run, start), the order AssignRuns leaves, made sure of here.
  std::vector<const KernelRecord*> order;
  for (const KernelRecord& k : r.kernels)
    if (k.run >= 0 && k.run < runs) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(), [](const KernelRecord* a, const KernelRecord* b) {
    return a->run != b->run ? a->run < b->run : a->start_ns < b->start_ns;
  });
  if (order.empty()) {
    t.why_empty = WithReason(r.kernels.empty() ? "no traced kernels in this profile"
                                               : "no traced kernel lies in a traced run",
                             r.availability.activity ? "" : r.availability.activity_why_not);
    return t;
  }
  struct Acc {
    std::vector<double> per_run;
    int count = 0;
    double sum = 0, min = 0, max = 0;
  };
  std::map<std::string, size_t> index;
  std::vector<Acc> acc;
  for (const KernelRecord* k : order) {
    auto [it, fresh] = index.emplace(k->name, t.rows.size());
    const int64_t smem = k->static_smem_bytes + k->dynamic_smem_bytes;
    if (fresh) {
      KernelRow row;
      row.name = k->name;
      row.short_name = ShortKernelName(k->name);
      row.grid = k->grid;
      row.block = k->block;
      row.registers = k->registers_per_thread;
      row.smem_bytes = smem;
      t.rows.push_back(std::move(row));
      acc.push_back(Acc{std::vector<double>(static_cast<size_t>(runs), 0.0), 0, 0, 0, 0});
    } else {
      KernelRow& row = t.rows[it->second];
      row.launch_varies = row.launch_varies || row.grid != k->grid || row.block != k->block ||
                          row.registers != k->registers_per_thread || row.smem_bytes != smem;
    }
    Acc& a = acc[it->second];
    const double us = k->DurationUs();
    a.per_run[static_cast<size_t>(k->run)] += us;
    a.min = a.count == 0 ? us : std::min(a.min, us);
    a.max = a.count == 0 ? us : std::max(a.max, us);
    a.sum += us;
    ++a.count;
  }
  const bool counters = r.availability.range;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    KernelRow& row = t.rows[i];
    const Acc& a = acc[i];
    row.launches = static_cast<double>(a.count) / runs;
    row.total_us = Median(a.per_run);
    row.mean_us = a.sum / a.count;
    row.min_us = a.min;
    row.max_us = a.max;
    if (counters) {
      row.dram_read = KernelCounter(r, row.name, kDramReadMetric);
      row.dram_write = KernelCounter(r, row.name, kDramWriteMetric);
    }
    t.have_dram = t.have_dram || row.dram_read || row.dram_write;
    t.kernel_time_us += row.total_us;
  }
  for (KernelRow& row : t.rows) row.share = t.kernel_time_us > 0 ? row.total_us / t.kernel_time_us : 0;
  if (!t.have_dram) {
    if (!counters) t.dram_why_not = WithReason("no counters", r.availability.range_why_not);
    else if (r.ranges.empty()) t.dram_why_not = "the counter pass recorded no range";
    else t.dram_why_not = "no counter range is matched to a kernel, or DRAM counters are NaN";
  }
  return t;
}

void SortKernelRows(std::vector<KernelRow>* rows, KernelColumn column, bool ascending) {
  std::stable_sort(rows->begin(), rows->end(),
                   [](const KernelRow& a, const KernelRow& b) { return a.name < b.name; });
  if (column == KernelColumn::kName) {
    if (!ascending) std::reverse(rows->begin(), rows->end());
    return;
  }
  auto key = [column](const KernelRow& r) -> std::optional<double> {
    switch (column) {
      case KernelColumn::kLaunches: return r.launches;
      case KernelColumn::kTotal: return r.total_us;
      case KernelColumn::kMean: return r.mean_us;
      case KernelColumn::kMin: return r.min_us;
      case KernelColumn::kMax: return r.max_us;
      case KernelColumn::kShare: return r.share;
      case KernelColumn::kDramRead: return r.dram_read;
      case KernelColumn::kDramWrite: return r.dram_write;
      case KernelColumn::kDeltaTotal: return r.d_total_us.abs;
      case KernelColumn::kDeltaTotalPct: return r.d_total_us.pct;
      case KernelColumn::kName: break;
    }
    return std::nullopt;
  };
  std::stable_sort(rows->begin(), rows->end(), [&](const KernelRow& a, const KernelRow& b) {
    const std::optional<double> ka = key(a), kb = key(b);
    if (!Finite(ka) || !Finite(kb)) return Finite(ka) && !Finite(kb);  // unknown last
    return ascending ? *ka < *kb : *ka > *kb;
  });
}

void CompareKernelRows(KernelTable* current, const KernelTable& base) {
  std::map<std::string, const KernelRow*> by_name;
  for (const KernelRow& row : base.rows) by_name.emplace(row.name, &row);
  // A kernel the baseline did not launch took 0 us there; bytes are 0 only if it had counters.
  const std::optional<double> no_bytes = base.have_dram ? std::optional<double>(0) : std::nullopt;
  for (KernelRow& row : current->rows) {
    auto it = by_name.find(row.name);
    const KernelRow* b = it == by_name.end() ? nullptr : it->second;
    row.match = b ? RowMatch::kBoth : RowMatch::kOnlyCurrent;
    row.d_total_us = MakeDelta(row.total_us, b ? b->total_us : 0.0);
    row.d_dram_read = MakeDelta(row.dram_read, b ? b->dram_read : no_bytes);
    row.d_dram_write = MakeDelta(row.dram_write, b ? b->dram_write : no_bytes);
    if (b) by_name.erase(it);
  }
  const std::optional<double> zero_bytes =
      current->have_dram ? std::optional<double>(0) : std::nullopt;
  for (const KernelRow& b : base.rows) {
    if (!by_name.count(b.name)) continue;
    KernelRow row;
    row.name = b.name;
    row.short_name = b.short_name;
    row.match = RowMatch::kOnlyBaseline;
    row.d_total_us = MakeDelta(0.0, b.total_us);
    row.d_dram_read = MakeDelta(zero_bytes, b.dram_read);
    row.d_dram_write = MakeDelta(zero_bytes, b.dram_write);
    current->rows.push_back(std::move(row));
  }
}

namespace {

// Per traced run: the span from its first kernel start to its last end (0 without kernels).
std::vector<double> RunSpansUs(const ProfileResult& r, int runs) {
  std::vector<uint64_t> first(static_cast<size_t>(runs), UINT64_MAX), last(static_cast<size_t>(runs), 0);
  for (const KernelRecord& k : r.kernels) {
    if (k.run < 0 || k.run >= runs || k.end_ns < k.start_ns) continue;
    first[static_cast<size_t>(k.run)] = std::min(first[static_cast<size_t>(k.run)], k.start_ns);
    last[static_cast<size_t>(k.run)] = std::max(last[static_cast<size_t>(k.run)], k.end_ns);
  }
  std::vector<double> out;
  for (size_t i = 0; i < first.size(); ++i)
    out.push_back(first[i] == UINT64_MAX ? 0.0 : static_cast<double>(last[i] - first[i]) * 1e-3);
  return out;
}

int TracedRuns(const ProfileResult& r) {
  int runs = r.activity_runs;
  if (runs <= 0)
    for (const KernelRecord& k : r.kernels) runs = std::max(runs, k.run + 1);
  return runs;
}

std::string LaunchText(const KernelRecord& k) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "grid %d x %d x %d, block %d x %d x %d\n%d registers/thread, "
                "shared memory %lld B static + %lld B dynamic",
                k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                k.registers_per_thread, static_cast<long long>(k.static_smem_bytes),
                static_cast<long long>(k.dynamic_smem_bytes));
  return buf;
}

}  // namespace

int SteadyTimelineRun(const ProfileResult& r) {
  const std::vector<double> spans = RunSpansUs(r, TracedRuns(r));
  int best = 0;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i] > 0 && (spans[static_cast<size_t>(best)] <= 0 || spans[i] <= spans[static_cast<size_t>(best)]))
      best = static_cast<int>(i);
  return best;
}

Timeline ComputeTimeline(const ProfileResult& r, int run) {
  Timeline t;
  t.run = run;
  t.runs = TracedRuns(r);
  t.run_spans_us = RunSpansUs(r, t.runs);
  std::vector<const KernelRecord*> ks;
  for (const KernelRecord& k : r.kernels)
    if (k.run == run && k.end_ns >= k.start_ns) ks.push_back(&k);
  if (ks.empty()) {
    std::string what = "no traced kernels in run ";
    what += std::to_string(run);
    t.why_empty = WithReason(what, r.availability.activity ? "" : r.availability.activity_why_not);
    return t;
  }
  std::stable_sort(ks.begin(), ks.end(), [](const KernelRecord* a, const KernelRecord* b) {
    return a->start_ns < b->start_ns;
  });
  std::map<uint32_t, int> lane_of;
  for (const KernelRecord* k : ks) lane_of.emplace(k->stream_id, 0);
  for (auto& [stream, lane] : lane_of) {
    lane = static_cast<int>(t.lanes.size());
    std::string name = "stream ";
    name += std::to_string(stream);
    t.lanes.push_back(std::move(name));
  }
  std::map<std::string, int> key_of;
  const uint64_t t0 = ks.front()->start_ns;
  uint64_t last = t0;  // the latest end so far: a start after it opens a gap
  for (const KernelRecord* k : ks) {
    if (k->start_ns > last)
      t.gaps.push_back({static_cast<double>(last - t0) * 1e-3, static_cast<double>(k->start_ns - t0) * 1e-3});
    TimelineSpan s;
    s.lane = lane_of[k->stream_id];
    s.start_us = static_cast<double>(k->start_ns - t0) * 1e-3;
    s.end_us = static_cast<double>(k->end_ns - t0) * 1e-3;
    s.name = ShortKernelName(k->name);
    auto [it, fresh] = key_of.emplace(s.name, static_cast<int>(t.keys.size()));
    if (fresh) t.keys.push_back(s.name);
    s.key = it->second;
    s.detail = k->name;
    s.detail += '\n';
    s.detail += LaunchText(*k);
    last = std::max(last, k->end_ns);
    t.spans.push_back(std::move(s));
  }
  t.span_us = static_cast<double>(last - t0) * 1e-3;
  double idle = 0;
  for (const TimelineGap& g : t.gaps) idle += g.end_us - g.start_us;
  t.busy_us = t.span_us - idle;
  return t;
}

namespace {

SegmentRow RowOf(const SegmentProfile& seg) {
  const ProfileSummary& s = seg.profile.summary;
  SegmentRow row;
  row.index = seg.index;
  row.ops = seg.ops;
  row.tmpl = seg.tmpl;
  if (Finite(s.latency_us) && *s.latency_us > 0) row.latency_us = s.latency_us;
  row.kernels = s.kernels_per_run;
  if (Finite(s.dram_bytes_read)) row.dram_read = s.dram_bytes_read;
  if (Finite(s.dram_bytes_write)) row.dram_write = s.dram_bytes_write;
  if (std::isfinite(seg.flops) && seg.flops > 0) row.flops = seg.flops;
  if (row.flops && row.latency_us) row.flops_per_s = *row.flops / (*row.latency_us * 1e-6);
  if (row.flops && row.dram_read && row.dram_write && *row.dram_read + *row.dram_write > 0)
    row.intensity = *row.flops / (*row.dram_read + *row.dram_write);
  return row;
}

}  // namespace

std::vector<SegmentRow> ComputeSegmentRows(const LayerProfile& current, const LayerProfile* base) {
  std::vector<SegmentRow> rows;
  std::vector<bool> used(base ? base->segments.size() : 0, false);
  for (const SegmentProfile& seg : current.segments) {
    SegmentRow row = RowOf(seg);
    if (base) {
      const SegmentProfile* b = nullptr;
      for (size_t i = 0; i < base->segments.size() && !b; ++i)
        if (!used[i] && base->segments[i].ops == seg.ops) {
          used[i] = true;
          b = &base->segments[i];
        }
      row.match = b ? RowMatch::kBoth : RowMatch::kOnlyCurrent;
      if (b) {
        const SegmentRow br = RowOf(*b);
        row.d_latency_us = MakeDelta(row.latency_us, br.latency_us);
        row.d_dram_read = MakeDelta(row.dram_read, br.dram_read);
        row.d_dram_write = MakeDelta(row.dram_write, br.dram_write);
      }
    }
    rows.push_back(std::move(row));
  }
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i]) continue;
    // The baseline fused these ops differently: its values go in the base side only.
    const SegmentRow br = RowOf(base->segments[i]);
    SegmentRow row;
    row.ops = br.ops;
    row.tmpl = br.tmpl;
    row.match = RowMatch::kOnlyBaseline;
    row.d_latency_us = MakeDelta(std::nullopt, br.latency_us);
    row.d_dram_read = MakeDelta(std::nullopt, br.dram_read);
    row.d_dram_write = MakeDelta(std::nullopt, br.dram_write);
    rows.push_back(std::move(row));
  }
  return rows;
}

Roofline ComputeRoofline(const LayerProfile& current, const LayerProfile* base,
                         const DevicePeaks* peaks) {
  Roofline r;
  r.peak_flops_per_s = peaks ? peaks->flops_per_s : current.peak_flops_per_s;
  r.peak_bytes_per_s = peaks ? peaks->bytes_per_s : current.peak_dram_bytes_per_s;
  r.peaks_from = peaks ? peaks->name : current.device_name;
  auto points = [](const LayerProfile& p, std::vector<RoofPoint>* out) {
    int skipped = 0;
    for (const SegmentProfile& seg : p.segments) {
      const SegmentRow row = RowOf(seg);
      if (row.intensity && row.flops_per_s) out->push_back({row.ops, *row.intensity, *row.flops_per_s});
      else ++skipped;
    }
    return skipped;
  };
  r.skipped = points(current, &r.points);
  if (base) points(*base, &r.base_points);
  if (current.segments.empty()) {
    r.why_empty = "no per-segment measurements in this profile";
  } else if (r.points.empty()) {
    r.why_empty = "no segment has FLOPs, DRAM counters and a latency";
    const std::string& why = current.segments.front().profile.availability.range_why_not;
    if (!why.empty()) {
      r.why_empty += " (counters: ";
      r.why_empty += why;
      r.why_empty += ")";
    }
  }
  return r;
}

LatencyHistogram ComputeLatencyHistogram(const std::vector<double>& current,
                                         const std::vector<double>* base, int bins) {
  LatencyHistogram h;
  auto finite = [](const std::vector<double>& v) {
    std::vector<double> out;
    for (double x : v)
      if (std::isfinite(x)) out.push_back(x);
    return out;
  };
  const std::vector<double> cur = finite(current);
  const std::vector<double> bas = base ? finite(*base) : std::vector<double>();
  h.samples = cur.size();
  h.base_samples = bas.size();
  if (!cur.empty()) h.median_us = Median(cur);
  if (!bas.empty()) h.base_median_us = Median(bas);
  if (cur.empty() && bas.empty()) {
    h.why_empty = "no latency samples in this profile";
    return h;
  }
  double lo = INFINITY, hi = -INFINITY;
  for (const std::vector<double>* v : {&cur, &bas})
    for (double x : *v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  if (hi <= lo) {
    lo -= 0.5;
    hi += 0.5;
  }
  if (bins <= 0) {
    const double n = static_cast<double>(std::max(cur.size(), bas.size()));
    bins = std::clamp(static_cast<int>(std::ceil(std::sqrt(n))), 5, 40);
    // Two medians must land in different bins: bins at most half their distance wide.
    const double gap = h.median_us && h.base_median_us ? std::abs(*h.median_us - *h.base_median_us) : 0;
    if (gap > 0 && (hi - lo) / bins > gap / 2) {
      const double width = gap / 2;
      const double need = std::ceil((hi - lo) / width);
      if (need <= kMaxHistogramBins) {
        bins = static_cast<int>(need);
        hi = lo + bins * width;
      } else {  // cut the range around the medians; the rest goes to the edge bins
        bins = kMaxHistogramBins;
        const double mid = (*h.median_us + *h.base_median_us) / 2;
        const double half = bins * width / 2;
        const double shift = std::clamp(mid - half, lo, hi - 2 * half);
        lo = shift;
        hi = shift + 2 * half;
      }
    }
  }
  h.edges.resize(static_cast<size_t>(bins) + 1);
  for (int i = 0; i <= bins; ++i) h.edges[static_cast<size_t>(i)] = lo + (hi - lo) * i / bins;
  auto count = [&](const std::vector<double>& v) {
    std::vector<double> c(static_cast<size_t>(bins), 0.0);
    for (double x : v) {
      h.below += x < lo ? 1 : 0;
      h.above += x > hi ? 1 : 0;
      const int b = std::clamp(static_cast<int>(std::floor((x - lo) / (hi - lo) * bins)), 0, bins - 1);
      c[static_cast<size_t>(b)] += 1;
    }
    return c;
  };
  h.counts = count(cur);
  if (base) h.base_counts = count(bas);
  return h;
}

ProfileView ComputeProfileView(const LayerProfile& current, const LayerProfile* base,
                               const DevicePeaks* peaks, int timeline_run) {
  ProfileView v;
  v.has_baseline = base != nullptr;
  v.kernels = ComputeKernelTable(current.layer);
  if (base) CompareKernelRows(&v.kernels, ComputeKernelTable(base->layer));
  v.timeline = ComputeTimeline(current.layer,
                               timeline_run >= 0 ? timeline_run : SteadyTimelineRun(current.layer));
  if (base)
    v.base_timeline = ComputeTimeline(base->layer,
                                      timeline_run >= 0 ? timeline_run : SteadyTimelineRun(base->layer));
  v.segments = ComputeSegmentRows(current, base);
  if (current.segments.empty())
    v.segments_why_empty = "no per-segment measurements in this profile (the layer was "
                           "profiled as a whole)";
  v.roofline = ComputeRoofline(current, base, peaks);
  v.histogram = ComputeLatencyHistogram(current.layer.latency.samples_us,
                                        base ? &base->layer.latency.samples_us : nullptr);
  return v;
}

}  // namespace stof::profiler
