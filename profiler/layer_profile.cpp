// ProfileLayer, the "stof-layer-profile" JSON (version 1, docs/profiler.md) and
// LayerProfileFromPlan (layer_profile.h). CUDA-free: the measuring is the Profiler's, the
// running the LayerRunner's backend. Reading uses the engine's strict path-aware readers
// (engine/core/json_read.h: unknown keys are errors) over engine::ParseJson (json_io.h: depth
// limit, duplicate keys refused); the nested per-part profiles are the
// "stof-profile" schema (profile_export.h). Exceptions stay inside this file.
#include "profiler/layer_profile.h"

#include <cmath>
#include <ctime>
#include <limits>

#include "engine/core/file_read.h"
#include "engine/core/json_io.h"
#include "engine/core/json_read.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan_choices.h"
#include "profiler/model/profile_export.h"

namespace stof::profiler {

namespace {
using Json = nlohmann::json;
namespace jr = engine::json_read;

// Layer profiles hold a few profiles of a few thousand kernel records each; far below this.
constexpr uint64_t kMaxLayerProfileFileBytes = uint64_t{1} << 30;

std::string NowIso8601Utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void SegmentCost(const engine::OpGraph& g, const engine::Segment& s, double* flops,
                 double* bytes) {
  *flops = 0;
  *bytes = 0;
  for (int n = s.first; n <= s.last && n <= g.Size(); ++n) {
    *flops += static_cast<double>(g.At(n).flops);
    *bytes += static_cast<double>(g.At(n).bytes);
  }
}

// A part that was never measured: every pass unavailable with `why`.
ProfileResult Unmeasured(const MeasureOptions& o, const std::string& why) {
  ProfileResult r;
  r.profiler = "none";
  r.label = o.label;
  r.options = o;
  r.availability.events_why_not = why;
  r.availability.activity_why_not = why;
  r.availability.range_why_not = why;
  ComputeSummary(&r);
  return r;
}

Json Num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// A number, or null read back as NaN (what Num writes for a non-finite value).
double NumOrNull(const jr::ObjectReader& o, const char* key) {
  const Json& v = o.Require(key);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  return jr::ReadNumber(v, o.PathOf(key), std::numeric_limits<double>::lowest(),
                        std::numeric_limits<double>::max());
}

LayerProfile Read(const Json& j, const std::string& what) {
  LayerProfile p;
  const jr::ObjectReader r(j, what, what + ": ",
                           {"schema", "version", "label", "model", "batch", "seq_len", "mask",
                            "scheme_code", "backend", "source_plan", "created_by", "created_at",
                            "device", "layer_flops", "layer_min_bytes", "notes", "layer",
                            "segments"});
  const std::string schema = r.String("schema", true);
  if (schema != kLayerProfileSchemaName)
    jr::Fail(r.PathOf("schema"), std::string("expected '") + kLayerProfileSchemaName +
                                     "', got " + jr::Shown(r.Require("schema")));
  const int64_t version = r.Int("version", 0, std::numeric_limits<int>::max());
  if (version != LayerProfile::kSchemaVersion)
    jr::Fail(r.PathOf("version"), "expected " + std::to_string(LayerProfile::kSchemaVersion) +
                                      ", got " + std::to_string(version));
  p.label = r.String("label", true);
  p.model = r.String("model", true);
  p.batch = r.Int("batch", 0, std::numeric_limits<int64_t>::max());
  p.seq_len = r.Int("seq_len", 0, std::numeric_limits<int64_t>::max());
  const jr::ObjectReader m = r.Child("mask", {"label", "hash"});
  p.mask_label = m.String("label", true);
  p.mask_hash = m.String("hash", true);
  p.scheme_code = r.String("scheme_code", true);
  p.backend = r.String("backend", true);
  p.source_plan = r.String("source_plan", true);
  p.created_by = r.String("created_by", true);
  p.created_at = r.String("created_at", true);
  const jr::ObjectReader d =
      r.Child("device", {"name", "peak_dram_bytes_per_s", "peak_flops_per_s"});
  p.device_name = d.String("name", true);
  p.peak_dram_bytes_per_s = NumOrNull(d, "peak_dram_bytes_per_s");
  p.peak_flops_per_s = NumOrNull(d, "peak_flops_per_s");
  p.layer_flops = NumOrNull(r, "layer_flops");
  p.layer_min_bytes = NumOrNull(r, "layer_min_bytes");
  const Json& notes = r.Array("notes");
  for (size_t i = 0; i < notes.size(); ++i)
    p.notes.push_back(jr::ReadString(notes[i], jr::Index(r.PathOf("notes"), i), true));
  auto layer = ProfileFromJson(r.Require("layer"), r.PathOf("layer"));
  if (!layer.IsOk()) throw jr::JsonPathError(layer.Message());
  p.layer = std::move(*layer);
  const Json& segs = r.Array("segments");
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string sp = jr::Index(r.PathOf("segments"), i);
    const jr::ObjectReader s(segs[i], sp, sp + ".",
                             {"index", "ops", "template", "how", "flops", "min_bytes", "profile"});
    SegmentProfile sg;
    sg.index = static_cast<int>(s.Int("index", 0, std::numeric_limits<int>::max()));
    sg.ops = s.String("ops", false);
    sg.tmpl = s.String("template", true);
    sg.how = s.String("how", true);
    sg.flops = NumOrNull(s, "flops");
    sg.min_bytes = NumOrNull(s, "min_bytes");
    auto prof = ProfileFromJson(s.Require("profile"), s.PathOf("profile"));
    if (!prof.IsOk()) throw jr::JsonPathError(prof.Message());
    sg.profile = std::move(*prof);
    p.segments.push_back(std::move(sg));
  }
  return p;
}

// One latency figure as a profile: events "available" (the figure is a CUDA-event median taken
// when the plan was tuned), nothing else.
ProfileResult FromFigure(const std::string& label, double us, const MeasureOptions& base,
                         const std::string& why_not) {
  ProfileResult r;
  r.profiler = "plan";
  r.label = label;
  r.options = base;
  r.options.label = label;
  r.options.runs = 1;
  r.options.warmup = 0;
  r.availability.events = true;
  r.availability.activity_why_not = why_not;
  r.availability.range_why_not = why_not;
  r.latency.runs = 1;
  r.latency.median_us = r.latency.min_us = r.latency.max_us = r.latency.mean_us = us;
  r.latency.samples_us = {us};
  ComputeSummary(&r);
  r.summary.latency_source = "plan";
  return r;
}

}  // namespace

engine::Expected<LayerProfile> ProfileLayer(engine::LayerRunner& runner, Profiler& profiler,
                                            const engine::DeviceSpec& device,
                                            const LayerProfileOptions& options) {
  const std::string what = "profile layer: ";
  if (options.measure.runs < 1)
    return engine::MakeError(what + "measure.runs: must be at least 1, got " +
                             std::to_string(options.measure.runs));
  const std::vector<engine::SegmentRun>& runs = runner.Segments();
  if (runs.empty())
    return engine::MakeError(what + "the runner has no segments (a failed Rebind?)");
  const engine::OpGraph& g = runner.Graph();

  LayerProfile p;
  p.model = g.model;
  p.batch = g.batch;
  p.seq_len = g.seq_len;
  p.label = g.model + " " + std::to_string(g.batch) + "x" + std::to_string(g.seq_len);
  p.created_by = "stof";
  p.created_at = NowIso8601Utc();
  p.device_name = device.name;
  p.peak_dram_bytes_per_s = device.dram_bytes_per_s;
  p.peak_flops_per_s = device.fp16_tensor_flops;
  p.layer_flops = static_cast<double>(g.TotalFlops());
  p.layer_min_bytes = static_cast<double>(g.TotalBytes());
  std::vector<engine::Segment> segs;
  for (const engine::SegmentRun& s : runs) segs.push_back(s.segment);
  auto code = engine::SegmentsToCode(segs, '0', "runner segments");
  if (code.IsOk()) p.scheme_code = *code;

  MeasureOptions base = options.measure;
  base.peak_dram_bytes_per_s = device.dram_bytes_per_s;
  base.peak_flops_per_s = device.fp16_tensor_flops;
  const size_t n = runs.size();
  const size_t parts = options.segments ? n + 1 : 1;
  MeasureOptions layer_o = base;
  layer_o.label = "layer";
  layer_o.flop_count = p.layer_flops;
  layer_o.min_bytes = p.layer_min_bytes;

  if (options.segments) {
    for (size_t i = 0; i < n; ++i) {
      const engine::SegmentRun& run = runs[i];
      SegmentProfile sp;
      sp.index = static_cast<int>(i);
      sp.ops = engine::SegmentLabel(run.segment);
      sp.tmpl = run.match.Name();
      sp.how = run.how;
      SegmentCost(g, run.segment, &sp.flops, &sp.min_bytes);
      const std::string part =
          "segment " + std::to_string(i + 1) + "/" + std::to_string(n) + " (" + sp.ops + ")";
      if (options.progress && !options.progress(part, static_cast<double>(i) / parts)) {
        p.notes.push_back("cancelled before " + part);
        p.layer = Unmeasured(layer_o, "cancelled");
        return p;
      }
      MeasureOptions o = base;
      o.label = "segment " + std::to_string(i + 1) + " (" + sp.ops + ")";
      o.flop_count = sp.flops;
      o.min_bytes = sp.min_bytes;
      auto r = profiler.Measure([&runner, i](void* stream) { return runner.RunSegment(i, stream); },
                                o);
      if (!r.IsOk()) return engine::MakeError(what + o.label + ": " + r.Message());
      sp.profile = std::move(*r);
      p.segments.push_back(std::move(sp));
    }
  }
  if (options.progress && !options.progress("layer", static_cast<double>(parts - 1) / parts)) {
    p.notes.push_back("cancelled before layer");
    p.layer = Unmeasured(layer_o, "cancelled");
    return p;
  }
  auto r = profiler.Measure([&runner](void* stream) { return runner.Run(stream); }, layer_o);
  if (!r.IsOk()) return engine::MakeError(what + "layer: " + r.Message());
  p.layer = std::move(*r);
  if (options.progress) options.progress("done", 1.0);
  return p;
}

nlohmann::json LayerProfileToJson(const LayerProfile& p) {
  Json segs = Json::array();
  for (const SegmentProfile& s : p.segments)
    segs.push_back({{"index", s.index},
                    {"ops", s.ops},
                    {"template", s.tmpl},
                    {"how", s.how},
                    {"flops", Num(s.flops)},
                    {"min_bytes", Num(s.min_bytes)},
                    {"profile", ProfileToJson(s.profile)}});
  return Json{{"schema", kLayerProfileSchemaName},
              {"version", LayerProfile::kSchemaVersion},
              {"label", p.label},
              {"model", p.model},
              {"batch", p.batch},
              {"seq_len", p.seq_len},
              {"mask", {{"label", p.mask_label}, {"hash", p.mask_hash}}},
              {"scheme_code", p.scheme_code},
              {"backend", p.backend},
              {"source_plan", p.source_plan},
              {"created_by", p.created_by},
              {"created_at", p.created_at},
              {"device",
               {{"name", p.device_name},
                {"peak_dram_bytes_per_s", Num(p.peak_dram_bytes_per_s)},
                {"peak_flops_per_s", Num(p.peak_flops_per_s)}}},
              {"layer_flops", Num(p.layer_flops)},
              {"layer_min_bytes", Num(p.layer_min_bytes)},
              {"notes", p.notes},
              {"layer", ProfileToJson(p.layer)},
              {"segments", segs}};
}

engine::Expected<LayerProfile> LayerProfileFromJson(const nlohmann::json& j,
                                                    const std::string& what) {
  try {
    return Read(j, what);
  } catch (const std::exception& e) {
    return engine::Error{e.what()};
  }
}

engine::Status SaveLayerProfile(const std::string& path, const LayerProfile& p) {
  return WriteJsonFile(path, LayerProfileToJson(p));
}

engine::Expected<LayerProfile> LoadLayerProfile(const std::string& path) {
  STOF_ASSIGN_OR_RETURN(auto text, engine::ReadFileBounded(path, {"layer profiles",
                                                                  kMaxLayerProfileFileBytes}));
  STOF_ASSIGN_OR_RETURN(auto j, engine::ParseJson(text, path));
  return LayerProfileFromJson(j, path);
}

engine::Expected<LayerProfile> LayerProfileFromPlan(const engine::Plan& plan,
                                                    const std::string& what) {
  const std::string at = what.empty() ? std::string() : what + ": ";
  // "segment N" -> figure; N from 1 (tuned_plan.cpp).
  std::vector<const engine::PlanMeasurement*> seg_m(plan.fusion.segments.size(), nullptr);
  const engine::PlanMeasurement* layer_m = nullptr;
  bool any = false;
  for (size_t i = 0; i < plan.measurements.size(); ++i) {
    const engine::PlanMeasurement& m = plan.measurements[i];
    const std::string field = at + "measurements[" + std::to_string(i) + "]";
    if (m.what == "layer" || m.what == "total") {
      if (layer_m == nullptr) layer_m = &m;
      continue;
    }
    if (m.what.rfind("segment ", 0) != 0) continue;
    const std::optional<int64_t> k = engine::PlanSegmentNumber(m.what);
    if (!k)
      return engine::MakeError(field + ".what: expected 'segment N' with N >= 1, got '" +
                               engine::TextForMessage(m.what) +
                               "'");
    if (static_cast<size_t>(*k) > seg_m.size())
      return engine::MakeError(field + ".what: '" + engine::TextForMessage(m.what) +
                               "' but fusion.segments has " +
                               std::to_string(seg_m.size()) + " segments");
    if (!std::isfinite(m.latency_us) || m.latency_us < 0)
      return engine::MakeError(field + ".latency_us: expected a finite number >= 0");
    seg_m[static_cast<size_t>(*k - 1)] = &m;
    any = true;
  }
  if (!any)
    return engine::MakeError(at + "measurements: the plan has no per-segment measurements "
                                  "(\"segment N\", written by `stof tune`); nothing to profile");

  LayerProfile p;
  p.model = plan.model ? plan.model->name : "";
  p.batch = plan.workload.batch;
  p.seq_len = plan.workload.seq_len;
  p.mask_label = plan.mask.has_spec ? engine::Describe(plan.mask.spec) : "inline";
  p.mask_hash = plan.mask.hash;
  p.scheme_code = plan.fusion.code;
  p.backend = "";
  p.source_plan = what;
  p.created_by = "plan";
  p.created_at = NowIso8601Utc();
  p.device_name = plan.device.name;
  p.peak_dram_bytes_per_s = plan.device.dram_bytes_per_s;
  p.peak_flops_per_s = plan.device.fp16_tensor_flops;
  p.label = (p.model.empty() ? std::string("layer") : p.model) + " " + std::to_string(p.batch) +
            "x" + std::to_string(p.seq_len) + " " + p.mask_label + " (from plan " +
            (what.empty() ? std::string("?") : what) + ", " + plan.tuning.method + ")";

  // FLOPs and bytes need the layer graph, which only a plan with a model describes.
  std::optional<engine::OpGraph> g;
  if (plan.model) {
    auto built = engine::PlanGraph(plan, plan.workload.dtype, what);
    if (built.IsOk()) g = std::move(*built);
  }
  if (!g) p.notes.push_back("the plan has no model: FLOPs and minimum bytes unknown (0)");
  p.notes.push_back("from a plan: latency figures only, made when it was tuned on " +
                    plan.device.name);

  MeasureOptions base;
  base.peak_dram_bytes_per_s = p.peak_dram_bytes_per_s;
  base.peak_flops_per_s = p.peak_flops_per_s;
  const std::string why = "a plan holds latency figures only";
  double sum = 0;
  bool all = true;
  for (size_t i = 0; i < plan.fusion.segments.size(); ++i) {
    const engine::PlanSegment& ps = plan.fusion.segments[i];
    SegmentProfile sp;
    sp.index = static_cast<int>(i);
    engine::Segment s;
    if (!ps.ops.empty()) {
      s.first = static_cast<int>(ps.ops.front());
      s.last = static_cast<int>(ps.ops.back());
    }
    sp.ops = engine::SegmentLabel(s);
    sp.tmpl = ps.template_name;
    sp.how = ps.params.empty() ? "plan" : "plan " + engine::JsonForMessage(ps.params);
    if (g && s.first >= 1 && s.last <= g->Size()) SegmentCost(*g, s, &sp.flops, &sp.min_bytes);
    const engine::PlanMeasurement* m = seg_m[i];
    MeasureOptions o = base;
    o.flop_count = sp.flops;
    o.min_bytes = sp.min_bytes;
    const std::string label = "segment " + std::to_string(i + 1) + " (" + sp.ops + ") from plan";
    if (m == nullptr) {
      o.label = label;
      sp.profile = Unmeasured(o, "the plan has no measurement of this segment");
      all = false;
    } else {
      sp.profile = FromFigure(label, m->latency_us, o, why);
      if (!m->measured)
        sp.profile.notes.push_back("predicted by the analytical model when tuned, not measured");
      sum += m->latency_us;
    }
    p.segments.push_back(std::move(sp));
  }
  MeasureOptions lo = base;
  if (g) {
    lo.flop_count = p.layer_flops = static_cast<double>(g->TotalFlops());
    lo.min_bytes = p.layer_min_bytes = static_cast<double>(g->TotalBytes());
  }
  if (layer_m != nullptr) {
    p.layer = FromFigure("layer from plan", layer_m->latency_us, lo, why);
    if (!layer_m->measured)
      p.layer.notes.push_back("predicted by the analytical model when tuned, not measured");
  } else if (all) {
    p.layer = FromFigure("layer from plan", sum, lo, why);
    p.layer.notes.push_back("the sum of the segment figures (the plan has no layer figure)");
  } else {
    lo.label = "layer from plan";
    p.layer = Unmeasured(lo, "the plan has no layer figure and not every segment's");
  }
  return p;
}

}  // namespace stof::profiler
