// SegmentBinder: what lowering a segment into backend calls (segment_lowering.h) looks up in
// its layer: the buffer behind a tensor (the layer's input, the encoder output, a weight, a
// materialised op output), an op's weights, the mask an op applies, the per-attention-block
// head buffers (allocated on first use) and the head split / merge steps around attention.
// LayerBuffers is the state behind it, owned by LayerRunner across Rebind; a binder lives for
// one LayerRunner::BuildSegments. Used only inside engine/run/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/run/layer_steps.h"

namespace stof::engine {

// The buffers of one layer that its segments' calls point at. LayerRunner fills them: input,
// encoder, masks and weights once at Create; op_out per scheme (the outputs that reach
// memory); heads on first use by an attention block.
struct LayerBuffers {
  const void* input = nullptr;    // LayerIo::input
  const void* encoder = nullptr;  // LayerIo::encoder
  std::map<int, void*> op_out;              // materialised op outputs
  std::map<std::string, void*> weights;     // by the graph's weight names
  struct Heads { void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr; };
  std::map<int, Heads> heads;               // per attention block, keyed by its scores op
  const Mask* plain = nullptr;    // the user's mask
  const Mask* causal = nullptr;   // the user's AND causal, when a Mask op asks for it
};

// The norm op's scale, shift (null: RMSNorm) and epsilon, as NormCall / GemmNormCall take them.
struct NormWeights {
  const void* gamma = nullptr;
  const void* beta = nullptr;
  float eps = 1e-5f;
};

// Rows of an op's output seen as a matrix [rows, last dim].
int64_t OutputRows(const Op& op);

class SegmentBinder {
 public:
  // Allocates `elements` values of the storage type under a pool key ("heads 3 q").
  using Allocate = std::function<Expected<void*>(const std::string& key, int64_t elements)>;
  SegmentBinder(const OpGraph& graph, DType storage, LayerBuffers& buffers, Allocate allocate);

  const OpGraph& graph;
  const DType storage;
  const int64_t batch, seq_len, heads, head_dim;  // B, L, H, d of the attention blocks

  // The buffer behind `t`; null for an op output that is not materialised. Look-ups are not
  // const: as the runner always did, they index the maps with [], which enters a missing
  // weight as null (BuildSegments' last check refuses a GEMM whose input is null).
  const void* Source(const TensorRef& t);
  // Op input `i`'s buffer; null past the last input.
  const void* Input(const Op& op, size_t i);
  // The weight inputs of an op in order: [0] the matrix (or gamma), [1] the bias (or beta).
  std::vector<const void*> Weights(const Op& op);
  NormWeights NormWeightsOf(const Op& norm);
  // Where op `op` writes: the buffer LayerRunner materialised for it.
  void* Output(int op) { return m_buffers.op_out[op]; }
  // Whether op `op`'s output is read after segment `s` (default_scheme.h's OutputEscapes).
  bool Escapes(const Segment& s, int op) const;

  const Mask* MaskFor(const Op& op) const;
  // The mask a segment's Mask op applies (the user's when it has none).
  const Mask* SegmentMask(const Segment& s) const;
  // 1/sqrt(d): the Scale op's factor.
  float InvSqrtHeadDim() const;

  // Where q, k or v sits in its projection's rows: the width tells the packing ([q k v],
  // T5's cross-attention [k v], or q alone).
  int64_t ColumnOffset(const TensorRef& t) const;
  // The [B, H, L, d] buffers of the attention block whose scores op is `scores_op`, allocated
  // on first use under the keys "heads <scores_op> q" (k, v, o) so that a pool shares them.
  Expected<LayerBuffers::Heads*> HeadsOf(int scores_op);
  // Appends the step that splits one of q, k, v out of its projection's output into `dst`.
  Status SplitHeads(const TensorRef& t, void* dst, std::vector<LayerStep>& steps);
  // The step that merges [B, H, L, d] `from` into [B, L, H d] `to`.
  LayerStep MergeHeads(const void* from, void* to) const;

 private:
  LayerBuffers& m_buffers;
  Allocate m_allocate;
};

// m, n, k, a, w and the GEMM's own bias of a call on GEMM op `gemm` (GemmCall, GemmNormCall).
template <class Call>
void BindGemmOperands(SegmentBinder& b, const Op& gemm, Call& c) {
  c.m = OutputRows(gemm), c.k = gemm.inputs.at(0).dims.back(), c.n = gemm.output.dims.back();
  c.a = b.Input(gemm, 0);
  const auto w = b.Weights(gemm);
  c.w = w.at(0), c.bias = gemm.has_bias ? w.at(1) : nullptr;
}

}  // namespace stof::engine
