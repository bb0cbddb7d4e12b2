// A whole tuning run as `stof tune` and the studio's tune panel do it, so both front ends
// share one piece of code: the cost source for the chosen device (segments timed on a
// backend across the model's layers, or the analytical model), the tuner with the caller's
// observer, the whole model timed tuned and default on the same backend, and the tuned plan.
// Also what both parse from text (budgets) and the "run plan again" measurement.
// Invariants: a session without a backend measures nothing and says so (result.measured and
// the plan's measurements are predictions); the request's mask outlives the call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/mha_run.h"
#include "engine/backend.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan.h"
#include "engine/run/model_runner.h"
#include "engine/tune/cost_source.h"
#include "engine/tune/tune_cache.h"
#include "engine/tune/tuner.h"

namespace stof::engine {

struct TuneSessionRequest {
  OpGraph graph;                 // the layer at (batch, seq); dtype is set from the backend
  const Mask* mask = nullptr;    // seq_len x seq_len
  std::optional<MaskSpec> spec;  // the mask's generator (else the plan holds it inline)
  Backend* backend = nullptr;    // null: predict on `device`
  bool gpu = false;              // backend is a GPU: CUDA graphs, every layer timed
  DeviceSpec device;             // predictions' device when there is no backend
  // What runs (the kernels' rules, app/common/run_choice.h) for predictions; null: the
  // engine's model of them (engine/analysis/mha_run.h).
  MhaRunChooser run_chooser;
  TuneOptions options;
  TuneCache* cache = nullptr;    // measurements only
  int repeats = 3;               // timed runs per candidate
  bool measure_model = true;     // time the whole model tuned and default afterwards
  bool separate_bias = false;    // the graph was built with separate Bias ops
  std::string created_by = "stof";
};

struct TuneSessionResult {
  TuneResult result;
  Plan plan;
  OpGraph graph;                 // as tuned (its dtype is the backend's storage type)
  std::string device_text;       // "cuda:0 (...)  N layers, CUDA graphs" / "predicted: H100..."
  std::optional<double> model_us, default_model_us;  // every layer, tuned and default
  // One layer of the untuned default (DefaultScheme, each segment's default choice) on the
  // same cost source as the tuning, measured or predicted as `result.measured` says: the one
  // baseline every method's speed-up is over (each method's own initial scheme differs).
  std::optional<double> default_layer_us;
  int layers = 0;
  std::string model_method;      // Measurement::method of the model timings
  double setup_s = 0;            // layers, weights and buffers before the tuning started
};

// The untuned default layer's cost on `source`: DefaultScheme(graph) with every segment's
// first (default) choice. nullopt when a segment's default does not run there.
Expected<std::optional<double>> DefaultLayerCost(CostSource& source);

Expected<TuneSessionResult> RunTuneSession(const TuneSessionRequest& request,
                                           TuneObserver* observer);

// The analytical segment model (segment_model.h) as the tuner's Predictor. `mask` must
// outlive the predictor.
Predictor MakeSegmentPredictor(const OpGraph& g, const Mask& mask, const DeviceSpec& device);

// "60s", "60" (seconds), "2m", "1.5h", "200c" (candidates); "" leaves the options alone.
// `what` names the field in messages ("--budget", "budget").
Status ParseTuneBudget(const std::string& text, TuneOptions* options, const std::string& what);

// A plan's whole model measured again (its layers, scheme and choices) on `backend`: what
// `stof run --plan` and the studio's "run plan" report. `graph` and `mask` are the plan's.
Expected<RunReport> MeasurePlan(Backend& backend, const Plan& plan, const OpGraph& graph,
                                const Mask& mask, const MeasureOptions& options,
                                const std::string& name);

}  // namespace stof::engine
