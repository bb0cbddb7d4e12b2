// Model presets, validation and config.json reading (see model_config.h). nlohmann/json
// exceptions stay inside this file.
#include "engine/graph/model_config.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "engine/core/file_read.h"
#include "engine/core/json_io.h"

namespace stof::engine {

namespace {

using Json = nlohmann::json;

ModelConfig Preset(const char* name, ModelFamily f, int64_t hidden, int64_t heads, int64_t ffn,
                   int64_t layers) {
  ModelConfig c;
  c.name = name;
  c.family = f;
  c.hidden = hidden;
  c.heads = heads;
  c.head_dim = hidden / heads;
  c.ffn = ffn;
  c.layers = layers;
  return c;
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The first of `keys` present in `j` (nullptr and *key = keys joined by " or " when none).
const Json* FindAny(const Json& j, const std::vector<std::string>& keys, std::string* key) {
  for (const std::string& k : keys) {
    auto it = j.find(k);
    if (it != j.end()) {
      *key = k;
      return &*it;
    }
  }
  key->clear();
  for (const std::string& k : keys) *key += (key->empty() ? "" : " or ") + k;
  return nullptr;
}

Expected<int64_t> ReadSize(const Json& j, const std::vector<std::string>& keys,
                           const std::string& file, int64_t hi) {
  std::string key;
  const Json* v = FindAny(j, keys, &key);
  if (v == nullptr) return MakeError(file + ": " + key + ": required field is missing");
  if (!v->is_number_integer()) {
    return MakeError(file + ": " + key + ": expected an integer, got " + JsonForMessage(*v));
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
    return MakeError(file + ": " + key + ": expected an integer 1.." + std::to_string(hi) +
                     ", got " + JsonForMessage(*v));
  }
  const int64_t x = v->get<int64_t>();
  if (x < 1 || x > hi) {
    return MakeError(file + ": " + key + ": expected an integer 1.." + std::to_string(hi) +
                     ", got " + JsonForMessage(*v));
  }
  return x;
}

constexpr int64_t kMaxHidden = 65536, kMaxHeads = 1024, kMaxHeadDim = 256, kMaxFfn = 262144,
                  kMaxLayers = 1024;

}  // namespace

Status ModelConfig::Validate(const std::string& what) const {
  auto bad = [&](const char* field, int64_t v, int64_t hi) {
    return MakeError(what + ": " + field + ": expected 1.." + std::to_string(hi) + ", got " +
                     std::to_string(v));
  };
  if (hidden < 1 || hidden > kMaxHidden) return bad("hidden", hidden, kMaxHidden);
  if (heads < 1 || heads > kMaxHeads) return bad("heads", heads, kMaxHeads);
  if (head_dim < 1 || head_dim > kMaxHeadDim) return bad("head_dim", head_dim, kMaxHeadDim);
  if (ffn < 1 || ffn > kMaxFfn) return bad("ffn", ffn, kMaxFfn);
  if (layers < 1 || layers > kMaxLayers) return bad("layers", layers, kMaxLayers);
  return Status::Ok();
}

const std::vector<ModelConfig>& ModelPresets() {
  static const std::vector<ModelConfig> kPresets = {
      Preset("bert-small", ModelFamily::kBert, 512, 8, 2048, 4),
      Preset("bert-base", ModelFamily::kBert, 768, 12, 3072, 12),
      Preset("bert-large", ModelFamily::kBert, 1024, 16, 4096, 24),
      Preset("gpt2-small", ModelFamily::kGpt2, 768, 12, 3072, 12),
      Preset("gpt2-medium", ModelFamily::kGpt2, 1024, 16, 4096, 24),
      Preset("t5-small", ModelFamily::kT5, 512, 8, 2048, 6),
      Preset("t5-base", ModelFamily::kT5, 768, 12, 3072, 12),
  };
  return kPresets;
}

Expected<ModelConfig> FindModelPreset(const std::string& name) {
  const std::string want = Lower(name);
  std::string list;
  for (const ModelConfig& c : ModelPresets()) {
    if (c.name == want) return c;
    list += (list.empty() ? "" : ", ") + c.name;
  }
  return MakeError("model: expected one of " + list + " (or --config FILE), got '" + name + "'");
}

Expected<ModelConfig> ParseModelConfigJson(const std::string& text, const std::string& file_name,
                                           const ModelFamily* fallback_family) {
  const std::string& f = file_name;
  // Duplicate keys are allowed, as transformers' own reader (Python's json) allows them.
  JsonParseOptions options;
  options.refuse_duplicate_keys = false;
  STOF_ASSIGN_OR_RETURN(auto parsed, ParseJson(text, f, options));
  const Json& j = parsed;
  if (!j.is_object()) return MakeError(f + ": expected a JSON object, got " + JsonForMessage(j));

  ModelConfig c;
  c.name = file_name;
  if (auto it = j.find("model_type"); it != j.end()) {
    if (!it->is_string()) return MakeError(f + ": model_type: expected a string, got " + JsonForMessage(*it));
    auto fam = ParseModelFamily(it->get<std::string>());
    if (!fam.IsOk()) return MakeError(f + ": " + fam.Message());
    c.family = *fam;
  } else if (fallback_family != nullptr) {
    c.family = *fallback_family;
  } else {
    return MakeError(f + ": model_type: required field is missing (bert, gpt2 or t5)");
  }

  auto hidden = ReadSize(j, {"hidden_size", "d_model", "n_embd"}, f, kMaxHidden);
  if (!hidden.IsOk()) return hidden.ToStatus();
  auto heads = ReadSize(j, {"num_attention_heads", "num_heads", "n_head"}, f, kMaxHeads);
  if (!heads.IsOk()) return heads.ToStatus();
  auto layers = ReadSize(j, {"num_hidden_layers", "num_layers", "n_layer"}, f, kMaxLayers);
  if (!layers.IsOk()) return layers.ToStatus();
  c.hidden = *hidden;
  c.heads = *heads;
  c.layers = *layers;

  // GPT-2 writes "n_inner": null for the default 4 * hidden.
  std::string ffn_key;
  const Json* ffn = FindAny(j, {"intermediate_size", "d_ff", "n_inner"}, &ffn_key);
  if (ffn != nullptr && ffn->is_null() && ffn_key == "n_inner") {
    c.ffn = 4 * c.hidden;
  } else {
    STOF_ASSIGN_OR_RETURN(auto v,
                          ReadSize(j, {"intermediate_size", "d_ff", "n_inner"}, f, kMaxFfn));
    c.ffn = v;
  }

  if (j.contains("d_kv")) {
    STOF_ASSIGN_OR_RETURN(auto v, ReadSize(j, {"d_kv"}, f, kMaxHeadDim));
    c.head_dim = v;
  } else {
    std::string heads_key;
    FindAny(j, {"num_attention_heads", "num_heads", "n_head"}, &heads_key);
    if (c.hidden % c.heads != 0) {
      return MakeError(f + ": " + heads_key + ": expected a divisor of the hidden size " +
                       std::to_string(c.hidden) + ", got " + std::to_string(c.heads));
    }
    c.head_dim = c.hidden / c.heads;
    if (c.head_dim > kMaxHeadDim) {
      return MakeError(f + ": " + heads_key + ": hidden / heads = " +
                       std::to_string(c.head_dim) + " exceeds the largest head size " +
                       std::to_string(kMaxHeadDim) + ", got " + std::to_string(c.heads));
    }
  }

  if (auto it = j.find("feed_forward_proj"); it != j.end()) {
    if (!it->is_string() || it->get<std::string>() != "relu") {
      return MakeError(f + ": feed_forward_proj: expected \"relu\" (gated FFNs are not "
                           "modelled), got " + JsonForMessage(*it));
    }
  }
  STOF_RETURN_IF_ERROR(c.Validate(f));
  return c;
}

Expected<ModelConfig> LoadModelConfig(const std::string& path, const ModelFamily* fallback_family) {
  STOF_ASSIGN_OR_RETURN(auto text,
                        ReadFileBounded(path, {"HuggingFace configs", kMaxModelConfigBytes}));
  return ParseModelConfigJson(text, path, fallback_family);
}

}  // namespace stof::engine
