// CostSource: where the tuner gets a segment's candidate choices and their costs. Two kinds:
// MeasuredCostSource (measured_cost_source.h) times the segment's real backend calls through
// engine::Backend (a GPU, or a scripted fake in tests); PredictedCostSource
// (predicted_cost_source.h) asks the analytical models, so the tuner can teach on a laptop.
// The search methods only see this interface (through TuneContext, tune_context.h).
// Also the text forms used as cache keys and in tables: SegmentSignature, ChoiceText.
// Invariants: Choices() is non-empty and its first element is the segment's default choice
// (the kernels' own pick, Eq. 1 / Eq. 2 for attention); it is the same list for the same
// segment every time (searches are deterministic for a seed).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/fusion/template_match.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/tune/tune_types.h"

namespace stof::engine {

struct Prediction {
  double us = 0;
  double bytes = 0;
};
using Predictor =
    std::function<Expected<Prediction>(const Segment& s, const SegmentChoice& choice)>;

class CostSource {
 public:
  explicit CostSource(Predictor predictor) : m_predictor(std::move(predictor)) {}
  virtual ~CostSource() = default;
  virtual bool Measures() const = 0;           // false: predictions only
  virtual std::string Describe() const = 0;    // "cuda:0 (NVIDIA H100 80GB HBM3)", "predicted: H100-SXM-80GB"
  virtual std::string DeviceName() const = 0;  // the cache key's device part
  virtual const OpGraph& Graph() const = 0;
  virtual const Mask& UserMask() const = 0;
  virtual DeviceSpec Device() const = 0;       // what the analytical models assume
  // Candidate choices for segment `s`, default first.
  virtual Expected<std::vector<SegmentChoice>> Choices(const Segment& s) = 0;
  // The cost of `s` under `c`: measured, or for a source that does not measure, predicted.
  // `predicted_us` and `bytes` are left to the caller (Predict). An error is a failure of the
  // source itself (device lost); a choice that cannot run returns a SegmentCost with `error`.
  virtual Expected<SegmentCost> Cost(const Segment& s, const SegmentChoice& c) = 0;
  // The analytical model's figure for `s` under `c` (an error when there is no model for it).
  Expected<Prediction> Predict(const Segment& s, const SegmentChoice& c) const;

 private:
  Predictor m_predictor;
};

// The segment as the cache sees it: op kinds with their shapes, biases and causal flags, and
// the mask hash when it holds attention ops ("Gemm[8,512,768>8,512,2304]b|...|mask 1f3a...").
std::string SegmentSignature(const OpGraph& g, const Segment& s, const Mask& mask);
// "fused block_wise 64x64 w4", "sdf T64", "algo=3", "rows_per_block=4 threads_per_row=32",
// "op by op", "default".
std::string ChoiceText(const SegmentChoice& c, TemplateKind kind);
// The template that actually runs `s` under `c` ("" op by op): the match, unless forced op by
// op or an inner output escapes (layer_runner.h's on-chip rule).
TemplateKind RunningTemplate(const OpGraph& g, const Segment& s, const SegmentChoice& c);

}  // namespace stof::engine

namespace stof::engine {

// Fused-MHA configurations in the tuner's order: `configs[0]` (the backend's own pick) first,
// then block-wise ones by Eq. 2's score for `workload` on `device` (best first; ones Eq. 2
// finds infeasible last), then row-wise. Configurations Eq. 2 does not enumerate keep their
// order after the ranked ones.
std::vector<MhaConfig> RankMhaConfigs(const std::vector<MhaConfig>& configs,
                                      const Workload& workload, const DeviceSpec& device);

// A scheme of `g` in which `s` is one segment and every other op its own: the context in
// which the tuner times `s` (a segment's calls do not depend on how the others are cut).
FusionScheme SchemeIsolating(const OpGraph& g, const Segment& s);
// The position of `s` in `scheme`'s segments, or -1.
int SegmentIndex(const FusionScheme& scheme, const Segment& s);

}  // namespace stof::engine

#include "engine/mcfuser/candidate.h"

namespace stof::engine {

// The MCFuser shape (batch 1, M rows, N = GEMM1's width, K = its depth, H = GEMM2's width) of
// a segment holding two GEMMs; an error naming the segment otherwise.
Expected<GemmChainShape> ChainShapeOf(const OpGraph& g, const Segment& s);
// The chain kernel's parameter names for a candidate's tiles (warps 4: the kernel's default).
ParamMap ChainParams(const Candidate& c);

}  // namespace stof::engine
