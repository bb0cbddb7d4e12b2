// Shared by the GPU tests that run whole layers (layer_runner_gpu_test.cpp,
// tune_gpu_test.cpp): a preset model's layer graph at a shape, and the paper-default BigBird
// mask at a length. Failures are reported as test failures.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "engine/graph/graph_build.h"
#include "engine/mask/mask_spec.h"

namespace stof::engine::testing {

inline OpGraph Graph(const std::string& preset, int64_t batch, int64_t seq,
                     std::optional<LayerPart> part = std::nullopt) {
  GraphRequest r;
  r.model = *FindModelPreset(preset);
  r.batch = batch, r.seq_len = seq, r.part = part;
  auto g = BuildLayerGraph(r);
  EXPECT_TRUE(g.IsOk()) << g.Message();
  return *g;
}

inline Mask BigBird(int64_t L) {
  MaskSpec s;
  s.pattern = "bigbird", s.seq_len = L;
  return *Generate(s);
}

}  // namespace stof::engine::testing
