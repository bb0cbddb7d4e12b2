// MCFuser's GEMM chain C = A x B, E = C x D (docs/references.md, MCFuser) and its tile sizes.
// A is [batch, m, k], B [batch, k, n], D [batch, n, h], E [batch, m, h]; C [m, n] per batch is
// the intermediate the fused kernel keeps on chip. Loops: m (rows of A), n (cols of B = rows
// of D), k (GEMM1's reduction), h (cols of D). Used by every file of engine/mcfuser/, the
// tuner and the studio. Invariant: a shape that passed Validate has every extent in
// 1..kMaxDim and batch in 1..kMaxBatch, so every trip-count product fits in int64_t.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace stof::engine {

struct GemmChainShape {
  // Bounds keep batch * (m/16) * (n/16) * (k/16) * (h/16) below 2^62.
  static constexpr int64_t kMaxDim = 65536;
  static constexpr int64_t kMaxBatch = 16384;

  int64_t batch = 1, m = 0, n = 0, k = 0, h = 0;

  // "gemm_chain: k: must be in 1..65536, got 0" (`what` replaces "gemm_chain").
  Status Validate(const std::string& what = "gemm_chain") const;
  bool operator==(const GemmChainShape&) const = default;
};

// "(batch 1, M 512, N 256, K 64, H 64)"
std::string ToString(const GemmChainShape& s);

// Table II of the paper: G1-G3 (1,512,256,64,64/128/256), G4-G6 (1,512,512,256/512/1024,256),
// G7-G9 (1,512/1024/2048,512,128,128), G10-G12 (1/4/8,1024,1024,128,128).
struct GemmChainPreset {
  std::string name;  // "G1".."G12"
  GemmChainShape shape;
};
const std::vector<GemmChainPreset>& GemmChainPresets();  // in table order
// By name, case-insensitively: G1..G12, or "ffn:<model preset>:<tokens>" (FfnChainShape); the
// error lists the known names.
Expected<GemmChainShape> FindGemmChainPreset(const std::string& name);
// A transformer FFN, GELU(x W1 + b1) W2 + b2, as a chain over `tokens` rows of a model preset
// (engine/graph/model_config.h): batch 1, M = tokens, K = hidden, N = ffn, H = hidden.
Expected<GemmChainShape> FfnChainShape(const std::string& model, int64_t tokens);
// The FFN of every model preset of a distinct (hidden, ffn) at 1, 16, 128, 4096 and 32768
// tokens, named "ffn:<the first such preset>:<tokens>" (issue 32's FFN grid).
std::vector<GemmChainPreset> FfnChainPresets();

// Tile sizes of one candidate: one per loop, each a multiple of 16 (the tensor-core minimum)
// in 16..RoundUp16(dim).
struct ChainTiles {
  int64_t bm = 16, bn = 16, bk = 16, bh = 16;
  bool operator==(const ChainTiles&) const = default;
};
// "tiles: bk: must be a multiple of 16 in 16..64 (k = 64), got 80".
Status ValidateTiles(const GemmChainShape& shape, const ChainTiles& tiles,
                     const std::string& what = "tiles");

inline int64_t RoundUp16(int64_t v) { return (v + 15) / 16 * 16; }
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace stof::engine
