// MCFuser's search space for one GEMM chain and its pruning (paper, sections III-A and III-C).
// Space: the 26 tiling expressions x tile sizes bm, bn, bk, bh, each a multiple of 16 in
// 16..RoundUp16(dim). Pruning, applied in this order, with counts kept after each step:
//   Rule 1 (dedupe): expressions whose programs (chain_program.h, every loop live) are equal
//     are one kernel; one representative is kept (the first, in AllTilingExprs() order, whose
//     bound loops are written outermost: mhnk rather than mnkh). 26 -> 3.
//   Rule 2 (intermediate tiles): drop expressions whose program holds a number of C tiles
//     that grows with the shape (k outside n per block: "kn" holds ceil(N / bn) tiles). 3 -> 2.
//   Rule 3 (padding): per loop, a tile must not pad a power-of-two dimension at all, and must
//     pad any other dimension by less than max_pad_ratio (5%) of it; padding up to the next
//     multiple of 16 is always allowed (no tile can avoid it: tensor cores need 16).
//   Rule 4 (shared memory): drop candidates whose equation-1 estimate (chain_model.h) exceeds
//     smem_slack (1.2) x device.smem_per_block_bytes.
//   Rule 1 at tile level (merge_equivalent): once extents are known, loops of extent 1 vanish
//     and more programs coincide (mn(k,h) with bh >= H is mhnk with the same tiles); a
//     candidate whose program equals an earlier kept candidate's with the same tiles goes.
// Used by chain_search, the tuner, the studio and docs/mcfuser.md (counts for G1-G12).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"
#include "engine/mcfuser/candidate.h"
#include "engine/mcfuser/chain_shape.h"
#include "engine/mcfuser/tiling_expr.h"

namespace stof::engine {

struct PruneOptions {
  bool rule1_dedupe = true;
  bool rule2_intermediate = true;
  bool rule3_padding = true;
  bool rule4_smem = true;
  bool merge_equivalent = true;  // rule 1 at tile level
  double max_pad_ratio = 0.05;
  double smem_slack = 1.2;
  int64_t max_candidates = int64_t{1} << 22;  // BuildCandidateSpace refuses to hold more

  Status Validate(const std::string& what = "prune_options") const;
};

// Counts before and after each step (each count equals the previous one when its rule is off).
struct PruneCounts {
  int64_t expressions = 0, expressions_rule1 = 0, expressions_rule2 = 0;
  int64_t tile_choices = 0, tile_choices_rule3 = 0;  // (bm, bn, bk, bh) combinations
  int64_t candidates = 0;   // expressions x tile_choices
  int64_t after_rule1 = 0, after_rule2 = 0, after_rule3 = 0, after_rule4 = 0;
  int64_t after_equivalence = 0;  // the final space
};

// Rule 1's groups: every expression with the same structural program.
struct ExpressionGroup {
  TilingExpr representative;
  std::vector<TilingExpr> members;  // AllTilingExprs() order
  std::string program;              // StructuralSchedule(...).text
  std::string sub_expression;       // per block: "nk", "kn", "n(k,h)"
  std::string c_tile_loops;         // non-empty: rule 2 drops the group
};
const std::vector<ExpressionGroup>& TilingExprGroups();  // in order of their first member

std::vector<int64_t> TileOptions(int64_t dim);  // 16, 32, ..., RoundUp16(dim)
// Rule 3 for one loop.
bool PaddingAllowed(int64_t dim, int64_t tile, double max_pad_ratio);

struct CandidateSpace {
  GemmChainShape shape;
  std::vector<TilingExpr> exprs;                     // after rules 1 and 2
  std::array<std::vector<int64_t>, 4> tile_options;  // per loop m, n, k, h, after rule 3
  std::vector<Candidate> candidates;                 // by expression, then bm, bn, bk, bh
  PruneCounts counts;
  std::unordered_map<uint64_t, int64_t> index;       // CandidateKey -> position

  int64_t Find(const Candidate& c) const;  // position in `candidates`, or -1
};

// Counts only (nothing materialised; fine for the unpruned 10^8).
Expected<PruneCounts> CountCandidateSpace(const GemmChainShape& shape, const DeviceSpec& device,
                                          const PruneOptions& options = {});
// The pruned space; an error when more than options.max_candidates survive.
Expected<CandidateSpace> BuildCandidateSpace(const GemmChainShape& shape,
                                             const DeviceSpec& device,
                                             const PruneOptions& options = {});

}  // namespace stof::engine
