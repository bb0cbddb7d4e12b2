// Segments that run op by op (see segment_lowering.h): one call per op, chosen by its kind.
// The attention GEMMs work on [B, H, L, d] heads, so the scores GEMM splits q and k out of
// their projections first and the context GEMM splits v and merges the context after.
#include <string>

#include "engine/run/segment_lowering.h"

namespace stof::engine {

namespace {

// " #9": an op-by-op call's label names its op.
std::string Tag(const Op& op) { return " #" + std::to_string(op.number); }

LayerStep GemmOpStep(SegmentBinder& b, const Op& op, void* out, const ParamMap& params) {
  GemmCall c;
  BindGemmOperands(b, op, c);
  c.out = out;
  c.params = params;
  return {std::string(op.has_bias ? "gemm+bias" : "gemm") + Tag(op), c};
}

// q k^T: the scores op owns its attention block's head buffers.
Status LowerScoresGemm(SegmentBinder& b, const Op& op, void* out, std::vector<LayerStep>& steps) {
  STOF_ASSIGN_OR_RETURN(auto hb, b.HeadsOf(op.number));
  LayerBuffers::Heads& h = *hb;
  STOF_RETURN_IF_ERROR(b.SplitHeads(op.inputs.at(0), h.q, steps));
  STOF_RETURN_IF_ERROR(b.SplitHeads(op.inputs.at(1), h.k, steps));
  BatchedGemmCall c;
  c.batch = b.batch * b.heads;
  c.m = b.seq_len, c.n = b.seq_len, c.k = b.head_dim;
  c.a = h.q, c.b = h.k, c.c = out, c.trans_b = true;
  steps.push_back({"q k^T" + Tag(op), c});
  return Status::Ok();
}

// p v: the context op reads probs from its scores op's chain; walking that chain back finds
// the block's scores op, hence its head buffers.
Status LowerContextGemm(SegmentBinder& b, const Op& op, void* out,
                        std::vector<LayerStep>& steps) {
  int scores_op = op.inputs.at(0).op;
  while (scores_op > 0 && b.graph.At(scores_op).kind != OpKind::kBatchGemm)
    scores_op = b.graph.At(scores_op).inputs.at(0).op;
  STOF_ASSIGN_OR_RETURN(auto hb, b.HeadsOf(scores_op));
  LayerBuffers::Heads& h = *hb;
  STOF_RETURN_IF_ERROR(b.SplitHeads(op.inputs.at(1), h.v, steps));
  BatchedGemmCall c;
  c.batch = b.batch * b.heads;
  c.m = b.seq_len, c.n = b.head_dim, c.k = b.seq_len;
  c.a = b.Input(op, 0), c.b = h.v, c.c = h.o;
  steps.push_back({"p v" + Tag(op), c});
  steps.push_back(b.MergeHeads(h.o, out));
  return Status::Ok();
}

// Bias, Add, GELU, ReLU: one element-wise epilogue each.
LayerStep EpilogueOpStep(SegmentBinder& b, const Op& op, void* out) {
  EpilogueCall c;
  c.rows = OutputRows(op), c.cols = op.output.dims.back();
  c.x = b.Input(op, 0), c.out = out;
  if (op.kind == OpKind::kBias) c.bias = b.Weights(op).at(0);
  if (op.kind == OpKind::kAdd) c.residual = b.Input(op, 1);
  if (op.kind == OpKind::kGelu) c.act = Activation::kGelu;
  if (op.kind == OpKind::kRelu) c.act = Activation::kRelu;
  return {std::string(OpKindName(op.kind)) + Tag(op), c};
}

LayerStep NormOpStep(SegmentBinder& b, const Op& op, void* out, const ParamMap& params) {
  NormCall c;
  c.rows = OutputRows(op), c.cols = op.output.dims.back();
  c.x = b.Input(op, 0);
  const NormWeights nw = b.NormWeightsOf(op);
  c.gamma = nw.gamma, c.beta = nw.beta, c.eps = nw.eps;
  c.out = out;
  c.params = params;
  return {std::string(OpKindName(op.kind)) + Tag(op), c};
}

// Scale, Mask, Softmax on the scores, each its own pass.
LayerStep ScoreOpStep(SegmentBinder& b, const Op& op, void* out) {
  ScoresCall c;
  c.op = op.kind == OpKind::kScale ? ScoreOp::kScale
         : op.kind == OpKind::kMask ? ScoreOp::kMask
                                    : ScoreOp::kSoftmax;
  c.bh = b.batch * b.heads, c.seq_len = b.seq_len, c.x = b.Input(op, 0), c.out = out;
  c.scale = b.InvSqrtHeadDim();
  c.mask = b.MaskFor(op);
  return {std::string(OpKindName(op.kind)) + Tag(op), c};
}

}  // namespace

Status LowerOpByOp(SegmentBinder& b, const Segment& s, const SegmentChoice& choice,
                   std::vector<LayerStep>& steps) {
  // A one-op segment is tuned too: its GEMM (the cuBLASLt algo) or norm takes the params.
  const ParamMap lone_params = s.Size() == 1 ? choice.params : ParamMap{};
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = b.graph.At(n);
    void* out = b.Output(n);
    switch (op.kind) {
      case OpKind::kGemm: steps.push_back(GemmOpStep(b, op, out, lone_params)); break;
      case OpKind::kBatchGemm:
        STOF_RETURN_IF_ERROR(op.inputs.at(0).name == "q" ? LowerScoresGemm(b, op, out, steps)
                                                         : LowerContextGemm(b, op, out, steps));
        break;
      case OpKind::kBias:
      case OpKind::kAdd:
      case OpKind::kGelu:
      case OpKind::kRelu: steps.push_back(EpilogueOpStep(b, op, out)); break;
      case OpKind::kLayerNorm:
      case OpKind::kRmsNorm: steps.push_back(NormOpStep(b, op, out, lone_params)); break;
      case OpKind::kScale:
      case OpKind::kMask:
      case OpKind::kSoftmax: steps.push_back(ScoreOpStep(b, op, out)); break;
    }
  }
  return Status::Ok();
}

}  // namespace stof::engine
