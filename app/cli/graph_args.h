// The model/shape options shared by `stof graph`, `run`, `tune` and `profile layer` (--model,
// --config, --batch, --seq, --dtype, --layer, --separate-bias, --scheme) and the op graph /
// fusion scheme they describe. Used by app/cli/cmd_graph.cpp, cmd_run.cpp, cmd_tune.cpp and
// cmd_profile_layer.cpp (through run_common.h).
#pragma once

#include <CLI/CLI.hpp>
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

// Adds --model, --config, --batch and --layer (each with its check; with_plan: the help says
// that --plan gives their defaults). Used by graph, run, tune and profile layer.
void AddGraphOptions(CLI::App* cmd, GraphArgs* a, bool with_plan = false);

// The layer graph of a preset (--model) or a config.json (--config, with --model as the
// family fallback).
engine::Expected<engine::OpGraph> BuildGraph(const GraphArgs& a);
// --scheme takes the binary code or its hex form ("14:20e3").
engine::Expected<engine::FusionScheme> ParseScheme(const std::string& text,
                                                   const engine::OpGraph& g);

}  // namespace stof::app
