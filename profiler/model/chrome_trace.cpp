// ProfileToChromeTrace (profile_export.h): the kernel records as Chrome trace-event JSON, which
// Perfetto (ui.perfetto.dev) and chrome://tracing open. One complete ("X") event per kernel;
// pid = CUDA device, tid = CUPTI stream id; timestamps in microseconds from the earliest kernel
// start, so they stay small and exact as doubles (raw CUPTI nanoseconds exceed 2^53).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "profiler/model/profile_export.h"

namespace stof::profiler {

nlohmann::json ProfileToChromeTrace(const ProfileResult& r) {
  using Json = nlohmann::json;
  uint64_t t0 = std::numeric_limits<uint64_t>::max();
  for (const KernelRecord& k : r.kernels) t0 = std::min(t0, k.start_ns);

  Json events = Json::array();
  std::set<uint32_t> devices;
  std::set<std::pair<uint32_t, uint32_t>> threads;
  for (const KernelRecord& k : r.kernels) {
    devices.insert(k.device_id);
    threads.insert({k.device_id, k.stream_id});
  }
  for (uint32_t d : devices) {
    std::string name = "GPU " + std::to_string(d);
    if (!r.device.name.empty() && static_cast<int>(d) == r.device.index)
      name += " (" + r.device.name + ")";
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", d}, {"tid", 0},
                      {"args", {{"name", name}}}});
  }
  for (const auto& [d, s] : threads)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", d}, {"tid", s},
                      {"args", {{"name", "stream " + std::to_string(s)}}}});
  for (const KernelRecord& k : r.kernels) {
    events.push_back({{"name", k.name},
                      {"cat", "kernel"},
                      {"ph", "X"},
                      {"pid", k.device_id},
                      {"tid", k.stream_id},
                      {"ts", (k.start_ns - t0) * 1e-3},
                      {"dur", k.DurationUs()},
                      {"args",
                       {{"run", k.run},
                        {"grid", k.grid},
                        {"block", k.block},
                        {"registers_per_thread", k.registers_per_thread},
                        {"static_smem_bytes", k.static_smem_bytes},
                        {"dynamic_smem_bytes", k.dynamic_smem_bytes},
                        {"correlation_id", k.correlation_id},
                        {"start_ns", k.start_ns}}}});
  }
  Json other = {{"tool", "stof profile"},
                {"label", r.label},
                {"device", r.device.name},
                {"profiler", r.profiler},
                {"activity_runs", r.activity_runs}};
  if (r.summary.latency_us && std::isfinite(*r.summary.latency_us)) {
    other["latency_us"] = *r.summary.latency_us;
    other["latency_source"] = r.summary.latency_source;
  }
  if (!r.availability.activity) other["activity_why_not"] = r.availability.activity_why_not;
  return Json{{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", other}};
}

}  // namespace stof::profiler
