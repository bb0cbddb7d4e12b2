// LayerBuilder: appends numbered ops to an OpGraph one layer piece at a time (Linear, norm,
// activation, residual add, attention block), filling shapes, dependencies, FLOPs and bytes.
// Internal to engine/graph/ (graph_build.cpp writes the BERT, GPT-2 and T5 recipes with it).
// Invariants: ops are numbered in the order appended; every TensorRef it returns is the
// output of the op just appended (source kOp); activations are [batch, seq_len, features].
#pragma once

#include <cstdint>
#include <string>

#include "engine/graph/op.h"

namespace stof::engine {

class LayerBuilder {
 public:
  // `separate_bias`: a Linear's bias becomes its own Bias op instead of part of the GEMM.
  LayerBuilder(OpGraph* graph, bool separate_bias);

  // The layer's input hidden states [B, L, hidden] (or the encoder's output for T5's
  // cross-attention keys and values).
  TensorRef LayerInput() const;
  TensorRef EncoderOutput() const;

  // x [B, L, K] -> GEMM with weight [K, n] (+ bias [n]).
  TensorRef Linear(const std::string& name, const TensorRef& x, int64_t n, bool bias);
  // LayerNorm (scale and shift) or RMSNorm (scale) over the last dimension.
  TensorRef Norm(OpKind kind, const std::string& name, const TensorRef& x);
  TensorRef Activation(OpKind kind, const std::string& name, const TensorRef& x);
  TensorRef Residual(const std::string& name, const TensorRef& x, const TensorRef& residual);

  // The attention block on projections already computed: QK^T (BatchGEMM), Scale (when
  // `scale`), Mask (causal AND the user's mask when `causal`), Softmax, PV (BatchGEMM).
  // `q_from` holds Q at column block `q_index` of width heads*head_dim; likewise K and V.
  // Returns the context [B, L, heads*head_dim] as the PV op's output.
  struct Projection {
    TensorRef from;
    int index = 0;  // 0, 1, 2: which heads*head_dim column block of `from`
  };
  TensorRef Attention(const std::string& prefix, Projection q, Projection k, Projection v,
                      bool scale, bool causal);

 private:
  Op& Append(OpKind kind, const std::string& name);
  TensorRef Finish(Op& op, std::string out_name, std::vector<int64_t> out_dims);
  TensorRef Weight(const std::string& name, std::vector<int64_t> dims) const;
  TensorRef HeadsView(const std::string& name, const Projection& p) const;

  OpGraph* m_graph;
  bool m_separate_bias;
};

}  // namespace stof::engine
