// One point of MCFuser's search space: a GEMM chain shape, a tiling expression and the four
// tile sizes. Carrying the shape makes a candidate self-contained: hoisting (which loops have
// extent 1), the model and the kernel mapping need it. Used by chain_program, chain_model,
// candidate_space, chain_search, chain_kernel_map, the tuner and the studio.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "engine/mcfuser/chain_shape.h"
#include "engine/mcfuser/tiling_expr.h"

namespace stof::engine {

struct Candidate {
  GemmChainShape shape;
  TilingExpr expr;
  ChainTiles tiles;
  bool operator==(const Candidate&) const = default;
};

// "mhnk bm=64 bn=32 bk=64 bh=64" (the shape is not printed: it is the same for a whole space).
std::string ToString(const Candidate& c);
// A number unique among the candidates of one shape: the expression's index and tile / 16 of
// each loop (12 bits each: tiles are at most GemmChainShape::kMaxDim). For hash maps.
uint64_t CandidateKey(const Candidate& c);

// Shape, expression and tiles, each error naming its field ("candidate: tiles: bk: ...").
Status ValidateCandidate(const Candidate& c, const std::string& what = "candidate");

}  // namespace stof::engine
