// Segment -> template by kind patterns and dependency checks (see template_match.h).
#include "engine/fusion/template_match.h"

#include <initializer_list>

namespace stof::engine {

namespace {

// One position of a pattern: any of `kinds`, possibly absent.
struct Step {
  std::vector<OpKind> kinds;
  bool optional = false;
};
struct Pattern {
  TemplateKind kind;
  std::vector<Step> steps;
  int min_ops;
};

Step One(std::initializer_list<OpKind> k) { return Step{k, false}; }
Step Opt(std::initializer_list<OpKind> k) { return Step{k, true}; }

const std::vector<Pattern>& Patterns() {
  using K = OpKind;
  static const std::vector<Pattern> kPatterns = {
      {TemplateKind::kSparseMha,
       {One({K::kBatchGemm}), Opt({K::kScale}), One({K::kMask}), One({K::kSoftmax}),
        One({K::kBatchGemm})},
       4},
      {TemplateKind::kScaleMaskSoftmax, {Opt({K::kScale}), One({K::kMask}), One({K::kSoftmax})}, 2},
      {TemplateKind::kGemmChain,
       {One({K::kGemm}), Opt({K::kBias}), Opt({K::kGelu, K::kRelu}), One({K::kGemm}),
        Opt({K::kBias})},
       2},
      {TemplateKind::kGemmNorm,
       {One({K::kGemm}), Opt({K::kBias}), Opt({K::kAdd}), One({K::kLayerNorm, K::kRmsNorm})},
       2},
      {TemplateKind::kGemmAct, {One({K::kGemm}), Opt({K::kBias}), One({K::kGelu, K::kRelu})}, 2},
      {TemplateKind::kGemmAdd, {One({K::kGemm}), Opt({K::kBias}), One({K::kAdd})}, 2},
      {TemplateKind::kGemmBias, {One({K::kGemm}), One({K::kBias})}, 2},
      {TemplateKind::kBiasAddNorm,
       {Opt({K::kBias}), Opt({K::kAdd}), One({K::kLayerNorm, K::kRmsNorm})},
       2},
  };
  return kPatterns;
}

bool StepTakes(const Step& st, OpKind k) {
  for (OpKind x : st.kinds) {
    if (x == k) return true;
  }
  return false;
}

// Does kinds[i..] match steps[j..]? Optional steps may be skipped.
bool MatchFrom(const std::vector<OpKind>& kinds, size_t i, const std::vector<Step>& steps,
               size_t j) {
  if (j == steps.size()) return i == kinds.size();
  if (i < kinds.size() && StepTakes(steps[j], kinds[i]) && MatchFrom(kinds, i + 1, steps, j + 1)) {
    return true;
  }
  return steps[j].optional && MatchFrom(kinds, i, steps, j + 1);
}

bool ReadsOutputOf(const Op& op, int producer) {
  for (const TensorRef& t : op.inputs) {
    if (t.source == TensorSource::kOp && t.op == producer) return true;
  }
  return false;
}

}  // namespace

const char* TemplateName(TemplateKind k) {
  switch (k) {
    case TemplateKind::kNone: return "";
    case TemplateKind::kSparseMha: return "sparse_mha";
    case TemplateKind::kScaleMaskSoftmax: return "scale_mask_softmax";
    case TemplateKind::kGemmChain: return "gemm_chain";
    case TemplateKind::kGemmNorm: return "gemm_norm";
    case TemplateKind::kGemmAct: return "gemm_act";
    case TemplateKind::kGemmAdd: return "gemm_add";
    case TemplateKind::kGemmBias: return "gemm_bias";
    case TemplateKind::kBiasAddNorm: return "bias_add_norm";
  }
  return "";
}

const std::vector<TemplateKind>& AllTemplates() {
  static const std::vector<TemplateKind> kAll = {
      TemplateKind::kSparseMha, TemplateKind::kScaleMaskSoftmax, TemplateKind::kGemmChain,
      TemplateKind::kGemmNorm,  TemplateKind::kGemmAct,          TemplateKind::kGemmAdd,
      TemplateKind::kGemmBias,  TemplateKind::kBiasAddNorm};
  return kAll;
}

TemplateMatch MatchTemplate(const OpGraph& g, const Segment& s) {
  TemplateMatch m;
  m.segment = s;
  std::vector<OpKind> kinds;
  bool has_ci = false, has_mi = false;
  for (int op = s.first; op <= s.last; ++op) {
    const Op& o = g.At(op);
    kinds.push_back(o.kind);
    if (!m.ops.empty()) m.ops += '+';
    m.ops += OpKindName(o.kind);
    (o.Class() == OpClass::kCI ? has_ci : has_mi) = true;
  }
  if (CiCount(g, s) == 2) {
    m.mix = "CI+CI";
  } else if (has_ci && has_mi) {
    m.mix = "CI+MI";
  } else if (s.Size() == 1) {
    m.mix = has_ci ? "CI" : "MI";
  } else {
    m.mix = "MI+MI";
  }
  if (s.Size() == 1) {
    m.reason = "single op";
    return m;
  }
  // Fusion keeps intermediates on chip only along a chain: each op reads the one before.
  for (int op = s.first + 1; op <= s.last; ++op) {
    if (!ReadsOutputOf(g.At(op), op - 1)) {
      m.reason = "op #" + std::to_string(op) + " does not read op #" + std::to_string(op - 1) +
                 "'s output, so " + m.ops + " is not a chain";
      return m;
    }
  }
  for (const Pattern& p : Patterns()) {
    if (static_cast<int>(kinds.size()) >= p.min_ops && MatchFrom(kinds, 0, p.steps, 0)) {
      m.kind = p.kind;
      return m;
    }
  }
  m.reason = "no template for " + m.ops;
  return m;
}

std::vector<TemplateMatch> MatchTemplates(const OpGraph& g, const FusionScheme& scheme) {
  std::vector<TemplateMatch> out;
  for (const Segment& s : scheme.Segments()) out.push_back(MatchTemplate(g, s));
  return out;
}

}  // namespace stof::engine
