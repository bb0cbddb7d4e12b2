// The BERT, GPT-2 and T5 layer recipes (see graph_build.h; the tables in docs/fusion.md are
// the contract: changing an op's place changes every stored fusion code).
#include "engine/graph/graph_build.h"

#include "engine/graph/layer_builder.h"
#include "engine/mask/mask.h"

namespace stof::engine {

namespace {

using P = LayerBuilder::Projection;

// 1 QKV | 2-6 MHA | 7 O-proj, 8 Add, 9 LN | 10 FFN up, 11 GELU, 12 FFN down | 13 Add, 14 LN
void BuildBert(LayerBuilder& b, const OpGraph& g) {
  const int64_t inner = g.heads * g.head_dim;
  const TensorRef x = b.LayerInput();
  const TensorRef qkv = b.Linear("qkv_proj", x, 3 * inner, true);
  const TensorRef ctx = b.Attention("attn", P{qkv, 0}, P{qkv, 1}, P{qkv, 2}, true, false);
  const TensorRef o = b.Linear("out_proj", ctx, g.hidden, true);
  const TensorRef h = b.Norm(OpKind::kLayerNorm, "ln_attn", b.Residual("add_attn", o, x));
  const TensorRef up = b.Activation(OpKind::kGelu, "gelu", b.Linear("ffn_up", h, g.ffn, true));
  const TensorRef down = b.Linear("ffn_down", up, g.hidden, true);
  b.Norm(OpKind::kLayerNorm, "ln_ffn", b.Residual("add_ffn", down, h));
}

// 1 LN | 2 QKV | 3-7 MHA (causal) | 8 O-proj, 9 Add | 10 LN, 11 FFN up, 12 GELU, 13 FFN down,
// 14 Add
void BuildGpt2(LayerBuilder& b, const OpGraph& g) {
  const int64_t inner = g.heads * g.head_dim;
  const TensorRef x = b.LayerInput();
  const TensorRef qkv = b.Linear("qkv_proj", b.Norm(OpKind::kLayerNorm, "ln_attn", x),
                                 3 * inner, true);
  const TensorRef ctx = b.Attention("attn", P{qkv, 0}, P{qkv, 1}, P{qkv, 2}, true, true);
  const TensorRef h = b.Residual("add_attn", b.Linear("out_proj", ctx, g.hidden, true), x);
  const TensorRef n = b.Norm(OpKind::kLayerNorm, "ln_ffn", h);
  const TensorRef up = b.Activation(OpKind::kGelu, "gelu", b.Linear("ffn_up", n, g.ffn, true));
  b.Residual("add_ffn", b.Linear("ffn_down", up, g.hidden, true), h);
}

// T5 self-attention sub-layer: RMSNorm, QKV, MHA (no scaling), O-proj, Add. 8 ops.
TensorRef T5SelfAttention(LayerBuilder& b, const OpGraph& g, const TensorRef& x, bool causal) {
  const int64_t inner = g.heads * g.head_dim;
  const TensorRef qkv = b.Linear("qkv_proj", b.Norm(OpKind::kRmsNorm, "norm_attn", x),
                                 3 * inner, false);
  const TensorRef ctx = b.Attention("attn", P{qkv, 0}, P{qkv, 1}, P{qkv, 2}, false, causal);
  return b.Residual("add_attn", b.Linear("out_proj", ctx, g.hidden, false), x);
}

// T5 FFN sub-layer: RMSNorm, wi, ReLU, wo, Add. 5 ops.
TensorRef T5Ffn(LayerBuilder& b, const OpGraph& g, const TensorRef& x) {
  const TensorRef n = b.Norm(OpKind::kRmsNorm, "norm_ffn", x);
  const TensorRef up = b.Activation(OpKind::kRelu, "relu", b.Linear("ffn_up", n, g.ffn, false));
  return b.Residual("add_ffn", b.Linear("ffn_down", up, g.hidden, false), x);
}

// Encoder: 1 RMSNorm | 2 QKV | 3-6 MHA | 7 O-proj, 8 Add | 9 RMSNorm, 10 wi, 11 ReLU, 12 wo,
// 13 Add.
// Decoder: 1-8 causal self-attention as above | 9 RMSNorm, 10 Q (decoder), 11 KV (encoder
// output), 12-15 cross MHA, 16 O-proj, 17 Add | 18-22 FFN.
void BuildT5(LayerBuilder& b, const OpGraph& g, LayerPart part) {
  const TensorRef x = b.LayerInput();
  if (part == LayerPart::kEncoder) {
    T5Ffn(b, g, T5SelfAttention(b, g, x, false));
    return;
  }
  const int64_t inner = g.heads * g.head_dim;
  const TensorRef h = T5SelfAttention(b, g, x, true);
  const TensorRef q = b.Linear("cross_q_proj", b.Norm(OpKind::kRmsNorm, "norm_cross", h), inner,
                               false);
  const TensorRef kv = b.Linear("cross_kv_proj", b.EncoderOutput(), 2 * inner, false);
  const TensorRef ctx = b.Attention("cross", P{q, 0}, P{kv, 0}, P{kv, 1}, false, false);
  const TensorRef h2 = b.Residual("add_cross", b.Linear("cross_out_proj", ctx, g.hidden, false), h);
  T5Ffn(b, g, h2);
}

LayerPart DefaultPart(ModelFamily f) {
  return f == ModelFamily::kGpt2 ? LayerPart::kDecoder : LayerPart::kEncoder;
}

}  // namespace

Status ValidateGraphRequest(const GraphRequest& r) {
  STOF_RETURN_IF_ERROR(r.model.Validate(r.model.name.empty() ? "model" : r.model.name));
  if (r.batch < 1 || r.batch > Workload::kMaxBatch) {
    return MakeError("batch: expected 1.." + std::to_string(Workload::kMaxBatch) + ", got " +
                     std::to_string(r.batch));
  }
  if (r.seq_len < 1 || r.seq_len > Mask::kMaxLen) {
    return MakeError("seq_len: expected 1.." + std::to_string(Mask::kMaxLen) + ", got " +
                     std::to_string(r.seq_len));
  }
  if (r.batch * r.seq_len > kMaxGraphTokens) {
    return MakeError("batch * seq_len: expected at most " + std::to_string(kMaxGraphTokens) +
                     " tokens per layer, got " + std::to_string(r.batch * r.seq_len));
  }
  if (r.part && r.model.family != ModelFamily::kT5 && *r.part != DefaultPart(r.model.family)) {
    return MakeError(std::string("layer: ") + ModelFamilyName(r.model.family) + " has " +
                     LayerPartName(DefaultPart(r.model.family)) + " layers only, got " +
                     LayerPartName(*r.part));
  }
  return Status::Ok();
}

Expected<OpGraph> BuildLayerGraph(const GraphRequest& r) {
  STOF_RETURN_IF_ERROR(ValidateGraphRequest(r));
  OpGraph g;
  g.model = r.model.name;
  g.family = r.model.family;
  g.part = r.part.value_or(DefaultPart(r.model.family));
  g.batch = r.batch;
  g.seq_len = r.seq_len;
  g.hidden = r.model.hidden;
  g.heads = r.model.heads;
  g.head_dim = r.model.head_dim;
  g.ffn = r.model.ffn;
  g.layers = r.model.layers;
  g.dtype = r.dtype;
  LayerBuilder b(&g, r.separate_bias);
  switch (g.family) {
    case ModelFamily::kBert: BuildBert(b, g); break;
    case ModelFamily::kGpt2: BuildGpt2(b, g); break;
    case ModelFamily::kT5: BuildT5(b, g, g.part); break;
  }
  return g;
}

}  // namespace stof::engine
