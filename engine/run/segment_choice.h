// SegmentChoice: how one segment of a fusion scheme runs (its template or op by op) and with
// which parameters. The vocabulary shared by the layer runner (engine/run/, which lowers a
// segment under its choice), plans (engine/plan/plan_choices.h writes and reads choices) and
// the tuner (engine/tune/, which searches over them). It lives apart from layer_runner.h so
// that plan/ and tune/ can name a choice without depending on the runner.
#pragma once

#include <cstdint>

#include "engine/backend.h"    // MhaConfig, MhaVariant
#include "engine/layer_ops.h"  // ParamMap

namespace stof::engine {

// How one segment runs: its template (or op by op) and the template's parameters.
struct SegmentChoice {
  ParamMap params;          // passed to the fused call, or to a one-op segment's GEMM or norm
                            // call (see layer_ops.h for the names)
  MhaVariant mha_variant = MhaVariant::kFused;  // sparse_mha segments
  MhaConfig mha_config;     // sparse_mha with kFused: kernel and block parameters
  int64_t sub_len = 64;     // sparse_mha with SD/SDF
  bool force_op_by_op = false;  // run the segment's ops one by one even if a template matches
};

}  // namespace stof::engine
