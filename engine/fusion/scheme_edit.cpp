// IsBoundary and ToggleBoundary (scheme_edit.h).
#include "engine/fusion/scheme_edit.h"

#include <vector>

namespace stof::engine {

bool IsBoundary(const FusionScheme& scheme, int after_op) {
  const std::string& c = scheme.Code();
  if (after_op < 1 || after_op >= static_cast<int>(c.size())) return false;
  return c[static_cast<size_t>(after_op - 1)] != c[static_cast<size_t>(after_op)];
}

Expected<FusionScheme> ToggleBoundary(const FusionScheme& scheme, const OpGraph& g, int after_op) {
  const int n = static_cast<int>(g.ops.size());
  if (static_cast<int>(scheme.Code().size()) != n)
    return MakeError("fusion: the scheme has " + std::to_string(scheme.Code().size()) +
                     " digits, the layer " + std::to_string(n) + " ops");
  if (after_op < 1 || after_op >= n) {
    std::string m = "fusion: boundary after op ";
    m += std::to_string(after_op);
    m += ": the layer has ops 1..";
    m += std::to_string(n);
    return MakeError(m);
  }
  const std::vector<Segment>& segs = scheme.Segments();
  const int at = scheme.SegmentOf(after_op);
  std::vector<Segment> out;
  out.reserve(segs.size() + 1);
  if (IsBoundary(scheme, after_op)) {  // join segment `at` with the next one
    const Segment joined{segs[static_cast<size_t>(at)].first, segs[static_cast<size_t>(at) + 1].last};
    if (CiCount(g, joined) > kMaxCiPerSegment) {
      std::string ci;
      for (int op = joined.first; op <= joined.last; ++op) {
        const Op& o = g.ops[static_cast<size_t>(op - 1)];
        if (o.Class() != OpClass::kCI) continue;
        if (!ci.empty()) ci += ", ";
        ci += '#';
        ci += std::to_string(op);
        ci += ' ';
        ci += OpKindName(o.kind);
      }
      std::string m = "fusion: joining ";
      m += SegmentLabel(segs[static_cast<size_t>(at)]);
      m += " and ";
      m += SegmentLabel(segs[static_cast<size_t>(at) + 1]);
      m += " would put ";
      m += std::to_string(CiCount(g, joined));
      m += " CI ops (";
      m += ci;
      m += ") in one segment; a fused segment holds at most ";
      m += std::to_string(kMaxCiPerSegment);
      m += " (STOF 4.4)";
      return MakeError(m);
    }
    for (int i = 0; i < static_cast<int>(segs.size()); ++i) {
      if (i == at) out.push_back(joined);
      else if (i != at + 1) out.push_back(segs[static_cast<size_t>(i)]);
    }
  } else {  // split segment `at` after `after_op`
    for (int i = 0; i < static_cast<int>(segs.size()); ++i) {
      const Segment& s = segs[static_cast<size_t>(i)];
      if (i != at) {
        out.push_back(s);
        continue;
      }
      out.push_back(Segment{s.first, after_op});
      out.push_back(Segment{after_op + 1, s.last});
    }
  }
  return FusionScheme::FromSegments(out, g, scheme.Code().empty() ? '0' : scheme.Code()[0]);
}

}  // namespace stof::engine
