// What `stof run`, `stof tune` and `stof profile layer` share: the backend behind --device
// (local = the GPU through kernels/, cpu = the fp32 reference), the --mask NAME-or-FILE rule,
// --scheme's named forms, and the layer a run is about (--plan, or --model/--config with
// --batch, --seq and --mask) with its scheme and per-segment choices. Used by
// app/cli/cmd_run.cpp, app/cli/cmd_tune.cpp and app/cli/cmd_profile_layer.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/graph_args.h"
#include "engine/backend.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"
#include "engine/plan/plan.h"
#include "engine/run/layer_runner.h"

namespace stof::app {

// nullptr with *error set when the device is unknown or unavailable.
std::unique_ptr<engine::Backend> MakeRunBackend(const std::string& device, std::string* error);
// True when this build has CUDA and a GPU answers.
bool LocalGpuAvailable();

// --mask NAME is a generator name unless a file of that name exists.
void ResolveMaskName(MaskSourceOptions* mask);

// default (greedy templates without chains / GEMM+norm), chains, all, unfused, or a code / hex.
engine::Expected<engine::FusionScheme> SchemeFromText(const std::string& text,
                                                      const engine::OpGraph& g);

// The options that pick a layer. With --plan, the model, batch, L and mask default to the
// plan's (what is given instead must match it: ResolveLayerScheme refuses otherwise).
struct LayerSourceArgs {
  GraphArgs graph;          // --model, --config, --batch, --layer, --separate-bias, --dtype
  MaskSourceOptions mask;   // --mask / --pattern, --seq (also the graph's L)
  std::string plan;         // --plan FILE, or ""
  bool batch_given = false, seq_given = false;  // given on the command line
};
struct LayerSource {
  LayerSourceArgs args;     // as used: the plan's defaults filled in, --mask NAME resolved
  std::optional<engine::Plan> plan;
  engine::OpGraph graph;    // at args.graph.batch, args.graph.seq
  MaskSource mask;
  // The layer graph of the same model at another shape (the small layer `stof run` checks).
  engine::Expected<engine::OpGraph> GraphAt(int64_t batch, int64_t seq) const;
};
// Loads the plan, builds the graph (from --model / --config, else the plan's model) and the
// mask (given, else the plan's, else bigbird); L defaults to 512. Errors are the loaders'.
engine::Expected<LayerSource> ResolveLayerSource(const LayerSourceArgs& a);

// The mask must be L x L for the graph's L ("--mask: ... is 64 x 64, --seq is 32").
engine::Status CheckLayerMask(const LayerSource& src);

struct LayerScheme {
  engine::FusionScheme scheme;
  std::vector<engine::SegmentChoice> choices;  // one per segment
  std::vector<std::string> warnings;           // CheckPlanFor's (plan made on another device)
};
// With a plan: CheckPlanFor(`here`) and PlanToRun. Else SchemeFromText(scheme_text) with
// `base` for every segment. Then CheckLayerMask.
engine::Expected<LayerScheme> ResolveLayerScheme(const LayerSource& src,
                                                 const std::string& scheme_text,
                                                 const engine::SegmentChoice& base,
                                                 const engine::DeviceSpec& here);

}  // namespace stof::app
