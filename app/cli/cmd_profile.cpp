// `stof profile copy|gemm` (mha: cmd_bench.cpp; layer, ladder: cmd_profile_layer.cpp): measures a built-in workload with the profiler (profiler/profiler.h)
// and prints latency, kernel records, counters with units, the summary against the device's
// floor and which parts were available; --json prints the stof-profile JSON
// (docs/profiler.md), --trace writes a Chrome trace for Perfetto.
//   copy: the vectorised copy kernel (kernels/util/copy_kernel.h), the DRAM-counter calibration;
//   gemm: cuBLAS fp16 GEMM, column-major, fp32 accumulation (kernels/gemm/cublas_gemm.h).
// A build without CUDA keeps the command and says it cannot measure (exit 1). Exit 0 only when
// the latency was measured and the workload's output checked out.
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>

#include "app/cli/cli_common.h"
#include "app/cli/profile_output.h"
#include "app/common/option_checks.h"
#include "engine/core/text_format.h"
#include "profiler/model/profile_export.h"
#include "profiler/profiler.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/device_query.h"
#include "kernels/gemm/cublas_gemm.h"
#include "kernels/util/copy_kernel.h"
#endif

namespace stof::app {

namespace {

#ifdef STOF_WITH_KERNELS
}  // namespace

// "a,b,default" -> names; "default" expands to the built-in list.
std::vector<std::string> SplitMetrics(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    const size_t b = word.find_first_not_of(" \t"), e = word.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    word = word.substr(b, e - b + 1);
    if (word == "default") {
      for (const std::string& d : profiler::DefaultMetricNames()) out.push_back(d);
    } else {
      out.push_back(word);
    }
  }
  return out;
}

namespace {

using engine::Fmt;

std::string OptFmt(const char* format, const std::optional<double>& v, double scale = 1) {
  return v && std::isfinite(*v) ? Fmt(format, *v * scale) : std::string("-");
}

std::string Dim3(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

}  // namespace

void PrintProfileHuman(const profiler::ProfileResult& r) {
  const profiler::ProfileSummary& s = r.summary;
  const profiler::MeasureOptions& o = r.options;
  std::printf("workload   %s\n", r.label.c_str());
  std::string chip = r.device.chip.empty() ? "" : r.device.chip + ", ";
  std::printf("device     %s (%ssm_%d%d)\n", r.device.name.empty() ? "?" : r.device.name.c_str(),
              chip.c_str(), r.device.cc_major, r.device.cc_minor);
  if (r.availability.events)
    std::printf("latency    %s us  median of %d runs, CUDA events (min %.2f, max %.2f) <- used\n",
                Fmt("%.2f", r.latency.median_us).c_str(), r.latency.runs, r.latency.min_us,
                r.latency.max_us);
  if (s.activity_latency_us)
    std::printf("activity   %s us  median GPU span of %d traced runs (%s %% vs events)\n",
                OptFmt("%.2f", s.activity_latency_us).c_str(), r.activity_runs,
                OptFmt("%+.2f", s.activity_vs_events, 100).c_str());
  if (s.dram_bytes)
    std::printf("DRAM       read %s MB, write %s MB (counters)%s\n",
                OptFmt("%.2f", s.dram_bytes_read, 1e-6).c_str(),
                OptFmt("%.2f", s.dram_bytes_write, 1e-6).c_str(),
                r.range_mode == "auto" ? ", summed over the kernels" : "");
  if (s.achieved_bytes_per_s)
    std::printf("bandwidth  %s GB/s (%s %% of the %s GB/s peak)\n",
                OptFmt("%.1f", s.achieved_bytes_per_s, 1e-9).c_str(),
                OptFmt("%.1f", s.bandwidth_fraction_of_peak, 100).c_str(),
                Fmt("%.1f", o.peak_dram_bytes_per_s * 1e-9).c_str());
  if (s.achieved_flops_per_s)
    std::printf("compute    %s TFLOP/s (%s %% of the %s TFLOP/s fp16 tensor peak)\n",
                OptFmt("%.1f", s.achieved_flops_per_s, 1e-12).c_str(),
                OptFmt("%.1f", s.flops_fraction_of_peak, 100).c_str(),
                Fmt("%.1f", o.peak_flops_per_s * 1e-12).c_str());
  if (s.floor_us)
    std::printf("floor      %s us (bytes from %s) -> %s x the floor\n",
                OptFmt("%.2f", s.floor_us).c_str(),
                s.floor_bytes_source.empty() ? "-" : s.floor_bytes_source.c_str(),
                OptFmt("%.3f", s.ratio_to_floor).c_str());
  if (r.overhead.measured)
    std::printf("overhead   tracing on: %.2f us vs %.2f us per run on the GPU (%+.2f %%), "
                "%.2f vs %.2f us on the host (%+.2f %%)\n",
                r.overhead.events_median_us_on, r.overhead.events_median_us_off,
                r.overhead.EventsPct(), r.overhead.wall_us_per_run_on,
                r.overhead.wall_us_per_run_off, r.overhead.WallPct());

  if (!r.kernels.empty()) {
    std::printf("\nkernels of traced run 0 (of %d)\n", r.activity_runs);
    std::printf("  %-10s %-14s %-12s %4s %12s %6s %10s  %s\n", "start(us)", "grid", "block",
                "regs", "smem s+d (B)", "stream", "dur(us)", "name");
    const uint64_t t0 = r.kernels.front().start_ns;
    for (const profiler::KernelRecord& k : r.kernels) {
      if (k.run != 0) continue;
      std::printf("  %-10.2f %-14s %-12s %4d %5lld+%-6lld %6u %10.2f  %s\n",
                  (k.start_ns - t0) * 1e-3, Dim3(k.grid).c_str(), Dim3(k.block).c_str(),
                  k.registers_per_thread, static_cast<long long>(k.static_smem_bytes),
                  static_cast<long long>(k.dynamic_smem_bytes), k.stream_id, k.DurationUs(),
                  k.name.c_str());
    }
  }
  if (!r.metrics.empty()) {
    std::printf("\ncounters (%s range, %s replay, %d pass%s)\n", r.range_mode.c_str(),
                r.replay_mode.c_str(), r.counter_passes, r.counter_passes == 1 ? "" : "es");
    for (const profiler::RangeRecord& rr : r.ranges) {
      std::printf("  range %s%s%s\n", rr.name.c_str(), rr.kernel_name.empty() ? "" : ": ",
                  rr.kernel_name.c_str());
      for (const profiler::MetricValue& v : rr.metrics)
        std::printf("    %-72s %18.6g %s\n", v.name.c_str(), v.value, v.unit.c_str());
    }
    for (const profiler::MetricInfo& m : r.metrics)
      if (!m.available)
        std::printf("  unavailable: %s: %s\n", m.name.c_str(), m.why_not.c_str());
  }
  std::printf("\navailability\n");
  auto part = [](const char* name, bool ok, const std::string& why) {
    std::printf("  %-9s %s%s\n", name, ok ? "yes" : "no: ", ok ? "" : why.c_str());
  };
  part("events", r.availability.events, r.availability.events_why_not);
  part("activity", r.availability.activity, r.availability.activity_why_not);
  part("counters", r.availability.range, r.availability.range_why_not);
  for (const std::string& n : r.notes) std::printf("note: %s\n", n.c_str());
}

profiler::MeasureOptions MeasureOptionsFrom(const ProfileArgs& a, const engine::DeviceSpec& spec) {
  profiler::MeasureOptions o;
  o.runs = a.runs;
  o.warmup = a.warmup;
  o.activity_runs = a.activity_runs;
  o.max_ranges = a.max_ranges;
  o.measure_overhead = a.overhead;
  o.disable_activity = a.no_activity;
  o.disable_range = a.no_counters;
  o.range_mode = a.range == "user" ? profiler::RangeMode::kUser : profiler::RangeMode::kAuto;
  o.metrics = SplitMetrics(a.metrics);
  o.peak_dram_bytes_per_s = spec.dram_bytes_per_s;
  o.peak_flops_per_s = spec.fp16_tensor_flops;
  return o;
}

int ReportProfile(const std::string& cmd, const ProfileArgs& a, const profiler::ProfileResult& r,
                  bool check_ok, const std::string& check) {
  if (!a.trace.empty()) {
    engine::Status s = profiler::WriteJsonFile(a.trace, profiler::ProfileToChromeTrace(r));
    if (!s.IsOk()) return Fail(cmd, s.Message());
  }
  if (a.json) {
    PrintJson("profile", profiler::ProfileToJson(r));
  } else {
    PrintProfileHuman(r);
    if (!a.trace.empty()) std::printf("wrote %s (Chrome trace; open in ui.perfetto.dev)\n", a.trace.c_str());
  }
  if (!r.availability.events) return Fail(cmd, "latency: " + r.availability.events_why_not);
  if (!check_ok) return Fail(cmd, check);
  return kExitOk;
}

namespace {

#endif  // STOF_WITH_KERNELS

int RunProfile(const ProfileArgs& a) {
  const std::string cmd = "profile " + a.workload;
#ifndef STOF_WITH_KERNELS
  (void)a;
  return Fail(cmd, "this build has no CUDA (STOF_CUDA=OFF): nothing can be measured; build with "
                   "CUDA on a machine with a GPU");
#else
  auto count = kernels::CudaDeviceCount();
  if (!count.IsOk()) return Fail(cmd, count.Message());
  auto spec = kernels::QueryDeviceSpec(0);
  if (!spec.IsOk()) return Fail(cmd, spec.Message());

  profiler::MeasureOptions o = MeasureOptionsFrom(a, *spec);

  std::unique_ptr<profiler::Profiler> prof = profiler::CreateProfiler();
  engine::Expected<profiler::ProfileResult> result = engine::Error{"not measured"};
  std::string check;  // the output check, appended to the notes
  bool check_ok = false;
  if (a.workload == "copy") {
    auto w = kernels::CopyWorkload::Create(static_cast<size_t>(a.bytes));
    if (!w.IsOk()) return Fail(cmd, w.Message());
    o.label = "copy " + std::to_string(a.bytes) + " B";
    o.min_bytes = (*w)->MinBytes();
    kernels::CopyWorkload* wl = w->get();
    result = prof->Measure([wl](void* stream) { return wl->Run(stream); }, o);
    if (result.IsOk()) {
      auto bad = wl->Verify();
      if (!bad.IsOk()) return Fail(cmd, bad.Message());
      check_ok = *bad == 0;
      check = "output check: " + std::to_string(*bad) + " of " + std::to_string(a.bytes) +
              " destination bytes differ from the source";
    }
  } else {
    auto w = kernels::GemmWorkload::Create(a.m, a.n, a.k);
    if (!w.IsOk()) return Fail(cmd, w.Message());
    o.label = "cuBLAS fp16 GEMM m=" + std::to_string(a.m) + " n=" + std::to_string(a.n) +
              " k=" + std::to_string(a.k) + " (column-major, fp32 accumulate)";
    o.flop_count = (*w)->Flops();
    o.min_bytes = (*w)->MinBytes();
    kernels::GemmWorkload* wl = w->get();
    result = prof->Measure([wl](void* stream) { return wl->Run(stream); }, o);
    if (result.IsOk()) {
      auto err = wl->Verify();
      if (!err.IsOk()) return Fail(cmd, err.Message());
      // fp16 output of an fp32 sum: rounding of C alone is 2^-11 relative to |C| <= sum |a*b|.
      check_ok = *err < 2e-3;
      check = "output check: largest relative error of 64 sampled entries vs fp64 " +
              Fmt("%.2e", *err);
    }
  }
  if (!result.IsOk()) return Fail(cmd, result.Message());
  profiler::ProfileResult& r = *result;
  r.notes.push_back(check);

  return ReportProfile(cmd, a, r, check_ok, check);
#endif
}


}  // namespace

void AddCommonOptions(CLI::App* c, ProfileArgs* a) {
  c->add_option("--metrics", a->metrics,
                "Counter metrics, comma-separated; 'default' = the built-in list, 'tensor_pipe' = "
                "this chip's tensor-pipe utilisation")
      ->capture_default_str()
      ->check(NonEmpty("metric names"));
  const int most = std::numeric_limits<int>::max();
  c->add_option("--runs", a->runs, "Timed runs (CUDA events; the median is the latency)")
      ->capture_default_str()
      ->check(IntRange(1, most));
  c->add_option("--warmup", a->warmup, "Untimed runs first")
      ->capture_default_str()
      ->check(IntRange(0, most));
  c->add_option("--activity-runs", a->activity_runs, "Runs traced by the CUPTI Activity API")
      ->capture_default_str()
      ->check(IntRange(1, most));
  c->add_option("--range", a->range,
                "Counter ranges: auto (one per kernel, kernel replay) or user (one around the "
                "whole workload, user replay)")
      ->capture_default_str()
      ->check(OneOf({"auto", "user"}));
  c->add_option("--max-ranges", a->max_ranges, "Auto range: most kernels profiled")
      ->capture_default_str()
      ->check(IntRange(1, most));
  c->add_flag("--overhead", a->overhead,
              "Also time the runs with activity tracing on and report the overhead");
  c->add_flag("--no-activity", a->no_activity, "Skip the activity trace");
  c->add_flag("--no-counters", a->no_counters, "Skip the counter pass");
  c->add_flag("--json", a->json, "Print the stof-profile JSON (docs/profiler.md)");
  c->add_option("--trace", a->trace, "Write a Chrome trace-event JSON to FILE (Perfetto)")
      ->check(NonEmpty());
}

void RegisterProfileCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "profile", "Measure a built-in workload: latency (CUDA events), CUPTI kernel trace and "
                 "counters (needs a CUDA build and a GPU)");
  cmd->require_subcommand(1);
  auto copy = std::make_shared<ProfileArgs>();
  copy->workload = "copy";
  CLI::App* c = cmd->add_subcommand(
      "copy", "Vectorised device copy: the calibration of the DRAM counters (reads and writes "
              "--bytes each)");
  c->add_option("--bytes", copy->bytes, "Bytes to copy")
      ->capture_default_str()
      ->check(IntRange(1, std::numeric_limits<int64_t>::max()));
  AddCommonOptions(c, copy.get());
  c->callback([copy, exit_code] { *exit_code = RunProfile(*copy); });

  auto gemm = std::make_shared<ProfileArgs>();
  gemm->workload = "gemm";
  CLI::App* g = cmd->add_subcommand(
      "gemm", "cuBLAS fp16 GEMM C = A B (column-major, fp32 accumulation)");
  g->add_option("--m", gemm->m, "Rows of A and C")->capture_default_str()->check(IntRange(1, std::numeric_limits<int>::max()));
  g->add_option("--n", gemm->n, "Columns of B and C")->capture_default_str()->check(IntRange(1, std::numeric_limits<int>::max()));
  g->add_option("--k", gemm->k, "Columns of A, rows of B")->capture_default_str()->check(IntRange(1, std::numeric_limits<int>::max()));
  AddCommonOptions(g, gemm.get());
  g->callback([gemm, exit_code] { *exit_code = RunProfile(*gemm); });

  AddProfileMhaCommand(cmd, exit_code);
  AddProfileLayerCommands(cmd, exit_code);
}

}  // namespace stof::app
