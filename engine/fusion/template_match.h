// Template matching (STOF 4.3, graph matching): a segment of ops -> the fused template that
// runs it, by the kinds of its ops in order and their data dependencies (each op must read
// the previous op's output). A segment with one op, or with no template, runs op by op
// (template name "", as in plans). Templates (docs/fusion.md):
//   sparse_mha          BatchGEMM [Scale] Mask Softmax BatchGEMM         (the MHA block)
//   scale_mask_softmax  [Scale] Mask Softmax (2+ ops)                    MI+MI
//   gemm_chain          GEMM [Bias] [GELU|ReLU] GEMM [Bias]              CI+CI (MCFuser)
//   gemm_norm           GEMM [Bias] [Add] LayerNorm|RMSNorm              CI+MI
//   gemm_act            GEMM [Bias] GELU|ReLU                            CI+MI
//   gemm_add            GEMM [Bias] Add                                  CI+MI (residual)
//   gemm_bias           GEMM Bias                                        CI+MI
//   bias_add_norm       [Bias] [Add] LayerNorm|RMSNorm (2+ ops)          MI+MI
// Used by `stof graph --scheme`, and (later) the tuner, plans and `stof run`.
// Invariants: matching is a pure function of (graph, segment); every template name is
// distinct and non-empty; kNone has the name "".
#pragma once

#include <string>
#include <vector>

#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"

namespace stof::engine {

enum class TemplateKind {
  kNone,  // op by op
  kSparseMha,
  kScaleMaskSoftmax,
  kGemmChain,
  kGemmNorm,
  kGemmAct,
  kGemmAdd,
  kGemmBias,
  kBiasAddNorm,
};
const char* TemplateName(TemplateKind k);  // "" for kNone, else "sparse_mha", ...
// Every template except kNone, in the order listed above.
const std::vector<TemplateKind>& AllTemplates();

struct TemplateMatch {
  Segment segment;
  TemplateKind kind = TemplateKind::kNone;
  std::string ops;      // the op kinds joined: "GEMM+Add+LayerNorm"
  std::string mix;      // "CI+CI" (two CI ops), "CI+MI", "MI+MI", or "CI" / "MI" (one op)
  std::string reason;   // kNone: why it runs op by op ("single op", "no template for ...")
  const char* Name() const { return TemplateName(kind); }
};

// `s` must lie inside the graph (1 <= first <= last <= N).
TemplateMatch MatchTemplate(const OpGraph& g, const Segment& s);
std::vector<TemplateMatch> MatchTemplates(const OpGraph& g, const FusionScheme& scheme);

}  // namespace stof::engine
