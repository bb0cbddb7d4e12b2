// The analytical segment cost model (segment_model.h): the kernels LayerRunner would launch for
// a segment, each with its bytes, FLOPs and rates, summed into one prediction. This file holds
// the sum, the H100 constants and the entry points; the kernels of an MhaCall are
// segment_model_mha.cpp, a segment's segment_model_segments.cpp (segment_model_internal.h).
#include "engine/tune/segment_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/core/text_format.h"
#include "engine/fusion/default_scheme.h"
#include "engine/fusion/template_match.h"
#include "engine/mcfuser/chain_kernel_map.h"
#include "engine/mcfuser/chain_model.h"
#include "engine/tune/segment_model_internal.h"

namespace stof::engine {

namespace segment_model_detail {

// "12.6", "0.42", "1260": three significant digits, no exponent.
std::string Fmt(double v) {
  char buf[32];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f",
                v);
  return buf;
}

}  // namespace segment_model_detail

namespace {

using segment_model_detail::ChainKernel;
using segment_model_detail::Fmt;
using segment_model_detail::FusedPlan;
using segment_model_detail::Kernel;
using segment_model_detail::MhaPlan;
using segment_model_detail::OpByOpPlan;
using segment_model_detail::Plan;

double MemorySeconds(const Kernel& kn, const DeviceSpec& dev) {
  if (kn.bytes <= 0) return 0;
  // All of it from L2 up to half of L2, none of it from L2 at L2 or beyond, linear between.
  const double l2 = static_cast<double>(dev.l2_bytes);
  const double h = std::clamp(2 * (l2 - kn.bytes) / l2, 0.0, 1.0);
  return kn.bytes * (h / kn.l2 + (1 - h)) / (kn.bw_eff * dev.dram_bytes_per_s);
}

double KernelSeconds(const Kernel& kn, const DeviceSpec& dev) {
  const double comp = kn.flops / (kn.tc_eff * dev.fp16_tensor_flops);
  return std::max({MemorySeconds(kn, dev), comp, kn.floor_s});
}

SegmentPrediction Finish(const Plan& p, const DeviceSpec& dev, const SegmentModelConstants& k) {
  SegmentPrediction r;
  double mem_s = 0, comp_s = 0, t_s = 0, floor_s = 0;
  int floor_bound = 0;
  for (const Kernel& kn : p.kernels) {
    r.bytes += kn.bytes;
    r.flops += kn.flops;
    mem_s += MemorySeconds(kn, dev);
    comp_s += kn.flops / (kn.tc_eff * dev.fp16_tensor_flops);
    const double t = KernelSeconds(kn, dev);
    t_s += t;
    if (kn.floor_s > 0 && kn.floor_s >= t) floor_s += kn.floor_s, ++floor_bound;
  }
  r.kernels = static_cast<int>(p.kernels.size());
  r.us = t_s * 1e6 + r.kernels * k.launch_us + k.segment_us;
  std::string b = p.label + ": " + Str(r.kernels) + (r.kernels == 1 ? " kernel; " : " kernels; ");
  b += Fmt(r.bytes / 1e6) + " MB at " + Fmt(mem_s > 0 ? r.bytes / mem_s / 1e12 : 0) + " TB/s; ";
  b += Fmt(r.flops / 1e9) + " GFLOP at " + Fmt(comp_s > 0 ? r.flops / comp_s / 1e12 : 0) +
       " TFLOP/s";
  if (floor_bound > 0) b += "; " + Fmt(floor_s * 1e6) + " us by the kernel model";
  if (!p.note.empty()) b += "; " + p.note;
  b += "; +" + Str(r.kernels) + "x" + Fmt(k.launch_us) + " us launch +" + Fmt(k.segment_us) +
       " us";
  r.basis = std::move(b);
  return r;
}

}  // namespace

// ---- The H100 fit -------------------------------------------------------------------------
// Fitted to the H100-SXM-80GB measurements in the repository (the segments of `stof run`, the
// fusion-ladder rungs, the GEMM-chain tile settings, the block-wise / native MHA sweep and the
// gemm_norm figures) against the built-in "H100-SXM-80GB" spec, by Nelder-Mead on the log
// constants minimising the mean squared ln(predicted / measured) over all samples
// (tests/bench/segment_model_refit.cpp re-runs it). The data, what each constant saw
// and the accuracy per set: docs/tuner-model.md, "The constants and how they were fitted" and
// "Measured accuracy".
constexpr double kH100BwEff = 0.695;    // 2.33 TB/s: cuBLAS and element-wise streams beyond L2
constexpr double kH100TcEff = 0.691;    // 684 TFLOP/s: cuBLASLt
constexpr double kH100L2Speedup = 2.35; // 5.5 TB/s for working sets under 25 MiB
constexpr double kH100LaunchUs = 1.45;  // each kernel of a CUDA graph after the first
constexpr double kH100SegmentUs = 4.23; // a timed segment's fixed cost: graph launch + events
constexpr double kH100MhaBwEff = 1.28;  // x OCC^0.25: K/V reloads mostly hit L2 (> DRAM peak)
constexpr double kH100MhaTcEff = 0.262; // x OCC^0.25 = 0.196 at 64x64x4 (194 TFLOP/s)
// Held, not fitted: the data's best exponent is about 0, and 0.25 gives Eq. 2's direction
// (more resident warps, faster) at a small loss of fit (docs/tuner-model.md, "The constants
// and how they were fitted").
constexpr double kH100MhaOccExp = 0.25;
constexpr double kH100MhaRowStepEff = 0.0687;  // a lone block row: 7 % of its SM's peak
constexpr double kH100ChainScale = 0.599;      // MCFuser's model over-counts L2-served tiles
constexpr double kH100GemmNormBlockBytesPerS = 27.2e9;  // W through one row block
// Not fitted (no H100 row-wise measurement): the H100 SXM's 67 TFLOP/s fp32 (non-tensor) over
// its 989.4 TFLOP/s fp16 tensor peak (NVIDIA data sheet).
constexpr double kH100RowWiseFlopsFrac = 67.0 / 989.4;

const SegmentModelConstants& H100SegmentConstants() {
  static const SegmentModelConstants kH100 = [] {
    SegmentModelConstants c;
    c.bw_eff = kH100BwEff;
    c.tc_eff = kH100TcEff;
    c.l2_speedup = kH100L2Speedup;
    c.launch_us = kH100LaunchUs;
    c.segment_us = kH100SegmentUs;
    c.mha_bw_eff = kH100MhaBwEff;
    c.mha_tc_eff = kH100MhaTcEff;
    c.mha_occ_exp = kH100MhaOccExp;
    c.mha_row_step_eff = kH100MhaRowStepEff;
    c.chain_scale = kH100ChainScale;
    c.gemm_norm_block_bytes_per_s = kH100GemmNormBlockBytesPerS;
    c.row_wise_flops_frac = kH100RowWiseFlopsFrac;
    return c;
  }();
  return kH100;
}

Expected<SegmentPrediction> PredictSegment(const OpGraph& g, const Segment& s,
                                           const SegmentChoice& choice, const Mask& mask,
                                           const DeviceSpec& device) {
  return PredictSegment(g, s, choice, mask, device, H100SegmentConstants());
}

Expected<SegmentPrediction> PredictSegment(const OpGraph& g, const Segment& s,
                                           const SegmentChoice& choice, const Mask& mask,
                                           const DeviceSpec& device,
                                           const SegmentModelConstants& k) {
  const std::string what = "segment model: ";
  if (auto st = device.Validate("device"); !st.IsOk()) return MakeError(what + st.Message());
  if (s.first < 1 || s.last > g.Size() || s.first > s.last)
    return MakeError(what + "segment " + SegmentLabel(s) + ": outside ops 1.." + Str(g.Size()));
  if (mask.Rows() != g.seq_len || mask.Cols() != g.seq_len)
    return MakeError(what + "mask: size " + Str(mask.Rows()) + " x " + Str(mask.Cols()) +
                     " does not match the graph's seq_len " + Str(g.seq_len));
  const TemplateMatch m = MatchTemplate(g, s);
  const bool fused = m.kind != TemplateKind::kNone && !choice.force_op_by_op &&
                     EscapingInnerOutput(g, s, m.kind) == 0;
  Plan p;
  if (fused) {
    auto f = FusedPlan(g, s, m.kind, choice, mask, device, k);
    if (!f.IsOk()) return MakeError(what + SegmentLabel(s) + ": " + f.Message());
    p = std::move(*f);
  } else {
    p = OpByOpPlan(g, s, k);
  }
  return Finish(p, device, k);
}

Expected<SegmentPrediction> PredictMhaCall(const Workload& w, const Mask& mask, MhaVariant variant,
                                           const MhaConfig& config, int64_t sub_len,
                                           const DeviceSpec& device,
                                           const SegmentModelConstants& k, bool scale_q) {
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  auto p = MhaPlan(w, mask, variant, config, sub_len, device, k, scale_q);
  if (!p.IsOk()) return MakeError("mha model: " + p.Message());
  return Finish(*p, device, k);
}

Expected<SegmentPrediction> PredictGemmChain(const GemmChainShape& shape, const ChainTiles& tiles,
                                             const DeviceSpec& device,
                                             const SegmentModelConstants& k) {
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  STOF_RETURN_IF_ERROR(shape.Validate());
  STOF_RETURN_IF_ERROR(ValidateTiles(shape, tiles, "tiles"));
  const double es = kChainElemBytes;
  const double b = static_cast<double>(shape.batch);
  const double min_bytes = es * b * static_cast<double>(shape.m * shape.k + shape.m * shape.h) +
                           es * static_cast<double>(shape.k * shape.n + shape.n * shape.h);
  STOF_ASSIGN_OR_RETURN(auto kn, ChainKernel(shape, tiles, device, k, min_bytes));
  Plan p;
  p.label = "gemm_chain";
  p.note = "MCFuser mhnk " + Str(tiles.bm) + "x" + Str(tiles.bn) + "x" + Str(tiles.bk) + "x" +
           Str(tiles.bh);
  p.Add(kn);
  return Finish(p, device, k);
}

}  // namespace stof::engine
