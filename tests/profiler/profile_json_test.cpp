// CPU: the stof-profile JSON (docs/profiler.md): exact content for a hand-made result, the
// round trip (NaN included), and errors that name the JSON path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "profiler/model/profile_export.h"

namespace sp = stof::profiler;
using Json = nlohmann::json;

namespace {
// A small but complete result: one traced run of two kernels, two auto ranges, one metric
// unavailable, overhead measured.
sp::ProfileResult HandMade() {
  sp::ProfileResult r;
  r.profiler = "cupti";
  r.label = "copy 1024 B";
  r.device = {0, "NVIDIA H100 80GB HBM3", "GH100", 9, 0};
  r.options.label = r.label;
  r.options.runs = 3;
  r.options.warmup = 1;
  r.options.activity_runs = 1;
  r.options.measure_overhead = true;
  r.options.metrics = {"dram__bytes_read.sum", "bogus.sum"};
  r.options.min_bytes = 2048;
  r.options.peak_dram_bytes_per_s = 2048e6;  // floor = 1 us
  r.availability = {true, true, true, "", "", ""};
  r.latency.runs = 3;
  r.latency.median_us = 2;
  r.latency.min_us = 1.5;
  r.latency.max_us = 3;
  r.latency.mean_us = 2.25;
  r.latency.wall_us_per_run = 4;
  r.latency.samples_us = {2, 3, 1.5};
  r.activity_runs = 1;
  r.activity_run_us = {1.5};
  sp::KernelRecord k;
  k.name = "void Copy(int)";
  k.mangled_name = "_Z4Copyi";
  k.start_ns = 1000;
  k.end_ns = 2000;
  k.grid = {4, 1, 1};
  k.block = {256, 1, 1};
  k.registers_per_thread = 16;
  k.static_smem_bytes = 0;
  k.dynamic_smem_bytes = 128;
  k.device_id = 0;
  k.context_id = 1;
  k.stream_id = 13;
  k.correlation_id = 77;
  r.kernels.push_back(k);
  k.name = k.mangled_name = "tail";
  k.start_ns = 2000;
  k.end_ns = 2500;
  k.correlation_id = 78;
  r.kernels.push_back(k);
  r.range_mode = "auto";
  r.replay_mode = "kernel";
  r.counter_passes = 1;
  r.metrics = {{"dram__bytes_read.sum", "", true, "byte", "# of bytes read from DRAM", ""},
               {"bogus.sum", "", false, "", "", "unknown metric on chip GH100"}};
  r.ranges = {{0, "0", "void Copy(int)", {{"dram__bytes_read.sum", 1000, "byte"}}},
              {1, "1", "tail", {{"dram__bytes_read.sum", std::nan(""), "byte"}}}};
  r.overhead = {true, 2, 2.5, 4, 5};
  r.notes = {"a note"};
  sp::ComputeSummary(&r);
  return r;
}

const char* kExpected = R"json({
  "schema": "stof-profile",
  "version": 1,
  "profiler": "cupti",
  "label": "copy 1024 B",
  "device": {"index": 0, "name": "NVIDIA H100 80GB HBM3", "chip": "GH100", "cc_major": 9,
             "cc_minor": 0},
  "options": {"warmup": 1, "runs": 3, "activity_runs": 1, "measure_overhead": true,
              "metrics": ["dram__bytes_read.sum", "bogus.sum"], "range_mode": "auto",
              "max_ranges": 64, "max_passes": 64, "disable_activity": false,
              "disable_range": false, "flop_count": 0.0, "min_bytes": 2048.0,
              "peak_dram_bytes_per_s": 2048000000.0, "peak_flops_per_s": 0.0},
  "availability": {"events": {"available": true}, "activity": {"available": true},
                   "range": {"available": true}},
  "latency": {"source": "cuda_events", "runs": 3, "median_us": 2.0, "min_us": 1.5,
              "max_us": 3.0, "mean_us": 2.25, "wall_us_per_run": 4.0,
              "samples_us": [2.0, 3.0, 1.5]},
  "activity": {"runs": 1, "run_us": [1.5], "dropped_records": 0, "kernels": [
    {"name": "void Copy(int)", "mangled_name": "_Z4Copyi", "run": 0, "start_ns": 1000,
     "end_ns": 2000, "duration_us": 1.0, "grid": [4, 1, 1], "block": [256, 1, 1],
     "registers_per_thread": 16, "static_smem_bytes": 0, "dynamic_smem_bytes": 128,
     "device_id": 0, "context_id": 1, "stream_id": 13, "correlation_id": 77},
    {"name": "tail", "mangled_name": "tail", "run": 0, "start_ns": 2000, "end_ns": 2500,
     "duration_us": 0.5, "grid": [4, 1, 1], "block": [256, 1, 1], "registers_per_thread": 16,
     "static_smem_bytes": 0, "dynamic_smem_bytes": 128, "device_id": 0, "context_id": 1,
     "stream_id": 13, "correlation_id": 78}]},
  "counters": {"range_mode": "auto", "replay_mode": "kernel", "passes": 1, "ranges_dropped": 0,
    "metrics": [
      {"name": "dram__bytes_read.sum", "alias": "", "available": true, "unit": "byte",
       "description": "# of bytes read from DRAM"},
      {"name": "bogus.sum", "alias": "", "available": false, "unit": "", "description": "",
       "why_not": "unknown metric on chip GH100"}],
    "ranges": [
      {"index": 0, "name": "0", "kernel": "void Copy(int)",
       "values": {"dram__bytes_read.sum": 1000.0}},
      {"index": 1, "name": "1", "kernel": "tail", "values": {"dram__bytes_read.sum": null}}]},
  "overhead": {"measured": true, "events_median_us_off": 2.0, "events_median_us_on": 2.5,
               "events_pct": 25.0, "wall_us_per_run_off": 4.0, "wall_us_per_run_on": 5.0,
               "wall_pct": 25.0},
  "summary": {"latency_source": "cuda_events", "latency_us": 2.0, "activity_latency_us": 1.5,
              "activity_vs_events": -0.25, "kernels_per_run": 2, "kernel_time_us": 1.5,
              "dram_bytes_read": 1000.0, "dram_bytes_write": null, "dram_bytes": null,
              "lts_bytes": null, "counter_gpu_time_us": null, "achieved_bytes_per_s": null,
              "flop_count": null, "achieved_flops_per_s": null, "floor_us": 1.0,
              "floor_bytes_source": "caller", "ratio_to_floor": 2.0,
              "bandwidth_fraction_of_peak": null, "flops_fraction_of_peak": null},
  "notes": ["a note"]
})json";
}  // namespace

TEST(ProfileJson, ExactContent) {
  const Json got = sp::ProfileToJson(HandMade());
  const Json want = Json::parse(kExpected);
  EXPECT_EQ(got, want) << "got:\n" << got.dump(2) << "\ndiff:\n" << Json::diff(want, got).dump(2);
}

TEST(ProfileJson, RoundTrip) {
  const sp::ProfileResult r = HandMade();
  auto back = sp::ProfileFromJson(sp::ProfileToJson(r));
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(*back == r);
  EXPECT_TRUE(std::isnan(back->ranges[1].metrics[0].value));
  // Through text, as a file would carry it.
  auto text = sp::ProfileFromJson(Json::parse(sp::ProfileToJson(r).dump()));
  ASSERT_TRUE(text.IsOk()) << text.Message();
  EXPECT_TRUE(*text == r);
}

TEST(ProfileJson, UnavailablePartsCarryReasons) {
  sp::ProfileResult r = HandMade();
  r.availability = {false, false, false, "no GPU: x", "disabled by y", "CUPTI_ERROR_Z"};
  const Json j = sp::ProfileToJson(r);
  EXPECT_EQ(j["availability"]["events"], Json::parse(R"({"available": false, "why_not": "no GPU: x"})"));
  EXPECT_EQ(j["availability"]["activity"]["why_not"], "disabled by y");
  EXPECT_EQ(j["availability"]["range"]["why_not"], "CUPTI_ERROR_Z");
  auto back = sp::ProfileFromJson(j);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_EQ(back->availability, r.availability);
}

TEST(ProfileJson, ErrorsNameThePath) {
  const Json good = sp::ProfileToJson(HandMade());
  struct Case {
    std::function<void(Json&)> edit;
    std::string want;
  };
  const std::vector<Case> cases = {
      {[](Json& j) { j["schema"] = "plan"; }, "p.schema: expected 'stof-profile'"},
      {[](Json& j) { j["version"] = 2; }, "p.version: expected 1, got 2"},
      {[](Json& j) { j.erase("latency"); }, "p.latency: missing"},
      {[](Json& j) { j["activity"]["kernels"][1]["grid"] = {1, 2}; },
       "p.activity.kernels[1].grid: expected 3 integers"},
      {[](Json& j) { j["activity"]["kernels"][0]["run"] = "zero"; },
       "p.activity.kernels[0].run: expected an integer"},
      {[](Json& j) { j["options"]["range_mode"] = "nested"; },
       "p.options.range_mode: expected 'auto' or 'user'"},
      {[](Json& j) { j["counters"]["ranges"][0]["values"]["x.sum"] = 1; },
       "p.counters.ranges[0].values.x.sum: not listed in counters.metrics"},
      {[](Json& j) { j["latency"]["samples_us"][1] = "3"; },
       "p.latency.samples_us[1]: expected a number or null"},
      {[](Json& j) { j["availability"]["range"] = {{"available", false}}; },
       "p.availability.range.why_not: missing"},
  };
  for (const Case& c : cases) {
    Json j = good;
    c.edit(j);
    auto r = sp::ProfileFromJson(j, "p");
    ASSERT_FALSE(r.IsOk()) << c.want;
    EXPECT_EQ(r.Message(), c.want);
  }
}

TEST(ProfileJson, WriteFile) {
  const std::string path = ::testing::TempDir() + "stof_profile_test.json";
  ASSERT_TRUE(sp::WriteJsonFile(path, sp::ProfileToJson(HandMade())).IsOk());
  std::ifstream f(path);
  const Json j = Json::parse(f);
  EXPECT_EQ(j["label"], "copy 1024 B");
  std::remove(path.c_str());
  auto bad = sp::WriteJsonFile("/nonexistent-dir/x.json", Json::object());
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("/nonexistent-dir/x.json"), std::string::npos);
}
