// What a segment is lowered to: its backend calls (LayerCall, engine/layer_ops.h and MhaCall),
// each with a label, and per segment whether its template's fused call is used and why
// (SegmentRun). Built by the lowering of engine/run/segment_lowering.h, held and run by
// LayerRunner (layer_runner.h); read through LayerRunner::Segments() by ModelRunner, the
// tuner's measured cost source and the profiler, which time and label segments.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "engine/backend.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/fusion/template_match.h"
#include "engine/layer_ops.h"

namespace stof::engine {

// One backend call with a label ("gemm #1 +bias", "split heads q").
using LayerCall = std::variant<GemmCall, BatchedGemmCall, EpilogueCall, NormCall, GemmNormCall,
                               GemmChainCall, ScoresCall, HeadsCall, MhaCall>;
struct LayerStep {
  std::string label;
  LayerCall call;
};

struct SegmentRun {
  Segment segment;
  TemplateMatch match;     // what the graph matched
  bool fused = false;      // the template's fused call is used
  std::string how;         // "gemm_norm (bm=32 ...)", "op by op: op 9's output is read by op 14"
  std::vector<LayerStep> steps;
};

}  // namespace stof::engine
