// The segment model's segments (segment_model.h): a segment's kernels op by op, or under its
// template's fused kernel (the bytes kept on chip, the chain's MCFuser tiles, gemm_norm's row
// blocks). Used by PredictSegment and PredictGemmChain (segment_model.cpp).
#include <algorithm>
#include <cstdint>
#include <string>

#include "engine/core/text_format.h"
#include "engine/fusion/default_scheme.h"
#include "engine/mcfuser/chain_kernel_map.h"
#include "engine/mcfuser/chain_model.h"
#include "engine/tune/segment_model_internal.h"

namespace stof::engine::segment_model_detail {

namespace {

// Bytes of a fused segment: every op's minimum bytes, less each inner output kept on chip
// (its write and its reads inside the segment); an inner output read after the segment (the
// Add before bias_add_norm's norm, written as sum_out) keeps its write.
double FusedBytes(const OpGraph& g, const Segment& s) {
  const double es = DTypeBytes(g.dtype);
  double total = 0;
  for (int n = s.first; n <= s.last; ++n) total += static_cast<double>(g.At(n).bytes);
  for (int n = s.first; n < s.last; ++n) {
    const double out = es * static_cast<double>(g.At(n).output.Elements());
    int reads = 0;
    for (int r = n + 1; r <= s.last; ++r)
      for (const TensorRef& t : g.At(r).inputs) reads += t.source == TensorSource::kOp && t.op == n;
    total -= reads * out;
    if (!OutputEscapes(g, s, n)) total -= out;
  }
  return total;
}

double FusedFlops(const OpGraph& g, const Segment& s) {
  double f = 0;
  for (int n = s.first; n <= s.last; ++n) f += static_cast<double>(g.At(n).flops);
  return f;
}

int64_t Rows(const Op& op) { return op.output.Elements() / op.output.dims.back(); }

// Head split or merge of one of q, k, v, o: read and write B L H d elements.
Kernel HeadsKernel(const OpGraph& g, const SegmentModelConstants& k) {
  const double n = static_cast<double>(g.batch * g.seq_len * g.heads * g.head_dim);
  return {2 * DTypeBytes(g.dtype) * n, 0, k.bw_eff, k.tc_eff, 0, k.l2_speedup};
}

}  // namespace

Plan OpByOpPlan(const OpGraph& g, const Segment& s, const SegmentModelConstants& k) {
  Plan p;
  p.label = "op by op (";
  for (int n = s.first; n <= s.last; ++n)
    p.label += std::string(n > s.first ? "+" : "") + OpKindName(g.At(n).kind);
  p.label += ")";
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = g.At(n);
    const Kernel own{static_cast<double>(op.bytes), static_cast<double>(op.flops), k.bw_eff,
                     k.tc_eff, 0, k.l2_speedup};
    if (op.kind == OpKind::kBatchGemm) {
      // Scores: split q and k first; context: split v, then merge the heads (layer_runner).
      const bool scores = op.inputs.at(0).name == "q";
      p.Add(HeadsKernel(g, k));
      if (scores) p.Add(HeadsKernel(g, k));
      p.Add(own);
      if (!scores) p.Add(HeadsKernel(g, k));
    } else {
      p.Add(own);
    }
  }
  return p;
}

namespace {

// The segment's effective mask: the user's, AND causal when its Mask op says so.
Mask SegmentMask(const OpGraph& g, const Segment& s, const Mask& mask) {
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = g.At(n);
    if (op.kind != OpKind::kMask || !op.causal) continue;
    Mask c = mask;
    for (int64_t i = 0; i < c.Rows(); ++i) c.SetRange(i, i + 1, c.Cols(), false);
    return c;
  }
  return mask;
}

// The tiles of a chain: choice.params where given. Without params the CUDA backend takes the
// first of SupportedGemmChainParams (its instantiated table ordered by a rough cost), which
// lives in kernels/, out of the engine's reach; the model takes instead the setting it predicts
// fastest over the table's ranges (bn 64; bm 16..128, bk 32..128, bh 64..256, powers of two,
// clipped to the shape, within the device's shared memory per block by MCFuser's equation 1).
Expected<ChainTiles> ChainTilesFrom(const ParamMap& params, const GemmChainShape& shape,
                                    const DeviceSpec& dev) {
  const bool given = params.count("bm") || params.count("bn") || params.count("bk") ||
                     params.count("bh");
  if (!given) {
    ChainTiles best;
    double best_s = -1;
    for (int64_t bm : {16, 32, 64, 128})
      for (int64_t bk : {32, 64, 128})
        for (int64_t bh : {64, 128, 256}) {
          const ChainTiles t{std::min(bm, RoundUp16(shape.m)), std::min<int64_t>(64, RoundUp16(shape.n)),
                             std::min(bk, RoundUp16(shape.k)), std::min(bh, RoundUp16(shape.h))};
          const Candidate c{shape, ChainKernelExpr(), t};
          if (!ValidateCandidate(c).IsOk()) continue;
          const ChainEstimate e = EstimateChainUnchecked(c, dev);
          if (e.smem_bytes > dev.smem_per_block_bytes) continue;
          if (best_s < 0 || e.seconds < best_s) best = t, best_s = e.seconds;
        }
    if (best_s < 0) return MakeError("params: no chain tiles fit this shape and device");
    return best;
  }
  ChainTiles t{64, 64, 32, 64};  // GemmChainParams' defaults for the fields not given
  const auto take = [&](const char* name, int64_t& field, int64_t dim) {
    auto it = params.find(name);
    field = it != params.end() ? it->second : std::min(field, RoundUp16(dim));
  };
  take("bm", t.bm, shape.m);
  take("bn", t.bn, shape.n);
  take("bk", t.bk, shape.k);
  take("bh", t.bh, shape.h);
  STOF_RETURN_IF_ERROR(ValidateTiles(shape, t, "params"));
  return t;
}

// MCFuser's shapes cap m at kMaxDim; longer token counts become batches of equal rows (the
// mhnk kernel's grid is linear in both, so the trip counts are the same).
GemmChainShape ChainShape(int64_t m, int64_t n, int64_t kk, int64_t h) {
  GemmChainShape s;
  s.batch = (m + GemmChainShape::kMaxDim - 1) / GemmChainShape::kMaxDim;
  s.m = (m + s.batch - 1) / s.batch;
  s.n = n, s.k = kk, s.h = h;
  return s;
}

}  // namespace

Expected<Kernel> ChainKernel(const GemmChainShape& shape, const ChainTiles& tiles,
                             const DeviceSpec& dev, const SegmentModelConstants& k,
                             double min_bytes) {
  Candidate c{shape, ChainKernelExpr(), tiles};
  STOF_ASSIGN_OR_RETURN(auto est, EstimateChain(c, dev));
  return Kernel{min_bytes, est.flops, k.bw_eff, k.tc_eff, k.chain_scale * est.seconds, k.l2_speedup};
}

Expected<Plan> FusedPlan(const OpGraph& g, const Segment& s, TemplateKind kind,
                         const SegmentChoice& choice, const Mask& mask, const DeviceSpec& dev,
                         const SegmentModelConstants& k) {
  const Op* gemm1 = nullptr;
  const Op* gemm2 = nullptr;
  bool has_scale = false;
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = g.At(n);
    if (op.kind == OpKind::kGemm) (gemm1 ? gemm2 : gemm1) = &op;
    if (op.kind == OpKind::kScale) has_scale = true;
  }
  const double es = DTypeBytes(g.dtype);
  Plan p;
  p.label = TemplateName(kind);
  const Kernel roofline{FusedBytes(g, s), FusedFlops(g, s), k.bw_eff, k.tc_eff, 0, k.l2_speedup};
  switch (kind) {
    case TemplateKind::kSparseMha: {
      const Workload w{g.batch, g.seq_len, g.heads, g.head_dim, g.dtype};
      const Mask eff = SegmentMask(g, s, mask);
      auto mha = MhaPlan(w, eff, choice.mha_variant, choice.mha_config, choice.sub_len, dev, k,
                         !has_scale);
      if (!mha.IsOk()) return mha.ToStatus();
      // Only the fused block-wise kernel reads the projections through strides; the others
      // split q, k, v first and merge o after (layer_runner.cpp).
      const bool strided = choice.mha_variant == MhaVariant::kFused &&
                           choice.mha_config.kernel == MhaKernel::kBlockWise;
      if (!strided)
        for (int i = 0; i < 3; ++i) p.Add(HeadsKernel(g, k));
      p.Append(*mha);
      if (!strided) p.Add(HeadsKernel(g, k));
      p.label = mha->label;
      p.note = mha->note;
      return p;
    }
    case TemplateKind::kGemmChain: {
      const GemmChainShape shape = ChainShape(Rows(*gemm1), gemm1->output.dims.back(),
                                              gemm1->inputs.at(0).dims.back(),
                                              gemm2->output.dims.back());
      STOF_ASSIGN_OR_RETURN(auto tiles, ChainTilesFrom(choice.params, shape, dev));
      STOF_ASSIGN_OR_RETURN(auto kn, ChainKernel(shape, tiles, dev, k, roofline.bytes));
      p.Add(kn);
      p.note = "MCFuser mhnk " + Str(tiles.bm) + "x" + Str(tiles.bn) + "x" + Str(tiles.bk) +
               "x" + Str(tiles.bh) + (choice.params.empty() ? " (model's pick)" : "");
      return p;
    }
    case TemplateKind::kGemmNorm: {
      // Each thread block owns bm full rows and streams all of W (k x n) through L2, one block
      // per SM at the default settings: waves x W bytes at the fitted per-block rate.
      const int64_t n = gemm1->output.dims.back(), kk = gemm1->inputs.at(0).dims.back();
      // Without params the backend takes SupportedGemmNormParams' first setting: the most rows
      // per block that fit, bm 64 up to n = 512, else 32 (docs/kernels-gemm-norm.md).
      auto it = choice.params.find("bm");
      const int64_t bm = it != choice.params.end() ? it->second : (n <= 512 ? 64 : 32);
      if (bm < 1) return MakeError("params.bm: must be positive, got " + Str(bm));
      const int64_t blocks = (Rows(*gemm1) + bm - 1) / bm;
      const int64_t waves = (blocks + dev.sm_count - 1) / dev.sm_count;
      Kernel kn = roofline;
      kn.floor_s = static_cast<double>(waves) * es * static_cast<double>(kk * n) /
                   k.gemm_norm_block_bytes_per_s;
      p.Add(kn);
      p.note = Str(blocks) + " row blocks of " + Str(bm);
      return p;
    }
    case TemplateKind::kScaleMaskSoftmax:
    case TemplateKind::kGemmAct:
    case TemplateKind::kGemmAdd:
    case TemplateKind::kGemmBias:
    case TemplateKind::kBiasAddNorm:
      p.Add(roofline);
      return p;
    case TemplateKind::kNone: break;
  }
  return MakeError("template " + std::string(TemplateName(kind)) + " has no model");
}

}  // namespace stof::engine::segment_model_detail
