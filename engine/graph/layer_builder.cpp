// LayerBuilder (see layer_builder.h).
#include "engine/graph/layer_builder.h"

#include <utility>

#include "engine/graph/op_cost.h"

namespace stof::engine {

LayerBuilder::LayerBuilder(OpGraph* graph, bool separate_bias)
    : m_graph(graph), m_separate_bias(separate_bias) {}

TensorRef LayerBuilder::LayerInput() const {
  return TensorRef{"x", {m_graph->batch, m_graph->seq_len, m_graph->hidden},
                   TensorSource::kLayerInput, 0};
}

TensorRef LayerBuilder::EncoderOutput() const {
  return TensorRef{"enc", {m_graph->batch, m_graph->seq_len, m_graph->hidden},
                   TensorSource::kEncoderOutput, 0};
}

Op& LayerBuilder::Append(OpKind kind, const std::string& name) {
  Op op;
  op.number = m_graph->Size() + 1;
  op.kind = kind;
  op.name = name;
  m_graph->ops.push_back(std::move(op));
  return m_graph->ops.back();
}

TensorRef LayerBuilder::Finish(Op& op, std::string out_name, std::vector<int64_t> out_dims) {
  op.output = TensorRef{std::move(out_name), std::move(out_dims), TensorSource::kOp, op.number};
  op.flops = OpFlops(op);
  op.bytes = OpBytes(op, m_graph->dtype);
  return op.output;
}

TensorRef LayerBuilder::Weight(const std::string& name, std::vector<int64_t> dims) const {
  return TensorRef{name, std::move(dims), TensorSource::kWeight, 0};
}

TensorRef LayerBuilder::Linear(const std::string& name, const TensorRef& x, int64_t n, bool bias) {
  const int64_t k = x.dims.back();
  std::vector<int64_t> out_dims = x.dims;
  out_dims.back() = n;
  const bool in_gemm = bias && !m_separate_bias;
  Op& gemm = Append(OpKind::kGemm, name);
  gemm.has_bias = in_gemm;
  gemm.inputs = {x, Weight("w_" + name, {k, n})};
  if (in_gemm) gemm.inputs.push_back(Weight("b_" + name, {n}));
  TensorRef y = Finish(gemm, name, out_dims);
  if (!bias || in_gemm) return y;
  Op& b = Append(OpKind::kBias, name + "_bias");
  b.inputs = {y, Weight("b_" + name, {n})};
  return Finish(b, name + "_b", out_dims);
}

TensorRef LayerBuilder::Norm(OpKind kind, const std::string& name, const TensorRef& x) {
  const int64_t h = x.dims.back();
  Op& op = Append(kind, name);
  op.inputs = {x, Weight("g_" + name, {h})};
  if (kind == OpKind::kLayerNorm) op.inputs.push_back(Weight("beta_" + name, {h}));
  return Finish(op, name, x.dims);
}

TensorRef LayerBuilder::Activation(OpKind kind, const std::string& name, const TensorRef& x) {
  Op& op = Append(kind, name);
  op.inputs = {x};
  return Finish(op, name, x.dims);
}

TensorRef LayerBuilder::Residual(const std::string& name, const TensorRef& x,
                                 const TensorRef& residual) {
  Op& op = Append(OpKind::kAdd, name);
  op.inputs = {x, residual};
  return Finish(op, name, x.dims);
}

// Q, K or V of every head: [B, heads, L, head_dim], a view of column block p.index of p.from.
TensorRef LayerBuilder::HeadsView(const std::string& name, const Projection& p) const {
  TensorRef t = p.from;
  t.name = name;
  t.dims = {m_graph->batch, m_graph->heads, p.from.dims.at(1), m_graph->head_dim};
  return t;
}

TensorRef LayerBuilder::Attention(const std::string& prefix, Projection q, Projection k,
                                  Projection v, bool scale, bool causal) {
  const int64_t b = m_graph->batch, a = m_graph->heads, l = m_graph->seq_len,
                d = m_graph->head_dim;
  const std::vector<int64_t> score_dims = {b, a, l, l};

  Op& qk = Append(OpKind::kBatchGemm, prefix + "_scores");
  qk.inputs = {HeadsView("q", q), HeadsView("k", k)};
  TensorRef s = Finish(qk, "scores", score_dims);
  if (scale) {
    Op& sc = Append(OpKind::kScale, prefix + "_scale");
    sc.inputs = {s};
    s = Finish(sc, "scores_scaled", score_dims);
  }
  Op& mask = Append(OpKind::kMask, prefix + "_mask");
  mask.causal = causal;
  mask.inputs = {s, TensorRef{"mask", {l, l}, TensorSource::kMask, 0}};
  s = Finish(mask, "scores_masked", score_dims);
  Op& sm = Append(OpKind::kSoftmax, prefix + "_softmax");
  sm.inputs = {s};
  const TensorRef p = Finish(sm, "probs", score_dims);
  Op& pv = Append(OpKind::kBatchGemm, prefix + "_context");
  pv.inputs = {p, HeadsView("v", v)};
  // Stored as [B, L, heads * head_dim] for the output projection (same elements as
  // [B, heads, L, head_dim]).
  return Finish(pv, "context", {b, l, a * d});
}

}  // namespace stof::engine
