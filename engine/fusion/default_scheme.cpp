// DefaultScheme (see default_scheme.h): greedy longest template match.
#include "engine/fusion/default_scheme.h"


namespace stof::engine {

bool OutputEscapes(const OpGraph& g, const Segment& s, int op) {
  for (const Op& reader : g.ops) {
    if (s.Contains(reader.number)) continue;
    for (const TensorRef& t : reader.inputs)
      if (t.source == TensorSource::kOp && t.op == op) return true;
  }
  return false;
}

int EscapingInnerOutput(const OpGraph& g, const Segment& s, TemplateKind kind) {
  for (int op = s.first; op < s.last; ++op) {
    const bool written_anyway = kind == TemplateKind::kBiasAddNorm &&
                                g.At(op).kind == OpKind::kAdd && op + 1 == s.last;
    if (!written_anyway && OutputEscapes(g, s, op)) return op;
  }
  return 0;
}

FusionScheme DefaultScheme(const OpGraph& g, const DefaultSchemeOptions& options) {
  std::vector<Segment> segs;
  int first = 1;
  while (first <= g.Size()) {
    int best = first;
    for (int last = g.Size(); last > first; --last) {
      const Segment s{first, last};
      if (CiCount(g, s) > kMaxCiPerSegment) continue;
      const TemplateMatch m = MatchTemplate(g, s);
      if (m.kind == TemplateKind::kNone) continue;
      if (m.kind == TemplateKind::kGemmChain && !options.gemm_chains) continue;
      if (m.kind == TemplateKind::kGemmNorm && !options.gemm_norm) continue;
      if (EscapingInnerOutput(g, s, m.kind) != 0) continue;
      best = last;
      break;
    }
    segs.push_back({first, best});
    first = best + 1;
  }
  auto scheme = FusionScheme::FromSegments(segs, g);
  return scheme.IsOk() ? *scheme : FusionScheme::OpByOp(g);
}

}  // namespace stof::engine
