// ModelConfig: the sizes of a transformer (hidden, heads, head size, FFN, layers) and its
// family (BERT, GPT-2, T5), from a named preset or a HuggingFace-style config.json.
// Used by graph_build.h, `stof graph` and (later) `stof run`. Invariants of a validated
// config: every size >= 1; heads * head_dim == hidden unless the file gave d_kv (T5);
// ranges as in Validate(). Errors name the file (or preset) and the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/graph/op.h"

namespace stof::engine {

struct ModelConfig {
  std::string name;        // preset name or file name
  ModelFamily family = ModelFamily::kBert;
  int64_t hidden = 768;    // d_model
  int64_t heads = 12;
  int64_t head_dim = 64;   // hidden / heads, or T5's d_kv
  int64_t ffn = 3072;      // intermediate size
  int64_t layers = 12;

  // hidden 1..65536, heads 1..1024, head_dim 1..256, ffn 1..262144, layers 1..1024; the
  // message starts with `what` ("bert.json: num_attention_heads: ...").
  Status Validate(const std::string& what) const;
  bool operator==(const ModelConfig&) const = default;
};

// The published sizes: bert-small (google/bert_uncased_L-4_H-512_A-8), bert-base, bert-large,
// gpt2-small ("gpt2"), gpt2-medium, t5-small, t5-base.
const std::vector<ModelConfig>& ModelPresets();
// Case-insensitive; the error lists the presets.
Expected<ModelConfig> FindModelPreset(const std::string& name);

// Reads a HuggingFace-style config.json: model_type (bert, gpt2, t5; `fallback_family` when
// the file has none, else an error), hidden_size | d_model | n_embd, num_attention_heads |
// num_heads | n_head, intermediate_size | d_ff | n_inner (GPT-2: null = 4 * hidden),
// num_hidden_layers | num_layers | n_layer, optional d_kv (T5 head size). Other keys are
// ignored (vocab is not needed). T5's feed_forward_proj, when present, must be "relu".
Expected<ModelConfig> ParseModelConfigJson(const std::string& text, const std::string& file_name,
                                           const ModelFamily* fallback_family = nullptr);
// LoadModelConfig reads a regular file of at most kMaxModelConfigBytes (file_read.h); real
// configs are a few kB, the largest with label maps a few hundred.
inline constexpr uint64_t kMaxModelConfigBytes = uint64_t{16} << 20;
Expected<ModelConfig> LoadModelConfig(const std::string& path,
                                      const ModelFamily* fallback_family = nullptr);

}  // namespace stof::engine
