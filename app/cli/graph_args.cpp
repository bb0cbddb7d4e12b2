// BuildGraph and ParseScheme (graph_args.h).
#include "app/cli/graph_args.h"

#include <optional>

#include "app/common/option_checks.h"
#include "engine/core/workload.h"
#include "engine/fusion/default_scheme.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"

namespace stof::app {

void AddGraphOptions(CLI::App* cmd, GraphArgs* a, bool with_plan) {
  std::string presets;
  for (const engine::ModelConfig& c : engine::ModelPresets())
    presets += (presets.empty() ? "" : ", ") + c.name;
  const std::string plan_default = with_plan ? "; with --plan: default the plan's" : "";
  cmd->add_option("--model", a->model,
                  "Preset: " + presets + " (with --config: the family when the file has no "
                  "model_type" + plan_default + ")")
      ->check(NonEmpty("a model name"));
  cmd->add_option("--config", a->config, "HuggingFace-style config.json for the sizes")
      ->check(NonEmpty());
  cmd->add_option("--batch", a->batch,
                  "Batch size (1.." + std::to_string(engine::Workload::kMaxBatch) +
                      plan_default + ")")
      ->capture_default_str()
      ->check(IntRange(1, engine::Workload::kMaxBatch));
  cmd->add_option("--layer", a->layer, "encoder or decoder (T5; default: the family's)")
      ->check(OneOf({"encoder", "decoder"}));
}

engine::Expected<engine::OpGraph> BuildGraph(const GraphArgs& a) {
  engine::GraphRequest r;
  // The engine's parsers say "model: ...", "layer: ..."; here those are the options --model,
  // --layer and --dtype.
  std::optional<engine::ModelConfig> preset;
  if (!a.model.empty()) {
    auto p = engine::FindModelPreset(a.model);
    if (!p.IsOk()) return engine::MakeError("--" + p.Message());
    preset = *p;
  }
  if (!a.config.empty()) {
    const engine::ModelFamily* fallback = preset ? &preset->family : nullptr;
    STOF_ASSIGN_OR_RETURN(auto cfg, engine::LoadModelConfig(a.config, fallback));
    r.model = cfg;
  } else if (preset) {
    r.model = *preset;
  } else {
    return engine::MakeError("give --model NAME or --config FILE");
  }
  auto dtype = engine::ParseDType(a.dtype);
  if (!dtype.IsOk()) return engine::MakeError("--" + dtype.Message());
  r.dtype = *dtype;
  r.batch = a.batch;
  r.seq_len = a.seq;
  if (!a.layer.empty()) {
    auto part = engine::ParseLayerPart(a.layer);
    if (!part.IsOk()) return engine::MakeError("--" + part.Message());
    r.part = *part;
  }
  r.separate_bias = a.separate_bias;
  return engine::BuildLayerGraph(r);
}

// --scheme takes a named scheme (default, unfused, chains, all: the same words in graph, run
// and profile layer), the binary code or its hex form ("14:20e3").
engine::Expected<engine::FusionScheme> ParseScheme(const std::string& text,
                                                   const engine::OpGraph& g) {
  if (text == "default") return engine::DefaultScheme(g);
  if (text == "unfused") return engine::FusionScheme::OpByOp(g);
  if (text == "chains") return engine::DefaultScheme(g, {true, false});
  if (text == "all") return engine::DefaultScheme(g, {true, true});
  std::string code = text;
  if (text.find(':') != std::string::npos) {
    STOF_ASSIGN_OR_RETURN(auto bits, engine::HexToCode(text, "--scheme"));
    code = bits;
  }
  return engine::FusionScheme::FromCode(code, g, "--scheme");
}

}  // namespace stof::app
