// Lowering: one segment of a fusion scheme -> the backend calls that run it (LayerSteps). A
// fused segment becomes its template's one call, plus the head split / merge that attention
// needs unless the block-wise kernel reads strided views; any other segment becomes one call
// per op. Attention glue: our MHA kernels and batched GEMMs take q, k, v as [B, H, L, d],
// while the graph's projections produce [B, L, 3 H d] (or [B, L, H d] / [B, L, 2 H d] for
// T5's cross attention), so an attention block splits heads before and merges them after;
// those steps are labelled and belong to the segment that needs them.
// LayerRunner::BuildSegments (layer_runner.cpp) calls these for each segment once it has
// decided which segments run fused and has materialised the outputs that reach memory. One
// function per template (fused_segment_lowering.cpp) and per op kind (op_by_op_lowering.cpp);
// they share the buffer look-ups of segment_binder.h. Used only by engine/run/.
#pragma once

#include <vector>

#include "engine/core/status.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/fusion/template_match.h"
#include "engine/run/layer_steps.h"
#include "engine/run/segment_binder.h"
#include "engine/run/segment_choice.h"

namespace stof::engine {

// Appends the template's call for segment `s` (which matched `match` and keeps every inner
// output on chip). Fails for a template without a runner and when the graph's operands do not
// fit the call (attention whose k and v layouts differ, q / k / v not produced in the layer).
Status LowerFusedSegment(SegmentBinder& b, const Segment& s, const TemplateMatch& match,
                         const SegmentChoice& choice, std::vector<LayerStep>& steps);

// Appends one call per op of `s` (with the head split / merge around attention GEMMs). A
// one-op segment's GEMM or norm takes choice.params.
Status LowerOpByOp(SegmentBinder& b, const Segment& s, const SegmentChoice& choice,
                   std::vector<LayerStep>& steps);

}  // namespace stof::engine
