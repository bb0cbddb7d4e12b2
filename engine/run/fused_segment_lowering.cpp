// The fused templates' calls (see segment_lowering.h): one function per template, each
// assembling its one call from the segment's ops gathered by kind (FusedOps). A fused segment
// keeps its inner outputs on chip, so every call reads the segment's inputs and writes only
// the last op's output (and, for bias_add_norm, an Add's sum that is read later).
#include <cstdint>
#include <string>

#include "engine/run/segment_lowering.h"

namespace stof::engine {

namespace {

// A fused segment's ops by kind: what every template's call is assembled from. A template
// matches a fixed sequence of ops (template_match.h), so there is at most one op of each kind
// here, save two GEMMs (gemm_chain: gemm1 then gemm2).
struct FusedOps {
  Segment s;
  const Op* first = nullptr;
  const Op* last = nullptr;
  void* out = nullptr;          // the last op's output
  const Op* gemm1 = nullptr;
  const Op* gemm2 = nullptr;
  const Op* add = nullptr;
  const Op* norm = nullptr;
  const Op* bias_op = nullptr;  // a Bias op of its own (graphs built with separate_bias)
  Activation act = Activation::kNone;
  bool has_scale = false;       // attention scores scaled by 1/sqrt(d) (not T5's)
};

FusedOps GatherOps(SegmentBinder& b, const Segment& s) {
  FusedOps f;
  f.s = s;
  f.first = &b.graph.At(s.first);
  f.last = &b.graph.At(s.last);
  f.out = b.Output(s.last);
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = b.graph.At(n);
    switch (op.kind) {
      case OpKind::kGemm: (f.gemm1 ? f.gemm2 : f.gemm1) = &op; break;
      case OpKind::kAdd: f.add = &op; break;
      case OpKind::kLayerNorm: case OpKind::kRmsNorm: f.norm = &op; break;
      case OpKind::kBias: f.bias_op = &op; break;
      case OpKind::kGelu: f.act = Activation::kGelu; break;
      case OpKind::kRelu: f.act = Activation::kRelu; break;
      case OpKind::kScale: f.has_scale = true; break;
      default: break;
    }
  }
  return f;
}

// "gemm+norm #7-#9": a fused call's label names the segment's ops.
std::string Label(const Segment& s, const std::string& what) {
  return what + " #" + std::to_string(s.first) +
         (s.last != s.first ? "-#" + std::to_string(s.last) : "");
}

// The residual an Add reads: its input that does not come from inside the segment.
const void* ResidualOf(SegmentBinder& b, const Segment& s, const Op& add) {
  for (const TensorRef& t : add.inputs)
    if (!(t.source == TensorSource::kOp && s.Contains(t.op))) return b.Source(t);
  return nullptr;
}

// A GEMM's own bias (Op::has_bias); null without one.
const void* OwnBias(SegmentBinder& b, const Op* gemm) {
  if (gemm && gemm->has_bias) return b.Weights(*gemm).at(1);
  return nullptr;
}

// The GEMM of a gemm+epilogue or gemm+norm segment: its operands, its bias (its own, or the
// separate Bias op's that follows it) and the residual an Add reads.
template <class Call>
void BindFusedGemm(SegmentBinder& b, const FusedOps& f, Call& c) {
  BindGemmOperands(b, *f.gemm1, c);
  if (f.bias_op) c.bias = b.Weights(*f.bias_op).at(0);
  c.residual = f.add ? ResidualOf(b, f.s, *f.add) : nullptr;
}

// One attention operand as a strided view into its projection's [B, L, width] output: the
// column window ColumnOffset names, batch stride L * width, head stride d, row stride width.
const void* ProjectionView(SegmentBinder& b, const TensorRef& t, MhaStrides* st) {
  const int64_t width = b.graph.At(t.op).output.dims.back();
  *st = MhaStrides{b.seq_len * width, b.head_dim, width};
  return static_cast<const uint8_t*>(b.Source(t)) + b.ColumnOffset(t) * DTypeBytes(b.storage);
}

// The fused block-wise kernel reads q, k, v straight out of the projections and writes the
// context in [B, L, H d]: no head split or merge (4 kernels fewer). k and v share one stride
// set in MhaCall, so a layer that packs them differently cannot take this path.
Status LowerStridedMha(SegmentBinder& b, const FusedOps& f, MhaCall c,
                       std::vector<LayerStep>& steps) {
  MhaStrides v_st;
  c.q = ProjectionView(b, f.first->inputs.at(0), &c.q_strides);
  c.k = ProjectionView(b, f.first->inputs.at(1), &c.kv_strides);
  c.v = ProjectionView(b, f.last->inputs.at(1), &v_st);
  const int64_t hd = b.heads * b.head_dim;
  c.o_strides = MhaStrides{b.seq_len * hd, b.head_dim, hd};
  if (!(c.kv_strides.batch == v_st.batch && c.kv_strides.row == v_st.row))
    return MakeError("layer: " + SegmentLabel(f.s) + ": k and v layouts differ");
  c.o = f.out;
  steps.push_back({"attention (fused, strided views)", c});
  return Status::Ok();
}

// sparse_mha (scores BatchGEMM ... context BatchGEMM): one MhaCall of the chosen variant. Every
// variant but the fused block-wise kernel takes packed [B, H, L, d] heads, split before and
// merged after. T5 does not scale its scores: scale 1 instead of the kernel's 1/sqrt(d).
Status LowerSparseMha(SegmentBinder& b, const FusedOps& f, const SegmentChoice& choice,
                      std::vector<LayerStep>& steps) {
  const Op& scores = *f.first;
  const Op& context = *f.last;
  MhaCall c;
  c.workload = Workload{b.batch, b.seq_len, b.heads, b.head_dim, b.storage};
  c.mask = b.SegmentMask(f.s);
  c.config = choice.mha_config;
  c.variant = choice.mha_variant;
  c.sub_len = choice.sub_len;
  c.scale = f.has_scale ? 0.0f : 1.0f;
  if (c.variant == MhaVariant::kFused && c.config.kernel == MhaKernel::kBlockWise)
    return LowerStridedMha(b, f, c, steps);
  STOF_ASSIGN_OR_RETURN(auto hb, b.HeadsOf(scores.number));
  LayerBuffers::Heads& h = *hb;
  STOF_RETURN_IF_ERROR(b.SplitHeads(scores.inputs.at(0), h.q, steps));
  STOF_RETURN_IF_ERROR(b.SplitHeads(scores.inputs.at(1), h.k, steps));
  STOF_RETURN_IF_ERROR(b.SplitHeads(context.inputs.at(1), h.v, steps));
  c.q = h.q, c.k = h.k, c.v = h.v, c.o = h.o;
  steps.push_back({std::string("attention (") + MhaVariantName(c.variant) + ")", c});
  steps.push_back(b.MergeHeads(h.o, f.out));
  return Status::Ok();
}

LayerStep ScaleMaskSoftmaxStep(SegmentBinder& b, const FusedOps& f) {
  ScoresCall c;
  c.op = ScoreOp::kScaleMaskSoftmax, c.bh = b.batch * b.heads, c.seq_len = b.seq_len;
  c.x = b.Input(*f.first, 0), c.out = f.out;
  c.scale = f.has_scale ? b.InvSqrtHeadDim() : 1.0f;
  c.mask = b.SegmentMask(f.s);
  return {Label(f.s, "scale+mask+softmax"), c};
}

// gemm_chain: e = act(a b + bias1) d + bias2, b and d the two GEMMs' weights (one for every
// batch, hence stride 0).
LayerStep GemmChainStep(SegmentBinder& b, const FusedOps& f, const SegmentChoice& choice) {
  const Op& gemm1 = *f.gemm1;
  const Op& gemm2 = *f.gemm2;
  GemmChainCall c;
  c.batch = 1, c.m = OutputRows(gemm1), c.k = gemm1.inputs.at(0).dims.back();
  c.n = gemm1.output.dims.back(), c.h = gemm2.output.dims.back();
  c.a = b.Input(gemm1, 0), c.b = b.Weights(gemm1).at(0);
  c.d = b.Weights(gemm2).at(0);
  c.stride_b = 0, c.stride_d = 0;
  c.bias1 = OwnBias(b, &gemm1), c.act = f.act, c.bias2 = OwnBias(b, &gemm2);
  if (f.bias_op) {  // a separate Bias op belongs to the GEMM before it
    (f.bias_op->number < gemm2.number ? c.bias1 : c.bias2) = b.Weights(*f.bias_op).at(0);
  }
  c.e = f.out;
  c.params = choice.params;
  return {Label(f.s, "gemm chain"), c};
}

LayerStep GemmNormStep(SegmentBinder& b, const FusedOps& f, const SegmentChoice& choice) {
  GemmNormCall c;
  BindFusedGemm(b, f, c);
  const NormWeights nw = b.NormWeightsOf(*f.norm);
  c.gamma = nw.gamma, c.beta = nw.beta, c.eps = nw.eps;
  c.out = f.out, c.params = choice.params;
  return {Label(f.s, "gemm+norm"), c};
}

// gemm_act, gemm_add and gemm_bias: one GEMM with its epilogue.
LayerStep GemmEpilogueStep(SegmentBinder& b, const FusedOps& f, const SegmentChoice& choice) {
  GemmCall c;
  BindFusedGemm(b, f, c);
  c.act = f.act;
  c.out = f.out, c.params = choice.params;
  return {Label(f.s, "gemm+epilogue"), c};
}

LayerStep BiasAddNormStep(SegmentBinder& b, const FusedOps& f, const SegmentChoice& choice) {
  const Op& norm = *f.norm;
  NormCall c;
  c.rows = OutputRows(norm), c.cols = norm.output.dims.back();
  // x enters through the first op; the Add's other input is the residual.
  c.x = b.Input(*f.first, 0);
  if (f.bias_op) c.bias = b.Weights(*f.bias_op).at(0);
  if (f.add) {
    c.residual = f.add == f.first ? b.Input(*f.add, 1) : ResidualOf(b, f.s, *f.add);
    // The sum is read after the segment (GPT-2's residual stream): the kernel writes it too.
    if (b.Escapes(f.s, f.add->number)) c.sum_out = b.Output(f.add->number);
  }
  const NormWeights nw = b.NormWeightsOf(norm);
  c.gamma = nw.gamma, c.beta = nw.beta, c.eps = nw.eps;
  c.out = f.out, c.params = choice.params;
  return {Label(f.s, "bias+add+norm"), c};
}

}  // namespace

Status LowerFusedSegment(SegmentBinder& b, const Segment& s, const TemplateMatch& match,
                         const SegmentChoice& choice, std::vector<LayerStep>& steps) {
  const FusedOps f = GatherOps(b, s);
  switch (match.kind) {
    case TemplateKind::kSparseMha: return LowerSparseMha(b, f, choice, steps);
    case TemplateKind::kScaleMaskSoftmax: steps.push_back(ScaleMaskSoftmaxStep(b, f)); break;
    case TemplateKind::kGemmChain: steps.push_back(GemmChainStep(b, f, choice)); break;
    case TemplateKind::kGemmNorm: steps.push_back(GemmNormStep(b, f, choice)); break;
    case TemplateKind::kGemmAct:
    case TemplateKind::kGemmAdd:
    case TemplateKind::kGemmBias: steps.push_back(GemmEpilogueStep(b, f, choice)); break;
    case TemplateKind::kBiasAddNorm: steps.push_back(BiasAddNormStep(b, f, choice)); break;
    default:
      return MakeError("layer: segment " + SegmentLabel(s) + ": template " + match.Name() +
                       " has no runner");
  }
  return Status::Ok();
}

}  // namespace stof::engine
