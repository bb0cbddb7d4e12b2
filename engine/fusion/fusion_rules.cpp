// expand, seize and compete (see fusion_rules.h).
#include "engine/fusion/fusion_rules.h"

#include <utility>

namespace stof::engine {

namespace {

bool MiOnly(const OpGraph& g, const Segment& s) { return CiCount(g, s) == 0; }

// A move to `segs` (already within the CI limit), keeping the scheme's first digit.
void Add(std::vector<RuleMove>* out, FusionRule rule, const FusionScheme& from,
         const OpGraph& g, std::vector<Segment> segs, std::string what) {
  auto next = FusionScheme::FromSegments(segs, g, from.Code()[0]);
  if (!next.IsOk()) return;  // cannot happen for the moves built below; never offer it
  out->push_back(RuleMove{rule, std::move(*next), std::move(what)});
}

// Segments i and i + 1 merged.
std::vector<Segment> Merged(const std::vector<Segment>& segs, size_t i) {
  std::vector<Segment> out = segs;
  out[i].last = out[i + 1].last;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  return out;
}

}  // namespace

const char* FusionRuleName(FusionRule r) {
  switch (r) {
    case FusionRule::kExpand: return "expand";
    case FusionRule::kSeize: return "seize";
    case FusionRule::kCompete: return "compete";
  }
  return "?";
}

std::vector<RuleMove> Expand(const FusionScheme& s, const OpGraph& g) {
  std::vector<RuleMove> out;
  const std::vector<Segment>& segs = s.Segments();
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    if (CiCount(g, segs[i]) + CiCount(g, segs[i + 1]) > kMaxCiPerSegment) continue;
    Add(&out, FusionRule::kExpand, s, g, Merged(segs, i),
        "merge " + SegmentLabel(segs[i]) + " and " + SegmentLabel(segs[i + 1]));
  }
  return out;
}

std::vector<RuleMove> Seize(const FusionScheme& s, const OpGraph& g) {
  std::vector<RuleMove> out;
  const std::vector<Segment>& segs = s.Segments();
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    const Segment& left = segs[i];
    const Segment& right = segs[i + 1];
    // Moving an MI op never changes a CI count, so the result stays within the limit.
    if (CiCount(g, left) >= 1 && MiOnly(g, right) && right.Size() >= 2) {
      std::vector<Segment> next = segs;
      ++next[i].last;
      ++next[i + 1].first;
      Add(&out, FusionRule::kSeize, s, g, std::move(next),
          SegmentLabel(left) + " takes #" + std::to_string(right.first) + " from " +
              SegmentLabel(right));
    }
    if (CiCount(g, right) >= 1 && MiOnly(g, left) && left.Size() >= 2) {
      std::vector<Segment> next = segs;
      --next[i].last;
      --next[i + 1].first;
      Add(&out, FusionRule::kSeize, s, g, std::move(next),
          SegmentLabel(right) + " takes #" + std::to_string(left.last) + " from " +
              SegmentLabel(left));
    }
  }
  return out;
}

std::vector<RuleMove> Compete(const FusionScheme& s, const OpGraph& g) {
  std::vector<RuleMove> out;
  const std::vector<Segment>& segs = s.Segments();
  for (size_t k = 1; k + 1 < segs.size(); ++k) {
    const Segment& op = segs[k];
    if (op.Size() != 1) continue;
    const int ci_op = CiCount(g, op);
    const Segment& left = segs[k - 1];
    const Segment& right = segs[k + 1];
    const int ci_left = CiCount(g, left), ci_right = CiCount(g, right);
    // Only a contest when both sides could take the op.
    if (ci_left + ci_op > kMaxCiPerSegment || ci_right + ci_op > kMaxCiPerSegment) continue;
    const bool left_wins = ci_left == 1 || ci_right != 1;
    const bool right_wins = ci_right == 1 || ci_left != 1;
    std::string contested = "#";
    contested += std::to_string(op.first);
    if (left_wins) {
      Add(&out, FusionRule::kCompete, s, g, Merged(segs, k - 1),
          SegmentLabel(left) + " wins " + contested + " over " + SegmentLabel(right));
    }
    if (right_wins) {
      Add(&out, FusionRule::kCompete, s, g, Merged(segs, k),
          SegmentLabel(right) + " wins " + contested + " over " + SegmentLabel(left));
    }
  }
  return out;
}

std::vector<RuleMove> NeighbourSchemes(const FusionScheme& s, const OpGraph& g) {
  std::vector<RuleMove> out = Expand(s, g);
  for (auto* rule : {&Seize, &Compete}) {
    std::vector<RuleMove> more = (*rule)(s, g);
    for (RuleMove& m : more) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace stof::engine
