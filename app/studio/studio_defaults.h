// The studio's start-up defaults in one place: the mask (BigBird at L = 1024), the block size
// (64 x 64) and the layer of the fusion / tune / profile views (BERT-base at batch 8). main.cpp
// shows them as the options' defaults, StudioOptions and LayerChoice start from them, and the
// Learn lessons (learn/learn_tour.cpp, studio_learn.cpp) put the views back on them. They were
// written out in each of those places; a change here now moves every one. The attention
// workload of the Kernel selection tab (batch 8, 12 heads, d = 64) is engine::Workload's own
// default, which the model's batch matches.
#pragma once

#include <cstdint>

#include "engine/mask/mask_spec.h"

namespace stof::app::studio_defaults {

inline constexpr const char* kPattern = "bigbird";  // the mask generator
inline constexpr int64_t kSeqLen = 1024;             // the mask's L
inline constexpr int64_t kBlock = 64;                // BM = BN
inline constexpr const char* kModel = "bert-base";   // the layer's model preset
inline constexpr int64_t kBatch = 8;                 // the layer's batch

// The default mask's generator: kPattern at kSeqLen, the paper's parameters.
inline engine::MaskSpec MaskGenerator() {
  engine::MaskSpec s;
  s.pattern = kPattern;
  s.seq_len = kSeqLen;
  return s;
}

}  // namespace stof::app::studio_defaults
