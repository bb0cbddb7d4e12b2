// The program a tiling expression executes (paper, section III-B: primitive statements, DAG
// analysis, hoisting) and its trip counts. Used by candidate_space (rules 1, 2 and the
// smem estimate), chain_model (equations 2-5), chain_kernel_map and the studio.
//
// Statements: L_A (indexes m, k), L_B (k, n), C_C (m, n, k), L_D (n, h), C_E (m, n, h),
// S_E (m, h). Building the program, in this order:
//  1. Grid binding (rule 1's premise): the output's spatial loops go to blockIdx. In a deep
//     expression m and h are bound wherever they appear (the nest is perfect, so interchange
//     is legal: mhnk and mnkh both run "nk" per block); in a flat one only m is (h runs
//     inside n, E's reduction loop). The batch loop 'b' is always bound. The per-block part
//     keeps the remaining loops in their written order.
//  2. Compute statements sit in their innermost related loop; C_E runs only once C is
//     complete, so when k encloses n ("kn") C_E gets its own n loop after the k loop, and in
//     the flat form S_E gets its own h loop after the n loop (E is complete only then).
//  3. Loops of extent 1 vanish (the DAG's dead nodes); two adjacent loops over the same
//     variable (the copies of step 2, once the loop between them vanished) merge.
//  4. Each load/store is hoisted out of every loop that does not index its tensor: it ends
//     in the scope of its innermost indexing loop (loads go before the loop they leave,
//     stores after).
// Trip counts are products of the extents of the enclosing loops, grid loops included: a
// statement in a block runs once per block (no credit for reuse across blocks via L2). So
// two expressions with the same program are the same kernel, which is what rule 1 uses.
//
// Text form, the paper's notation with the grid loops first: for mhnk, all extents > 1,
// "bmh(n(k(L_A, L_B, C_C), L_D, C_E), S_E)"; with k of extent 1 (bk >= K),
// "bmh(L_A, n(L_B, C_C, L_D, C_E), S_E)" (A is loaded once per block, as in Fig. 4(b)).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/mcfuser/candidate.h"
#include "engine/mcfuser/tiling_expr.h"

namespace stof::engine {

enum class ChainStmt : uint8_t { kLoadA, kLoadB, kComputeC, kLoadD, kComputeE, kStoreE };
inline constexpr int kNumChainStmts = 6;
const char* StmtName(ChainStmt s);  // "L_A", "L_B", "C_C", "L_D", "C_E", "S_E"

// Trip counts of the tile loops: b = batch, m = ceil(M / bm), n, k, h likewise.
struct ChainExtents {
  int64_t b = 1, m = 1, n = 1, k = 1, h = 1;
  int64_t Of(char loop) const;  // 'b', 'm', 'n', 'k', 'h'
};
ChainExtents ExtentsOf(const GemmChainShape& shape, const ChainTiles& tiles);

// The extent-independent part: which loops enclose what, for one expression and one set of
// loops with extent > 1 (only whether an extent exceeds 1 matters here).
struct ChainSchedule {
  struct Placement {
    ChainStmt stmt = ChainStmt::kLoadA;
    std::string loops;  // enclosing loops, outer to inner, grid loops first: "bmhnk"
  };
  std::string grid;            // bound loops with extent > 1, in the order b, m, h
  std::string sub_expression;  // per-block loops: "nk", "kn", "n(k,h)", "n", "(k,h)", ""
  std::string block_text;      // per-block program: "n(k(L_A, L_B, C_C), L_D, C_E), S_E"
  std::string text;            // grid + block: "bmh(n(k(L_A, L_B, C_C), L_D, C_E), S_E)"
  std::vector<Placement> stmts;  // all six, in program order
  std::string c_tile_loops;    // loops whose extents multiply the C tiles held per block
  std::string e_tile_loops;    // ... the E accumulator tiles held per block
  const Placement& Find(ChainStmt s) const;
};
// `extents` only says which loops are live (extent > 1); the expression must be valid.
ChainSchedule ScheduleChain(const TilingExpr& e, const ChainExtents& extents);
// Every loop live: the form rules 1 and 2 compare (expression level, tile-independent).
ChainSchedule StructuralSchedule(const TilingExpr& e);

// A candidate's program with numbers.
struct ChainProgram {
  ChainSchedule schedule;
  ChainExtents extents;
  std::array<int64_t, kNumChainStmts> trips{};  // by ChainStmt value
  int64_t blocks = 1;   // thread blocks: product of the grid extents (batch included)
  int64_t c_tiles = 1;  // intermediate C tiles (bm x bn) held per block
  int64_t e_tiles = 1;  // E accumulator tiles (bm x bh) held per block
  int64_t Trips(ChainStmt s) const { return trips[static_cast<int>(s)]; }
};
Expected<ChainProgram> BuildChainProgram(const Candidate& c);
// The same for a candidate known to be valid (the space's hot loop; no checks).
ChainProgram BuildChainProgramUnchecked(const Candidate& c);

}  // namespace stof::engine
