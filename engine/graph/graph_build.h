// BuildLayerGraph: the OpGraph of one transformer layer for a model config and a shape
// (batch, seq_len, dtype). BERT: post-LN encoder, 14 ops, numbered as STOF's BERT example
// (MHA = ops #2-#6; downstream [#7-#9], [#10-#12], [#13, #14]). GPT-2: pre-LN decoder, 14 ops,
// MHA = #3-#7 with the causal mask combined with the user's mask in op #5. T5: pre-RMSNorm,
// no biases, no score scaling, ReLU FFN: encoder 13 ops (MHA #3-#6), decoder 22 ops (self
// MHA #3-#6, cross MHA #12-#15). Full tables in docs/fusion.md.
// Used by `stof graph`, the fusion tests and (later) the tuner and `stof run`.
// Invariants: see op.h; the request is validated first and errors name the field.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/graph/model_config.h"
#include "engine/graph/op.h"

namespace stof::engine {

struct GraphRequest {
  ModelConfig model;
  int64_t batch = 8;
  int64_t seq_len = 512;   // T5 decoder: the encoder output has the same length
  DType dtype = DType::kF16;
  // nullopt = the family's own: BERT encoder, GPT-2 decoder, T5 encoder.
  std::optional<LayerPart> part;
  // Emit each Linear's bias as its own Bias op after the GEMM (renumbers the ops; the paper's
  // numbering, and the default, keep the bias in the GEMM).
  bool separate_bias = false;
};

// Largest batch * seq_len accepted: keeps every FLOP count of a layer inside int64.
inline constexpr int64_t kMaxGraphTokens = int64_t{1} << 22;

// batch 1..65536, seq_len 1..32768, batch * seq_len <= kMaxGraphTokens, a part the family
// has ("layer: gpt2 has decoder layers only, got encoder"), a valid model.
Status ValidateGraphRequest(const GraphRequest& r);
Expected<OpGraph> BuildLayerGraph(const GraphRequest& r);

}  // namespace stof::engine
