// The analytical segment cost model: what one fused segment (or its ops one by one) should
// take on a device, predicted from its bytes and FLOPs, without running anything. The tuner
// ranks candidates with it on a machine without a GPU (the results are PREDICTIONS and say
// so), and on a GPU machine the studio plots each measured candidate against its prediction.
// Mirrors the layer runner's lowering (engine/run/segment_lowering.h) call for call: a
// segment runs fused when it matches a template, is not forced op by op and keeps every inner
// output on chip (EscapingInnerOutput), else op by op, one kernel per op plus the head
// split/merge kernels attention GEMMs need.
// Per kernel: t = max(bytes / (eff_bw * DRAM bandwidth), flops / (eff_tc * tensor peak),
// kernel-specific bound) + launch; per segment + the measured fixed cost of one timed unit.
// The efficiencies are fitted to H100 measurements (docs/tuner-model.md, "Analytical segment
// model"; tests/engine/segment_model_test.cpp reproduces the fit's accuracy).
// Invariants: a prediction is a pure function of its inputs; bytes and flops are those of the
// kernels that would run (fused: inner outputs kept on chip excluded); us > 0 for any valid
// input (every kernel pays its launch).
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/mcfuser/chain_shape.h"
#include "engine/run/segment_choice.h"

namespace stof::engine {

struct SegmentPrediction {
  double us = 0;      // predicted time of the segment timed alone (CUDA graph replay)
  double bytes = 0;   // DRAM bytes of its kernels (block-wise MHA: with the K/V tile reloads)
  double flops = 0;   // FLOPs its kernels execute (block kernels: whole valid blocks)
  int kernels = 0;    // kernel launches
  // One line: "gemm_act: 1 kernel; 36.2 MB at 3.62 TB/s; 19.4 GFLOP at 684 TFLOP/s;
  // +1x1.45 us launch +4.23 us" (rates are the effective ones, L2 share included).
  std::string basis;
};

// The fitted constants (efficiencies are fractions of DeviceSpec's peaks). The defaults are
// the H100 fit; PredictSegment without constants uses them for every device, so on another
// GPU the prediction scales with its data-sheet bandwidth and tensor rate only.
struct SegmentModelConstants {
  double bw_eff = 0;          // DRAM bandwidth fraction: cuBLAS GEMMs and element-wise kernels
  double tc_eff = 0;          // tensor-core fraction: cuBLAS(Lt) GEMMs
  // A kernel whose bytes fit in L2 moves them l2_speedup x faster than from DRAM (timed
  // segments are replayed, so their working set stays in L2): the fraction at L2 speed is
  // h = clamp(2 (l2_bytes - bytes) / l2_bytes, 0, 1) (all up to half of L2, none beyond it).
  double l2_speedup = 0;
  double launch_us = 0;       // per kernel of a segment
  double segment_us = 0;      // per timed segment (graph launch + events), once
  double mha_bw_eff = 0;      // block-wise MHA at OCC 1: fraction for q, o and K/V tile reloads
  double mha_tc_eff = 0;      // block-wise MHA at OCC 1 / SDF GEMMs: tensor fraction
  double mha_occ_exp = 0;     // block-wise MHA: both rates x (Eq. 2 OCC)^mha_occ_exp
  // Block-wise MHA and SDF's GS+PV: the busiest block row's valid blocks run one after the
  // other on one SM at this fraction of the SM's share of the tensor peak (batch-1 global
  // rows: the rest of the GPU idles).
  double mha_row_step_eff = 0;
  double chain_scale = 0;     // gemm_chain: t = chain_scale x MCFuser's (t_mem + t_comp) alpha
  double gemm_norm_block_bytes_per_s = 0;  // gemm_norm: one row block streams W at this rate
  double row_wise_flops_frac = 0;  // row-wise MHA: fp32 CUDA-core rate / fp16 tensor peak
};
// The H100-SXM-80GB fit (values and errors in segment_model.cpp and docs/tuner-model.md).
const SegmentModelConstants& H100SegmentConstants();

// Errors: `s` outside the graph ("segment model: segment [#3-#20]: outside ops 1..14"), a mask
// that is not seq_len x seq_len, an invalid device, choice parameters the kernels would refuse
// (MHA block sizes, GEMM-chain tiles, sub_len).
Expected<SegmentPrediction> PredictSegment(const OpGraph& g, const Segment& s,
                                           const SegmentChoice& choice, const Mask& mask,
                                           const DeviceSpec& device);
Expected<SegmentPrediction> PredictSegment(const OpGraph& g, const Segment& s,
                                           const SegmentChoice& choice, const Mask& mask,
                                           const DeviceSpec& device,
                                           const SegmentModelConstants& k);

// The attention call alone, timed alone (packed q, k, v, o: no head split or merge; `mask`
// already combined with causal where needed): what `stof bench|profile mha` measures.
// `scale_q` adds the q pre-scaling kernel the non-block-wise kernels need for a score scale
// other than 1/sqrt(d).
Expected<SegmentPrediction> PredictMhaCall(const Workload& w, const Mask& mask, MhaVariant variant,
                                           const MhaConfig& config, int64_t sub_len,
                                           const DeviceSpec& device,
                                           const SegmentModelConstants& k,
                                           bool scale_q = false);

// MCFuser's chain kernel (expression mhnk) with `tiles`, timed alone (`stof bench chain`).
Expected<SegmentPrediction> PredictGemmChain(const GemmChainShape& shape, const ChainTiles& tiles,
                                             const DeviceSpec& device,
                                             const SegmentModelConstants& k);

}  // namespace stof::engine
