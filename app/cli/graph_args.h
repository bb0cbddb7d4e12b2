// The model/shape options shared by `stof graph` and `stof run` (--model, --config, --batch,
// --seq, --dtype, --layer, --separate-bias, --scheme) and the op graph / fusion scheme they
// describe. Used by app/cli/cmd_graph.cpp and app/cli/cmd_run.cpp.
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"

namespace stof::app {

struct GraphArgs {
  std::string model;
  std::string config;
  int64_t batch = 8;
  int64_t seq = 512;
  std::string dtype = "f16";
  std::string layer;
  bool separate_bias = false;
  std::string scheme;
  bool json = false;
};

// The layer graph of a preset (--model) or a config.json (--config, with --model as the
// family fallback).
engine::Expected<engine::OpGraph> BuildGraph(const GraphArgs& a);
// --scheme takes the binary code or its hex form ("14:20e3").
engine::Expected<engine::FusionScheme> ParseScheme(const std::string& text,
                                                   const engine::OpGraph& g);

}  // namespace stof::app
