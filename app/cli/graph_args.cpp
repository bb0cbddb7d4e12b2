// BuildGraph and ParseScheme (graph_args.h).
#include "app/cli/graph_args.h"

#include <optional>

#include "engine/fusion/scheme_hex.h"
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"

namespace stof::app {

engine::Expected<engine::OpGraph> BuildGraph(const GraphArgs& a) {
  engine::GraphRequest r;
  if (!a.config.empty()) {
    std::optional<engine::ModelFamily> fallback;
    if (!a.model.empty()) {
      auto preset = engine::FindModelPreset(a.model);
      if (!preset.IsOk()) return preset.ToStatus();
      fallback = preset->family;
    }
    auto cfg = engine::LoadModelConfig(a.config, fallback ? &*fallback : nullptr);
    if (!cfg.IsOk()) return cfg.ToStatus();
    r.model = *cfg;
  } else if (!a.model.empty()) {
    auto preset = engine::FindModelPreset(a.model);
    if (!preset.IsOk()) return preset.ToStatus();
    r.model = *preset;
  } else {
    return engine::MakeError("give --model NAME or --config FILE");
  }
  auto dtype = engine::ParseDType(a.dtype);
  if (!dtype.IsOk()) return dtype.ToStatus();
  r.dtype = *dtype;
  r.batch = a.batch;
  r.seq_len = a.seq;
  if (!a.layer.empty()) {
    auto part = engine::ParseLayerPart(a.layer);
    if (!part.IsOk()) return part.ToStatus();
    r.part = *part;
  }
  r.separate_bias = a.separate_bias;
  return engine::BuildLayerGraph(r);
}

// --scheme takes the binary code or its hex form ("14:20e3").
engine::Expected<engine::FusionScheme> ParseScheme(const std::string& text,
                                                   const engine::OpGraph& g) {
  std::string code = text;
  if (text.find(':') != std::string::npos) {
    auto bits = engine::HexToCode(text, "--scheme");
    if (!bits.IsOk()) return bits.ToStatus();
    code = *bits;
  }
  return engine::FusionScheme::FromCode(code, g, "--scheme");
}

}  // namespace stof::app
