// MCFuser's tiling expressions for the GEMM chain C = A x B, E = C x D (paper, section III-A):
// the loop structure of a fused kernel over the tile loops m, n, k, h.
//   Deep: all four loops nested, outer to inner, written as the letters: "mhnk" (4! = 24).
//   Flat: the shared loops m and n nested, then k's nest and h's nest in sequence inside them:
//         "mn(k,h)" and "nm(k,h)" (the paper's notation; the only two legal for this chain).
// Text form: letters nest; "x(a,b)" puts a and b in sequence inside x. Parse accepts spaces,
// upper case and redundant single-item parentheses ("m(h(n(k)))" == "mhnk"); ToString prints
// the canonical form, and ParseTilingExpr(ToString(e)) == e for every expression.
// Used by chain_program (hoisting), candidate_space (pruning), the tuner and the studio.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace stof::engine {

enum class ChainLoop : uint8_t { kM = 0, kN = 1, kK = 2, kH = 3 };
char LoopLetter(ChainLoop loop);  // 'm', 'n', 'k', 'h'

struct TilingExpr {
  // Deep: the loops outer to inner. Flat: order[0], order[1] are m and n (either order),
  // order[2] == kK and order[3] == kH are the two sequential nests inside order[1] (k first:
  // E = C x D needs C complete).
  std::array<ChainLoop, 4> order{ChainLoop::kM, ChainLoop::kN, ChainLoop::kK, ChainLoop::kH};
  bool flat = false;
  bool operator==(const TilingExpr&) const = default;
};

// "mhnk", "mn(k,h)".
std::string ToString(const TilingExpr& e);
// Errors name the text and the problem: "tiling expression 'mn(h,k)': h's nest runs before
// k's, but E = C x D needs C complete: write mn(k,h)".
Expected<TilingExpr> ParseTilingExpr(const std::string& text);
// For expressions built by hand: a permutation, and the flat form as documented above.
Status ValidateTilingExpr(const TilingExpr& e);

// The 26 expressions: the 24 deep orders in lexicographic order of the loop sequence with
// m < n < k < h (mnkh, mnhk, mknh, ..., hknm), then mn(k,h) and nm(k,h).
const std::vector<TilingExpr>& AllTilingExprs();
inline constexpr int kNumTilingExprs = 26;
// Position in AllTilingExprs(), or -1 for a malformed expression.
int TilingExprIndex(const TilingExpr& e);

}  // namespace stof::engine
