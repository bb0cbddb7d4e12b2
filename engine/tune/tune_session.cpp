// RunTuneSession, MakeSegmentPredictor, ParseTuneBudget, MeasurePlan (tune_session.h).
#include "engine/tune/tune_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/fusion/default_scheme.h"
#include "engine/plan/plan_choices.h"
#include "engine/tune/measured_cost_source.h"
#include "engine/tune/predicted_cost_source.h"
#include "engine/tune/segment_model.h"
#include "engine/tune/tuned_plan.h"

namespace stof::engine {

Predictor MakeSegmentPredictor(const OpGraph& g, const Mask& mask, const DeviceSpec& device) {
  return [g, &mask, device](const Segment& s, const SegmentChoice& c) -> Expected<Prediction> {
    STOF_ASSIGN_OR_RETURN(auto p, PredictSegment(g, s, c, mask, device));
    return Prediction{p.us, p.bytes};
  };
}

Status ParseTuneBudget(const std::string& text, TuneOptions* o, const std::string& what) {
  if (text.empty()) return Status::Ok();
  const auto bad = [&] {
    std::string m = what;
    m += ": expected seconds (60s, 2m, 1h) or candidates (200c), got '";
    m += text;
    m += "'";
    return MakeError(m);
  };
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    return bad();
  }
  const std::string unit = text.substr(used);
  if (!(v > 0) || !std::isfinite(v)) return bad();
  if (unit.empty() || unit == "s") o->budget_s = v;
  else if (unit == "m" || unit == "min") o->budget_s = v * 60;
  else if (unit == "h") o->budget_s = v * 3600;
  else if (unit == "c" || unit == "candidates") {
    if (v != std::floor(v) || v > 1e12) return bad();
    o->budget_candidates = static_cast<int64_t>(v);
  } else {
    return bad();
  }
  if (o->budget_s > 1e7) return bad();
  return Status::Ok();
}

Expected<RunReport> MeasurePlan(Backend& backend, const Plan& plan, const OpGraph& graph,
                                const Mask& mask, const MeasureOptions& options,
                                const std::string& name) {
  STOF_ASSIGN_OR_RETURN(auto run, PlanToRun(plan, graph, name));
  ModelRunOptions ro;
  ro.layers = plan.model ? static_cast<int>(plan.model->layers) : static_cast<int>(graph.layers);
  ro.choices = run.choices;
  STOF_ASSIGN_OR_RETURN(auto model, ModelRunner::Create(backend, graph, mask, run.scheme, ro));
  return MeasureModel(backend, *model, options);
}

Expected<std::optional<double>> DefaultLayerCost(CostSource& source) {
  const FusionScheme scheme = DefaultScheme(source.Graph());
  double total = 0;
  for (const Segment& s : scheme.Segments()) {
    STOF_ASSIGN_OR_RETURN(auto choices, source.Choices(s));
    if (choices.empty()) return std::optional<double>();
    STOF_ASSIGN_OR_RETURN(SegmentCost c, source.Cost(s, choices.front()));
    if (!c.Ok()) return std::optional<double>();
    total += c.us;
  }
  return std::optional<double>(total);
}

Expected<TuneSessionResult> RunTuneSession(const TuneSessionRequest& rq, TuneObserver* observer) {
  if (rq.mask == nullptr) return MakeError("tune: no mask");
  const Mask& mask = *rq.mask;
  if (mask.Rows() != rq.graph.seq_len || mask.Cols() != rq.graph.seq_len)
    return MakeError("tune: mask: " + std::to_string(mask.Rows()) + " x " +
                     std::to_string(mask.Cols()) + " does not fit seq_len " +
                     std::to_string(rq.graph.seq_len));
  STOF_RETURN_IF_ERROR(rq.options.Validate("tune"));
  if (rq.repeats < 1) return MakeError("tune: repeats: must be at least 1");

  TuneSessionResult out;
  out.graph = rq.graph;
  OpGraph& g = out.graph;
  const DeviceSpec spec = rq.backend ? rq.backend->Device() : rq.device;
  if (rq.backend) g.dtype = StorageTypeFor(*rq.backend);

  const auto setup_start = std::chrono::steady_clock::now();
  std::unique_ptr<CostSource> source;
  if (rq.backend) {
    MeasureOptions mo;
    mo.warmup = 2;
    mo.repeats = rq.repeats;
    mo.max_seconds = 1;
    mo.graph = rq.gpu;
    // Every layer of the model (each with its own weights, as in the model), so a segment's
    // weights are as cold in L2 as they are in the model; a CPU reference run keeps one.
    const int layers = rq.gpu ? static_cast<int>(std::min<int64_t>(g.layers, 64)) : 1;
    auto s = MeasuredCostSource::Create(*rq.backend, g, mask, mo,
                                        MakeSegmentPredictor(g, mask, spec), 1, layers);
    if (!s.IsOk()) return s.ToStatus();
    source = std::move(*s);
    out.device_text = source->Describe();
  } else {
    source = std::make_unique<PredictedCostSource>(g, mask, spec, MakeSegmentPredictor(g, mask, spec),
                                                   rq.run_chooser);
    out.device_text = source->Describe();
  }
  out.setup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();

  auto result = Tune(*source, rq.options, observer, rq.cache);
  if (!result.IsOk()) return result.ToStatus();
  out.result = std::move(*result);
  const TuneResult& r = out.result;
  if (!(rq.options.cancel && rq.options.cancel->load())) {
    // Without it the views show no speed-up rather than one over another baseline.
    if (auto d = DefaultLayerCost(*source); d.IsOk()) out.default_layer_us = *d;
  }

  TunedPlanInfo info;
  info.device = spec;
  // Measured on the CPU reference: the plan says so (the backend's name, "cpu", which `stof
  // run --device cpu` compares with), not the GPU whose figures the kernel choice predicts for.
  if (rq.backend && !rq.gpu) info.device.name = rq.backend->Name();
  info.spec = rq.spec ? &*rq.spec : nullptr;
  info.separate_bias = rq.separate_bias;
  info.options = rq.options;
  info.created_by = rq.created_by;
  out.layers = static_cast<int>(g.layers);
  const bool cancelled = rq.options.cancel && rq.options.cancel->load();
  if (rq.backend && rq.measure_model && !cancelled) {
    MeasureOptions mo;
    mo.repeats = rq.repeats;
    mo.max_seconds = 5;
    mo.graph = rq.gpu;
    source.reset();  // free the tuner's layers before whole models are allocated
    for (int which = 0; which < 2; ++which) {
      ModelRunOptions ro;
      ro.layers = out.layers;
      const FusionScheme sch = which == 0 ? r.scheme : DefaultScheme(g);
      if (which == 0) ro.choices = r.choices;
      const char* what = which == 0 ? "tuned model: " : "default model: ";
      auto model = ModelRunner::Create(*rq.backend, g, mask, sch, ro);
      if (!model.IsOk()) return MakeError(what + model.Message());
      auto rep = MeasureModel(*rq.backend, **model, mo);
      if (!rep.IsOk()) return MakeError(what + rep.Message());
      (which == 0 ? info.model_us : info.default_model_us) = rep->total_us;
      out.model_method = rep->method;
    }
  }
  out.model_us = info.model_us;
  out.default_model_us = info.default_model_us;
  auto plan = MakeTunedPlan(r, g, mask, info);
  if (!plan.IsOk()) return plan.ToStatus();
  out.plan = std::move(*plan);
  return out;
}

}  // namespace stof::engine
