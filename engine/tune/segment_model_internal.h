// The pieces of the analytical segment model (segment_model.h) that its files share: a kernel
// launch's traffic and rates, the kernels of one timed unit, and the plans built from them:
// an MhaCall's (segment_model_mha.cpp), a segment's fused or op by op
// (segment_model_segments.cpp). Included only by those files and segment_model.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/fusion/template_match.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/mcfuser/chain_shape.h"
#include "engine/run/segment_choice.h"
#include "engine/tune/segment_model.h"

namespace stof::engine::segment_model_detail {

// One kernel launch: its traffic, work and the rates it gets. `floor_s` is a kernel-specific
// lower bound (MCFuser's estimate, gemm_norm's W streaming, a block row's serial steps), 0
// when there is none. `l2` is the L2 speed-up its bytes get when they fit (1: none).
struct Kernel {
  double bytes = 0, flops = 0;
  double bw_eff = 0, tc_eff = 0;
  double floor_s = 0;
  double l2 = 1;
};

// The kernels of one timed unit and how to describe them.
struct Plan {
  std::string label;  // "gemm_act", "op by op", "sparse_mha block_wise 64x64x4"
  std::string note;   // extra clause for the basis line ("256 valid 64x64 blocks/head"), or ""
  std::vector<Kernel> kernels;
  void Add(const Kernel& k) { kernels.push_back(k); }
  void Append(const Plan& p) { kernels.insert(kernels.end(), p.kernels.begin(), p.kernels.end()); }
};

// "12.6", "0.42", "1260": three significant digits, no exponent (segment_model.cpp).
std::string Fmt(double v);

// ---- An MhaCall (segment_model_mha.cpp) --------------------------------------------------

// The kernels of one MhaCall (packed operands, or the block-wise kernel's strided views,
// which move the same bytes).
Expected<Plan> MhaPlan(const Workload& w, const Mask& mask, MhaVariant variant,
                       const MhaConfig& config, int64_t sub_len, const DeviceSpec& dev,
                       const SegmentModelConstants& k, bool scale_q);

// ---- A segment (segment_model_segments.cpp) ----------------------------------------------

// A segment op by op: each op's kernel, and the head split / merge around a batched GEMM.
Plan OpByOpPlan(const OpGraph& g, const Segment& s, const SegmentModelConstants& k);
// A segment under its template's fused kernel (or kernels) with the segment's choice.
Expected<Plan> FusedPlan(const OpGraph& g, const Segment& s, TemplateKind kind,
                         const SegmentChoice& choice, const Mask& mask, const DeviceSpec& dev,
                         const SegmentModelConstants& k);
// MCFuser's estimate of one chain kernel at `tiles`, with the minimum bytes it moves.
Expected<Kernel> ChainKernel(const GemmChainShape& shape, const ChainTiles& tiles,
                             const DeviceSpec& dev, const SegmentModelConstants& k,
                             double min_bytes);

}  // namespace stof::engine::segment_model_detail
