// Enumeration and pruning of MCFuser's space (candidate_space.h). Rule 4 and the tile-level
// merge depend on a candidate only through its schedule, which depends only on the expression
// and on which loops have extent > 1: schedules are cached per (expression, live-loop mask),
// so the per-candidate work is a few multiplications and the unpruned space can be counted.
#include "engine/mcfuser/candidate_space.h"

#include <map>
#include <optional>

#include "engine/mcfuser/chain_model.h"
#include "engine/mcfuser/chain_program.h"

namespace stof::engine {

namespace {

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Bound loops written outermost: the representative rule 1 keeps (mhnk, not mnkh).
bool GridOutermost(const TilingExpr& e) {
  auto bound = [&](ChainLoop l) { return l == ChainLoop::kM || (!e.flat && l == ChainLoop::kH); };
  const int n_bound = e.flat ? 1 : 2;
  for (int i = 0; i < n_bound; ++i)
    if (!bound(e.order[i])) return false;
  return true;
}

int LiveMask(const ChainExtents& x) {
  return (x.b > 1) | (x.m > 1) << 1 | (x.n > 1) << 2 | (x.k > 1) << 3 | (x.h > 1) << 4;
}
ChainExtents FromMask(int mask) {
  auto e = [&](int bit) -> int64_t { return (mask >> bit) & 1 ? 2 : 1; };
  return ChainExtents{e(0), e(1), e(2), e(3), e(4)};
}

// Walks the space once; `out`, when given, receives the surviving candidates.
Expected<PruneCounts> Walk(const GemmChainShape& shape, const DeviceSpec& device,
                           const PruneOptions& opt, CandidateSpace* out) {
  STOF_RETURN_IF_ERROR(shape.Validate());
  STOF_RETURN_IF_ERROR(device.Validate());
  STOF_RETURN_IF_ERROR(opt.Validate());
  PruneCounts c;

  // Rules 1 and 2 on expressions.
  std::vector<TilingExpr> exprs;
  c.expressions = kNumTilingExprs;
  if (opt.rule1_dedupe) {
    for (const ExpressionGroup& g : TilingExprGroups()) exprs.push_back(g.representative);
  } else {
    exprs = AllTilingExprs();
  }
  c.expressions_rule1 = static_cast<int64_t>(exprs.size());
  if (opt.rule2_intermediate) {
    std::vector<TilingExpr> kept;
    for (const TilingExpr& e : exprs)
      if (StructuralSchedule(e).c_tile_loops.empty()) kept.push_back(e);
    exprs = std::move(kept);
  }
  c.expressions_rule2 = static_cast<int64_t>(exprs.size());

  // Rule 3 per loop.
  const std::array<int64_t, 4> dims = {shape.m, shape.n, shape.k, shape.h};
  std::array<std::vector<int64_t>, 4> all, kept;
  c.tile_choices = c.tile_choices_rule3 = 1;
  for (int d = 0; d < 4; ++d) {
    all[d] = TileOptions(dims[d]);
    for (int64_t t : all[d])
      if (!opt.rule3_padding || PaddingAllowed(dims[d], t, opt.max_pad_ratio)) kept[d].push_back(t);
    c.tile_choices *= static_cast<int64_t>(all[d].size());
    c.tile_choices_rule3 *= static_cast<int64_t>(kept[d].size());
  }
  c.candidates = c.expressions * c.tile_choices;
  c.after_rule1 = c.expressions_rule1 * c.tile_choices;
  c.after_rule2 = c.expressions_rule2 * c.tile_choices;
  c.after_rule3 = c.expressions_rule2 * c.tile_choices_rule3;

  // Rule 4 and the tile-level merge, with schedules cached per (expression, live mask).
  const size_t n_expr = exprs.size();
  std::vector<std::array<std::optional<ChainSchedule>, 32>> cache(n_expr);
  auto schedule = [&](size_t i, int mask) -> const ChainSchedule& {
    if (!cache[i][mask]) cache[i][mask] = ScheduleChain(exprs[i], FromMask(mask));
    return *cache[i][mask];
  };
  auto duplicate = [&](size_t i, int mask) {
    for (size_t j = 0; j < i; ++j)
      if (schedule(j, mask).text == schedule(i, mask).text) return true;
    return false;
  };
  std::vector<std::array<int8_t, 32>> dup(n_expr);  // -1 unknown, 0 no, 1 yes
  for (auto& d : dup) d.fill(-1);
  const double smem_limit = opt.smem_slack * static_cast<double>(device.smem_per_block_bytes);

  if (!out && !opt.rule4_smem && !opt.merge_equivalent) {  // nothing per candidate to check
    c.after_rule4 = c.after_equivalence = c.after_rule3;
    return c;
  }
  if (out) {
    out->shape = shape;
    out->exprs = exprs;
    out->tile_options = kept;
    out->candidates.clear();
    out->index.clear();
  }
  for (size_t i = 0; i < n_expr; ++i) {
    for (int64_t bm : kept[0])
      for (int64_t bn : kept[1])
        for (int64_t bk : kept[2])
          for (int64_t bh : kept[3]) {
            const ChainTiles t{bm, bn, bk, bh};
            const ChainExtents x = ExtentsOf(shape, t);
            const int mask = LiveMask(x);
            const ChainSchedule& s = schedule(i, mask);
            auto product = [&](const std::string& loops) {
              int64_t v = 1;
              for (char l : loops) v *= x.Of(l);
              return v;
            };
            if (opt.rule4_smem) {
              const int64_t smem =
                  EstimateSmemBytes(t, product(s.c_tile_loops), product(s.e_tile_loops));
              if (static_cast<double>(smem) > smem_limit) continue;
            }
            ++c.after_rule4;
            if (opt.merge_equivalent) {
              if (dup[i][mask] < 0) dup[i][mask] = duplicate(i, mask) ? 1 : 0;
              if (dup[i][mask] == 1) continue;
            }
            ++c.after_equivalence;
            if (out) {
              if (c.after_equivalence > opt.max_candidates)
                return MakeError("gemm_chain " + ToString(shape) + ": more than " +
                                 std::to_string(opt.max_candidates) +
                                 " candidates survive pruning (prune_options.max_candidates); "
                                 "enable rules 3 and 4 or raise the limit");
              Candidate cand{shape, exprs[i], t};
              out->index.emplace(CandidateKey(cand),
                                 static_cast<int64_t>(out->candidates.size()));
              out->candidates.push_back(cand);
            }
          }
  }
  if (!opt.rule4_smem) c.after_rule4 = c.after_rule3;
  if (out) out->counts = c;
  return c;
}

}  // namespace

Status PruneOptions::Validate(const std::string& what) const {
  if (!(max_pad_ratio >= 0 && max_pad_ratio < 1))
    return MakeError(what + ": max_pad_ratio: must be in [0, 1), got " +
                     std::to_string(max_pad_ratio));
  if (!(smem_slack > 0))
    return MakeError(what + ": smem_slack: must be positive, got " + std::to_string(smem_slack));
  if (max_candidates < 1)
    return MakeError(what + ": max_candidates: must be positive, got " +
                     std::to_string(max_candidates));
  return Status::Ok();
}

const std::vector<ExpressionGroup>& TilingExprGroups() {
  static const std::vector<ExpressionGroup> kGroups = [] {
    std::vector<ExpressionGroup> groups;
    std::map<std::string, size_t> by_program;
    for (const TilingExpr& e : AllTilingExprs()) {
      const ChainSchedule s = StructuralSchedule(e);
      auto [it, fresh] = by_program.emplace(s.text, groups.size());
      if (fresh) groups.push_back({e, {}, s.text, s.sub_expression, s.c_tile_loops});
      ExpressionGroup& g = groups[it->second];
      g.members.push_back(e);
      if (!GridOutermost(g.representative) && GridOutermost(e)) g.representative = e;
    }
    return groups;
  }();
  return kGroups;
}

std::vector<int64_t> TileOptions(int64_t dim) {
  std::vector<int64_t> out;
  for (int64_t t = 16; t <= RoundUp16(dim); t += 16) out.push_back(t);
  return out;
}

bool PaddingAllowed(int64_t dim, int64_t tile, double max_pad_ratio) {
  const int64_t padded = CeilDiv(dim, tile) * tile;
  if (padded == RoundUp16(dim)) return true;  // the least padding any tile needs
  if (IsPowerOfTwo(dim)) return false;
  return static_cast<double>(padded - dim) < max_pad_ratio * static_cast<double>(dim);
}

int64_t CandidateSpace::Find(const Candidate& c) const {
  if (!(c.shape == shape) || TilingExprIndex(c.expr) < 0 || !ValidateTiles(shape, c.tiles))
    return -1;
  const auto it = index.find(CandidateKey(c));
  return it == index.end() ? -1 : it->second;
}

Expected<PruneCounts> CountCandidateSpace(const GemmChainShape& shape, const DeviceSpec& device,
                                          const PruneOptions& options) {
  return Walk(shape, device, options, nullptr);
}

Expected<CandidateSpace> BuildCandidateSpace(const GemmChainShape& shape,
                                             const DeviceSpec& device,
                                             const PruneOptions& options) {
  CandidateSpace space;
  Expected<PruneCounts> c = Walk(shape, device, options, &space);
  if (!c) return c.ToStatus();
  return space;
}

}  // namespace stof::engine
