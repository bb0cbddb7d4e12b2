// ProfileToJson / ProfileFromJson / WriteJsonFile (profile_export.h): the "stof-profile" JSON
// schema, version 1, documented field by field in docs/profiler.md. Derived numbers written
// for readers (a kernel's duration_us, the overhead percentages) are not read back.
// Exceptions (nlohmann, and ours while reading) stay inside this file. Files are written by
// engine/core/atomic_file.h (a failed write keeps the old file).
#include <cmath>
#include <limits>
#include <stdexcept>

#include "engine/core/atomic_file.h"
#include "engine/core/json_io.h"
#include "profiler/model/profile_export.h"

namespace stof::profiler {

namespace {
using Json = nlohmann::json;

Json Num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
Json Opt(const std::optional<double>& v) { return v ? Num(*v) : Json(nullptr); }

Json KernelJson(const KernelRecord& k) {
  return Json{{"name", k.name},
              {"mangled_name", k.mangled_name},
              {"run", k.run},
              {"start_ns", k.start_ns},
              {"end_ns", k.end_ns},
              {"duration_us", k.DurationUs()},
              {"grid", k.grid},
              {"block", k.block},
              {"registers_per_thread", k.registers_per_thread},
              {"static_smem_bytes", k.static_smem_bytes},
              {"dynamic_smem_bytes", k.dynamic_smem_bytes},
              {"device_id", k.device_id},
              {"context_id", k.context_id},
              {"stream_id", k.stream_id},
              {"correlation_id", k.correlation_id}};
}

Json PartJson(bool available, const std::string& why_not) {
  Json j{{"available", available}};
  if (!available) j["why_not"] = why_not;
  return j;
}

// --- reading ------------------------------------------------------------------------------
struct ReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw ReadError(path + ": " + what);
}

const Json& At(const Json& obj, const std::string& path, const char* key) {
  if (!obj.is_object()) Fail(path, "expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) Fail(path + "." + key, "missing");
  return *it;
}

std::string Str(const Json& obj, const std::string& path, const char* key) {
  const Json& v = At(obj, path, key);
  if (!v.is_string()) Fail(path + "." + key, "expected a string");
  return v.get<std::string>();
}

bool Bool(const Json& obj, const std::string& path, const char* key) {
  const Json& v = At(obj, path, key);
  if (!v.is_boolean()) Fail(path + "." + key, "expected true or false");
  return v.get<bool>();
}

double DoubleOf(const Json& v, const std::string& path) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) Fail(path, "expected a number or null");
  return v.get<double>();
}

double Double(const Json& obj, const std::string& path, const char* key) {
  return DoubleOf(At(obj, path, key), path + "." + key);
}

std::optional<double> OptDouble(const Json& obj, const std::string& path, const char* key) {
  const Json& v = At(obj, path, key);
  if (v.is_null()) return std::nullopt;
  return DoubleOf(v, path + "." + key);
}

template <class T>
T Int(const Json& obj, const std::string& path, const char* key) {
  const Json& v = At(obj, path, key);
  if (!v.is_number_integer()) Fail(path + "." + key, "expected an integer");
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      Fail(path + "." + key, "integer out of range");
    return static_cast<T>(u);
  }
  const int64_t x = v.get<int64_t>();
  if (x < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      (x > 0 && static_cast<uint64_t>(x) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
    Fail(path + "." + key, "integer out of range");
  return static_cast<T>(x);
}

const Json& Array(const Json& obj, const std::string& path, const char* key) {
  const Json& v = At(obj, path, key);
  if (!v.is_array()) Fail(path + "." + key, "expected an array");
  return v;
}

std::array<int, 3> Dim3(const Json& obj, const std::string& path, const char* key) {
  const Json& v = Array(obj, path, key);
  if (v.size() != 3) Fail(path + "." + key, "expected 3 integers");
  std::array<int, 3> d{};
  for (size_t i = 0; i < 3; ++i) {
    if (!v[i].is_number_integer()) Fail(path + "." + key, "expected 3 integers");
    d[i] = v[i].get<int>();
  }
  return d;
}

std::vector<double> Doubles(const Json& obj, const std::string& path, const char* key) {
  const Json& a = Array(obj, path, key);
  std::vector<double> out;
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(DoubleOf(a[i], path + "." + key + "[" + std::to_string(i) + "]"));
  return out;
}

void ReadPart(const Json& obj, const std::string& path, const char* key, bool* available,
              std::string* why_not) {
  const Json& p = At(obj, path, key);
  const std::string sub = path + "." + key;
  *available = Bool(p, sub, "available");
  *why_not = *available ? "" : Str(p, sub, "why_not");
}

// "device": the GPU measured.
void ReadDevice(const Json& j, const std::string& w, ProfileResult& r) {
  const Json& d = At(j, w, "device");
  const std::string dp = w + ".device";
  r.device.index = Int<int>(d, dp, "index");
  r.device.name = Str(d, dp, "name");
  r.device.chip = Str(d, dp, "chip");
  r.device.cc_major = Int<int>(d, dp, "cc_major");
  r.device.cc_minor = Int<int>(d, dp, "cc_minor");
}

// "options": the MeasureOptions of the measurement (label: the result's).
void ReadOptions(const Json& j, const std::string& w, ProfileResult& r) {
  const Json& o = At(j, w, "options");
  const std::string op = w + ".options";
  MeasureOptions& mo = r.options;
  mo.label = r.label;
  mo.warmup = Int<int>(o, op, "warmup");
  mo.runs = Int<int>(o, op, "runs");
  mo.activity_runs = Int<int>(o, op, "activity_runs");
  mo.measure_overhead = Bool(o, op, "measure_overhead");
  const Json& ms = Array(o, op, "metrics");
  for (size_t i = 0; i < ms.size(); ++i) {
    if (!ms[i].is_string()) Fail(op + ".metrics[" + std::to_string(i) + "]", "expected a string");
    mo.metrics.push_back(ms[i].get<std::string>());
  }
  const std::string mode = Str(o, op, "range_mode");
  if (mode != "auto" && mode != "user") Fail(op + ".range_mode", "expected 'auto' or 'user'");
  mo.range_mode = mode == "user" ? RangeMode::kUser : RangeMode::kAuto;
  mo.max_ranges = Int<int>(o, op, "max_ranges");
  mo.max_passes = Int<int>(o, op, "max_passes");
  mo.disable_activity = Bool(o, op, "disable_activity");
  mo.disable_range = Bool(o, op, "disable_range");
  mo.flop_count = Double(o, op, "flop_count");
  mo.min_bytes = Double(o, op, "min_bytes");
  mo.peak_dram_bytes_per_s = Double(o, op, "peak_dram_bytes_per_s");
  mo.peak_flops_per_s = Double(o, op, "peak_flops_per_s");
}

// "availability" and "latency": which passes ran, the CUDA-event latency.
void ReadAvailability(const Json& j, const std::string& w, ProfileResult& r) {
  const Json& a = At(j, w, "availability");
  const std::string ap = w + ".availability";
  ReadPart(a, ap, "events", &r.availability.events, &r.availability.events_why_not);
  ReadPart(a, ap, "activity", &r.availability.activity, &r.availability.activity_why_not);
  ReadPart(a, ap, "range", &r.availability.range, &r.availability.range_why_not);


  const Json& l = At(j, w, "latency");
  const std::string lp = w + ".latency";
  r.latency.runs = Int<int>(l, lp, "runs");
  r.latency.median_us = Double(l, lp, "median_us");
  r.latency.min_us = Double(l, lp, "min_us");
  r.latency.max_us = Double(l, lp, "max_us");
  r.latency.mean_us = Double(l, lp, "mean_us");
  r.latency.wall_us_per_run = Double(l, lp, "wall_us_per_run");
  r.latency.samples_us = Doubles(l, lp, "samples_us");
}

// "activity": the CUPTI Activity pass and its kernel records.
void ReadActivity(const Json& j, const std::string& w, ProfileResult& r) {
  const Json& act = At(j, w, "activity");
  const std::string acp = w + ".activity";
  r.activity_runs = Int<int>(act, acp, "runs");
  r.activity_run_us = Doubles(act, acp, "run_us");
  r.dropped_records = Int<uint64_t>(act, acp, "dropped_records");
  const Json& ks = Array(act, acp, "kernels");
  for (size_t i = 0; i < ks.size(); ++i) {
    const std::string kp = acp + ".kernels[" + std::to_string(i) + "]";
    KernelRecord k;
    k.name = Str(ks[i], kp, "name");
    k.mangled_name = Str(ks[i], kp, "mangled_name");
    k.run = Int<int>(ks[i], kp, "run");
    k.start_ns = Int<uint64_t>(ks[i], kp, "start_ns");
    k.end_ns = Int<uint64_t>(ks[i], kp, "end_ns");
    k.grid = Dim3(ks[i], kp, "grid");
    k.block = Dim3(ks[i], kp, "block");
    k.registers_per_thread = Int<int>(ks[i], kp, "registers_per_thread");
    k.static_smem_bytes = Int<int64_t>(ks[i], kp, "static_smem_bytes");
    k.dynamic_smem_bytes = Int<int64_t>(ks[i], kp, "dynamic_smem_bytes");
    k.device_id = Int<uint32_t>(ks[i], kp, "device_id");
    k.context_id = Int<uint32_t>(ks[i], kp, "context_id");
    k.stream_id = Int<uint32_t>(ks[i], kp, "stream_id");
    k.correlation_id = Int<uint32_t>(ks[i], kp, "correlation_id");
    r.kernels.push_back(std::move(k));
  }
}

// "counters": the Range Profiler pass, its metrics and the values per range.
void ReadCounters(const Json& j, const std::string& w, ProfileResult& r) {
  const Json& c = At(j, w, "counters");
  const std::string cp = w + ".counters";
  r.range_mode = Str(c, cp, "range_mode");
  r.replay_mode = Str(c, cp, "replay_mode");
  r.counter_passes = Int<int>(c, cp, "passes");
  r.ranges_dropped = Int<uint64_t>(c, cp, "ranges_dropped");
  const Json& mis = Array(c, cp, "metrics");
  for (size_t i = 0; i < mis.size(); ++i) {
    const std::string mp = cp + ".metrics[" + std::to_string(i) + "]";
    MetricInfo m;
    m.name = Str(mis[i], mp, "name");
    m.alias = Str(mis[i], mp, "alias");
    m.available = Bool(mis[i], mp, "available");
    m.unit = Str(mis[i], mp, "unit");
    m.description = Str(mis[i], mp, "description");
    m.why_not = m.available ? "" : Str(mis[i], mp, "why_not");
    r.metrics.push_back(std::move(m));
  }
  const Json& rs = Array(c, cp, "ranges");
  for (size_t i = 0; i < rs.size(); ++i) {
    const std::string rp = cp + ".ranges[" + std::to_string(i) + "]";
    RangeRecord rr;
    rr.index = Int<int>(rs[i], rp, "index");
    rr.name = Str(rs[i], rp, "name");
    rr.kernel_name = Str(rs[i], rp, "kernel");
    const Json& vals = At(rs[i], rp, "values");
    if (!vals.is_object()) Fail(rp + ".values", "expected an object");
    // Values come back in the order of counters.metrics, each with its metric's unit.
    for (const MetricInfo& m : r.metrics) {
      auto it = vals.find(m.name);
      if (it == vals.end()) continue;
      rr.metrics.push_back({m.name, DoubleOf(*it, rp + ".values." + m.name), m.unit});
    }
    for (auto it = vals.begin(); it != vals.end(); ++it)
      if (!r.FindMetric(it.key()))
        Fail(rp + ".values." + it.key(), "not listed in counters.metrics");
    r.ranges.push_back(std::move(rr));
  }
}

// "overhead" and "summary": the profiler's own cost and the derived figures.
void ReadSummary(const Json& j, const std::string& w, ProfileResult& r) {
  const Json& ov = At(j, w, "overhead");
  const std::string ovp = w + ".overhead";
  r.overhead.measured = Bool(ov, ovp, "measured");
  if (r.overhead.measured) {
    r.overhead.events_median_us_off = Double(ov, ovp, "events_median_us_off");
    r.overhead.events_median_us_on = Double(ov, ovp, "events_median_us_on");
    r.overhead.wall_us_per_run_off = Double(ov, ovp, "wall_us_per_run_off");
    r.overhead.wall_us_per_run_on = Double(ov, ovp, "wall_us_per_run_on");
  }


  const Json& s = At(j, w, "summary");
  const std::string sp = w + ".summary";
  ProfileSummary& su = r.summary;
  su.latency_source = Str(s, sp, "latency_source");
  su.latency_us = OptDouble(s, sp, "latency_us");
  su.activity_latency_us = OptDouble(s, sp, "activity_latency_us");
  su.activity_vs_events = OptDouble(s, sp, "activity_vs_events");
  su.kernels_per_run = Int<int>(s, sp, "kernels_per_run");
  su.kernel_time_us = OptDouble(s, sp, "kernel_time_us");
  su.dram_bytes_read = OptDouble(s, sp, "dram_bytes_read");
  su.dram_bytes_write = OptDouble(s, sp, "dram_bytes_write");
  su.dram_bytes = OptDouble(s, sp, "dram_bytes");
  su.lts_bytes = OptDouble(s, sp, "lts_bytes");
  su.counter_gpu_time_us = OptDouble(s, sp, "counter_gpu_time_us");
  su.achieved_bytes_per_s = OptDouble(s, sp, "achieved_bytes_per_s");
  su.flop_count = OptDouble(s, sp, "flop_count");
  su.achieved_flops_per_s = OptDouble(s, sp, "achieved_flops_per_s");
  su.floor_us = OptDouble(s, sp, "floor_us");
  su.floor_bytes_source = Str(s, sp, "floor_bytes_source");
  su.ratio_to_floor = OptDouble(s, sp, "ratio_to_floor");
  su.bandwidth_fraction_of_peak = OptDouble(s, sp, "bandwidth_fraction_of_peak");
  su.flops_fraction_of_peak = OptDouble(s, sp, "flops_fraction_of_peak");
}

ProfileResult Read(const Json& j, const std::string& w) {
  ProfileResult r;
  if (Str(j, w, "schema") != kProfileSchemaName)
    Fail(w + ".schema", std::string("expected '") + kProfileSchemaName + "'");
  const int version = Int<int>(j, w, "version");
  if (version != ProfileResult::kSchemaVersion)
    Fail(w + ".version", "expected " + std::to_string(ProfileResult::kSchemaVersion) + ", got " +
                             std::to_string(version));
  r.profiler = Str(j, w, "profiler");
  r.label = Str(j, w, "label");
  ReadDevice(j, w, r);
  ReadOptions(j, w, r);
  ReadAvailability(j, w, r);
  ReadActivity(j, w, r);
  ReadCounters(j, w, r);
  ReadSummary(j, w, r);

  const Json& notes = Array(j, w, "notes");
  for (size_t i = 0; i < notes.size(); ++i) {
    if (!notes[i].is_string()) Fail(w + ".notes[" + std::to_string(i) + "]", "expected a string");
    r.notes.push_back(notes[i].get<std::string>());
  }
  return r;
}
}  // namespace

Json ProfileToJson(const ProfileResult& r) {
  Json j;
  j["schema"] = kProfileSchemaName;
  j["version"] = ProfileResult::kSchemaVersion;
  j["profiler"] = r.profiler;
  j["label"] = r.label;
  j["device"] = {{"index", r.device.index},       {"name", r.device.name},
                 {"chip", r.device.chip},         {"cc_major", r.device.cc_major},
                 {"cc_minor", r.device.cc_minor}};
  const MeasureOptions& o = r.options;
  j["options"] = {{"warmup", o.warmup},
                  {"runs", o.runs},
                  {"activity_runs", o.activity_runs},
                  {"measure_overhead", o.measure_overhead},
                  {"metrics", o.metrics},
                  {"range_mode", RangeModeName(o.range_mode)},
                  {"max_ranges", o.max_ranges},
                  {"max_passes", o.max_passes},
                  {"disable_activity", o.disable_activity},
                  {"disable_range", o.disable_range},
                  {"flop_count", Num(o.flop_count)},
                  {"min_bytes", Num(o.min_bytes)},
                  {"peak_dram_bytes_per_s", Num(o.peak_dram_bytes_per_s)},
                  {"peak_flops_per_s", Num(o.peak_flops_per_s)}};
  const Availability& a = r.availability;
  j["availability"] = {{"events", PartJson(a.events, a.events_why_not)},
                       {"activity", PartJson(a.activity, a.activity_why_not)},
                       {"range", PartJson(a.range, a.range_why_not)}};
  Json samples = Json::array();
  for (double v : r.latency.samples_us) samples.push_back(Num(v));
  j["latency"] = {{"source", "cuda_events"},
                  {"runs", r.latency.runs},
                  {"median_us", Num(r.latency.median_us)},
                  {"min_us", Num(r.latency.min_us)},
                  {"max_us", Num(r.latency.max_us)},
                  {"mean_us", Num(r.latency.mean_us)},
                  {"wall_us_per_run", Num(r.latency.wall_us_per_run)},
                  {"samples_us", samples}};
  Json kernels = Json::array();
  for (const KernelRecord& k : r.kernels) kernels.push_back(KernelJson(k));
  Json run_us = Json::array();
  for (double v : r.activity_run_us) run_us.push_back(Num(v));
  j["activity"] = {{"runs", r.activity_runs},
                   {"run_us", run_us},
                   {"dropped_records", r.dropped_records},
                   {"kernels", kernels}};
  Json metrics = Json::array();
  for (const MetricInfo& m : r.metrics) {
    Json mj{{"name", m.name},   {"alias", m.alias},
            {"available", m.available}, {"unit", m.unit},
            {"description", m.description}};
    if (!m.available) mj["why_not"] = m.why_not;
    metrics.push_back(mj);
  }
  Json ranges = Json::array();
  for (const RangeRecord& rr : r.ranges) {
    Json values = Json::object();
    for (const MetricValue& v : rr.metrics) values[v.name] = Num(v.value);
    ranges.push_back(
        {{"index", rr.index}, {"name", rr.name}, {"kernel", rr.kernel_name}, {"values", values}});
  }
  j["counters"] = {{"range_mode", r.range_mode},
                   {"replay_mode", r.replay_mode},
                   {"passes", r.counter_passes},
                   {"ranges_dropped", r.ranges_dropped},
                   {"metrics", metrics},
                   {"ranges", ranges}};
  const ActivityOverhead& ov = r.overhead;
  j["overhead"] = {{"measured", ov.measured}};
  if (ov.measured) {
    j["overhead"]["events_median_us_off"] = Num(ov.events_median_us_off);
    j["overhead"]["events_median_us_on"] = Num(ov.events_median_us_on);
    j["overhead"]["events_pct"] = Num(ov.EventsPct());
    j["overhead"]["wall_us_per_run_off"] = Num(ov.wall_us_per_run_off);
    j["overhead"]["wall_us_per_run_on"] = Num(ov.wall_us_per_run_on);
    j["overhead"]["wall_pct"] = Num(ov.WallPct());
  }
  const ProfileSummary& s = r.summary;
  j["summary"] = {{"latency_source", s.latency_source},
                  {"latency_us", Opt(s.latency_us)},
                  {"activity_latency_us", Opt(s.activity_latency_us)},
                  {"activity_vs_events", Opt(s.activity_vs_events)},
                  {"kernels_per_run", s.kernels_per_run},
                  {"kernel_time_us", Opt(s.kernel_time_us)},
                  {"dram_bytes_read", Opt(s.dram_bytes_read)},
                  {"dram_bytes_write", Opt(s.dram_bytes_write)},
                  {"dram_bytes", Opt(s.dram_bytes)},
                  {"lts_bytes", Opt(s.lts_bytes)},
                  {"counter_gpu_time_us", Opt(s.counter_gpu_time_us)},
                  {"achieved_bytes_per_s", Opt(s.achieved_bytes_per_s)},
                  {"flop_count", Opt(s.flop_count)},
                  {"achieved_flops_per_s", Opt(s.achieved_flops_per_s)},
                  {"floor_us", Opt(s.floor_us)},
                  {"floor_bytes_source", s.floor_bytes_source},
                  {"ratio_to_floor", Opt(s.ratio_to_floor)},
                  {"bandwidth_fraction_of_peak", Opt(s.bandwidth_fraction_of_peak)},
                  {"flops_fraction_of_peak", Opt(s.flops_fraction_of_peak)}};
  j["notes"] = r.notes;
  return j;
}

engine::Expected<ProfileResult> ProfileFromJson(const nlohmann::json& j, const std::string& what) {
  try {
    return Read(j, what);
  } catch (const std::exception& e) {
    return engine::Error{e.what()};
  }
}

engine::Status WriteJsonFile(const std::string& path, const nlohmann::json& j) {
  return engine::WriteFileAtomic(path, engine::DumpJson(j, 2) + "\n");
}

}  // namespace stof::profiler
