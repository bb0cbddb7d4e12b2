// CPU: the Chrome trace-event export: an "X" event per kernel with ts/dur in microseconds from
// the first kernel, pid = device, tid = stream, metadata naming them, and otherData.
#include <gtest/gtest.h>

#include "profiler/model/profile_export.h"

namespace sp = stof::profiler;
using Json = nlohmann::json;

namespace {
sp::KernelRecord Kernel(const std::string& name, uint64_t start, uint64_t end, uint32_t stream,
                        int run) {
  sp::KernelRecord k;
  k.name = name;
  k.mangled_name = name;
  k.start_ns = start;
  k.end_ns = end;
  k.stream_id = stream;
  k.run = run;
  k.grid = {8, 2, 1};
  k.block = {128, 1, 1};
  k.registers_per_thread = 40;
  k.dynamic_smem_bytes = 4096;
  k.correlation_id = static_cast<uint32_t>(start);
  return k;
}
}  // namespace

TEST(ChromeTrace, KernelsAreCompleteEventsInMicroseconds) {
  sp::ProfileResult r;
  r.profiler = "cupti";
  r.label = "gemm";
  r.device.index = 0;
  r.device.name = "H100";
  r.activity_runs = 2;
  // Raw CUPTI nanoseconds are huge; the trace starts at the first kernel.
  const uint64_t t0 = 1'700'000'000'000'000'000ull;
  r.kernels = {Kernel("gemm", t0 + 1500, t0 + 4000, 7, 0), Kernel("reduce", t0 + 4000, t0 + 4250, 7, 0),
               Kernel("gemm", t0 + 10'000, t0 + 12'500, 9, 1)};
  r.availability.events = true;
  r.latency.runs = 1;
  r.latency.median_us = 3;
  sp::ComputeSummary(&r);
  const Json t = sp::ProfileToChromeTrace(r);

  ASSERT_TRUE(t.contains("traceEvents"));
  EXPECT_EQ(t["displayTimeUnit"], "ns");
  std::vector<Json> x, meta;
  for (const Json& e : t["traceEvents"]) (e["ph"] == "X" ? x : meta).push_back(e);
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[0]["name"], "gemm");
  EXPECT_EQ(x[0]["cat"], "kernel");
  EXPECT_DOUBLE_EQ(x[0]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 2.5);
  EXPECT_EQ(x[0]["pid"], 0);
  EXPECT_EQ(x[0]["tid"], 7);
  EXPECT_DOUBLE_EQ(x[1]["ts"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(x[1]["dur"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(x[2]["ts"].get<double>(), 8.5);
  EXPECT_EQ(x[2]["tid"], 9);
  EXPECT_EQ(x[2]["args"]["run"], 1);
  EXPECT_EQ(x[0]["args"]["grid"], Json::parse("[8, 2, 1]"));
  EXPECT_EQ(x[0]["args"]["block"], Json::parse("[128, 1, 1]"));
  EXPECT_EQ(x[0]["args"]["registers_per_thread"], 40);
  EXPECT_EQ(x[0]["args"]["dynamic_smem_bytes"], 4096);
  EXPECT_EQ(x[0]["args"]["start_ns"], t0 + 1500);
  // One process name, one thread name per stream.
  ASSERT_EQ(meta.size(), 3u);
  EXPECT_EQ(meta[0]["name"], "process_name");
  EXPECT_EQ(meta[0]["args"]["name"], "GPU 0 (H100)");
  EXPECT_EQ(meta[1]["name"], "thread_name");
  EXPECT_EQ(meta[1]["tid"], 7);
  EXPECT_EQ(meta[1]["args"]["name"], "stream 7");
  EXPECT_EQ(meta[2]["tid"], 9);
  EXPECT_EQ(t["otherData"]["label"], "gemm");
  EXPECT_EQ(t["otherData"]["latency_us"], 3.0);
  EXPECT_EQ(t["otherData"]["latency_source"], "cuda_events");
}

TEST(ChromeTrace, EmptyWhenNothingWasTraced) {
  sp::ProfileResult r;
  r.availability.activity_why_not = "no GPU: none";
  const Json t = sp::ProfileToChromeTrace(r);
  EXPECT_TRUE(t["traceEvents"].is_array());
  EXPECT_TRUE(t["traceEvents"].empty());
  EXPECT_EQ(t["otherData"]["activity_why_not"], "no GPU: none");
  EXPECT_FALSE(t["otherData"].contains("latency_us"));
}
