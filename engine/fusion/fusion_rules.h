// STOF's fusion-expansion rules (docs/references.md, STOF 4.4) as pure functions from a scheme and its
// graph to the neighbour schemes one step away. The tuner (a later issue) walks them depth
// first, measures each neighbour and keeps it only if faster.
//   expand:  merge two adjacent segments into one (the others keep their ops).
//   seize:   a segment with at least one CI op takes the adjacent boundary op of a neighbour
//            made only of MI ops; the neighbour keeps at least one op (taking its only op is
//            an expand).
//   compete: a one-op segment that both neighbours could take goes to the neighbour with
//            exactly one CI op; when both or neither have exactly one, both outcomes are
//            returned, the left (producer) side first.
// Used by the tuner and the fusion tests. Invariants: every returned scheme is valid for the
// graph (at most two CI ops per segment), differs from the input, keeps the input's first
// digit, and moves are listed left to right.
#pragma once

#include <string>
#include <vector>

#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"

namespace stof::engine {

enum class FusionRule { kExpand, kSeize, kCompete };
const char* FusionRuleName(FusionRule r);  // "expand", "seize", "compete"

struct RuleMove {
  FusionRule rule = FusionRule::kExpand;
  FusionScheme scheme;
  std::string what;  // "merge [#7-#9] and [#10]", "[#10-#12] takes #13 from [#13,#14]"
};

std::vector<RuleMove> Expand(const FusionScheme& s, const OpGraph& g);
std::vector<RuleMove> Seize(const FusionScheme& s, const OpGraph& g);
std::vector<RuleMove> Compete(const FusionScheme& s, const OpGraph& g);
// Expand, then seize, then compete (a scheme reachable by two rules appears under both).
std::vector<RuleMove> NeighbourSchemes(const FusionScheme& s, const OpGraph& g);

}  // namespace stof::engine
