// Layer graphs for the fusion and graph tests: a preset model's layer at a given shape, built
// through BuildLayerGraph (a failure is reported as a test failure, an empty graph returned).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "engine/graph/graph_build.h"

namespace stof::engine::testing {

inline OpGraph PresetGraph(const std::string& preset, int64_t batch, int64_t seq,
                           std::optional<LayerPart> part = std::nullopt,
                           bool separate_bias = false) {
  GraphRequest r;
  auto m = FindModelPreset(preset);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  if (!m.IsOk()) return OpGraph{};
  r.model = *m;
  r.batch = batch;
  r.seq_len = seq;
  r.part = part;
  r.separate_bias = separate_bias;
  auto g = BuildLayerGraph(r);
  EXPECT_TRUE(g.IsOk()) << g.Message();
  return g.IsOk() ? *g : OpGraph{};
}

}  // namespace stof::engine::testing
