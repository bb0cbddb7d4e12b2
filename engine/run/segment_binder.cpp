// SegmentBinder (see segment_binder.h): buffer look-ups and head layout steps for lowering.
#include "engine/run/segment_binder.h"

#include <cmath>
#include <utility>

#include "engine/fusion/default_scheme.h"

namespace stof::engine {

int64_t OutputRows(const Op& op) { return op.output.Elements() / op.output.dims.back(); }

SegmentBinder::SegmentBinder(const OpGraph& g, DType storage_type, LayerBuffers& buffers,
                             Allocate allocate)
    : graph(g), storage(storage_type), batch(g.batch), seq_len(g.seq_len), heads(g.heads),
      head_dim(g.head_dim), m_buffers(buffers), m_allocate(std::move(allocate)) {}

const void* SegmentBinder::Source(const TensorRef& t) {
  switch (t.source) {
    case TensorSource::kLayerInput: return m_buffers.input;
    case TensorSource::kEncoderOutput: return m_buffers.encoder;
    case TensorSource::kWeight: return m_buffers.weights[t.name];
    case TensorSource::kOp:
      return m_buffers.op_out.count(t.op) ? m_buffers.op_out[t.op] : nullptr;
    default: return nullptr;
  }
}

const void* SegmentBinder::Input(const Op& op, size_t i) {
  return i < op.inputs.size() ? Source(op.inputs[i]) : nullptr;
}

std::vector<const void*> SegmentBinder::Weights(const Op& op) {
  std::vector<const void*> w;
  for (const TensorRef& t : op.inputs)
    if (t.source == TensorSource::kWeight) w.push_back(m_buffers.weights[t.name]);
  return w;
}

NormWeights SegmentBinder::NormWeightsOf(const Op& norm) {
  const auto w = Weights(norm);
  return {w.at(0), w.size() > 1 ? w[1] : nullptr,
          norm.kind == OpKind::kRmsNorm ? 1e-6f : 1e-5f};
}

bool SegmentBinder::Escapes(const Segment& s, int op) const {
  return OutputEscapes(graph, s, op);
}

const Mask* SegmentBinder::MaskFor(const Op& op) const {
  return op.causal ? m_buffers.causal : m_buffers.plain;
}

const Mask* SegmentBinder::SegmentMask(const Segment& s) const {
  for (int n = s.first; n <= s.last; ++n)
    if (graph.At(n).kind == OpKind::kMask) return MaskFor(graph.At(n));
  return m_buffers.plain;
}

float SegmentBinder::InvSqrtHeadDim() const {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

int64_t SegmentBinder::ColumnOffset(const TensorRef& t) const {
  const int64_t width = graph.At(t.op).output.dims.back(), hd = heads * head_dim;
  if (t.name == "k") return width == 3 * hd ? hd : 0;
  if (t.name == "v") return width == 3 * hd ? 2 * hd : (width == 2 * hd ? hd : 0);
  return 0;
}

Expected<LayerBuffers::Heads*> SegmentBinder::HeadsOf(int scores_op) {
  LayerBuffers::Heads& h = m_buffers.heads[scores_op];
  if (h.q == nullptr) {
    const std::string key = "heads " + std::to_string(scores_op) + " ";
    int part = 0;
    for (void** p : {&h.q, &h.k, &h.v, &h.o}) {
      STOF_ASSIGN_OR_RETURN(auto buf,
                            m_allocate(key + "qkvo"[part++], batch * heads * seq_len * head_dim));
      *p = buf;
    }
  }
  return &h;
}

Status SegmentBinder::SplitHeads(const TensorRef& t, void* dst, std::vector<LayerStep>& steps) {
  if (t.source != TensorSource::kOp || Source(t) == nullptr)
    return MakeError("layer: " + t.name + ": not produced inside the layer");
  HeadsCall c;
  c.split = true, c.batch = batch, c.seq_len = seq_len, c.heads = heads, c.head_dim = head_dim;
  c.src = Source(t), c.src_row_stride = graph.At(t.op).output.dims.back();
  c.col_offset = ColumnOffset(t), c.dst = dst;
  steps.push_back({"split heads " + t.name, c});
  return Status::Ok();
}

LayerStep SegmentBinder::MergeHeads(const void* from, void* to) const {
  HeadsCall c;
  c.split = false, c.batch = batch, c.seq_len = seq_len, c.heads = heads, c.head_dim = head_dim;
  c.src = from, c.dst = to;
  return {"merge heads", c};
}

}  // namespace stof::engine
