// SegmentSignature, ChoiceText and RunningTemplate (cost_source.h).
#include "engine/tune/cost_source.h"

#include <algorithm>

#include "engine/fusion/default_scheme.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

namespace {

std::string Dims(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(d[i]);
  }
  return s;
}

}  // namespace

Expected<Prediction> CostSource::Predict(const Segment& s, const SegmentChoice& c) const {
  if (!m_predictor) return MakeError("tune: no analytical model was given");
  return m_predictor(s, c);
}

std::string SegmentSignature(const OpGraph& g, const Segment& s, const Mask& mask) {
  std::string out = std::string(ModelFamilyName(g.family)) + " ";
  bool attention = false;
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = g.At(n);
    if (n > s.first) out += "|";
    out += OpKindName(op.kind);
    out += "[";
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const TensorRef& t = op.inputs[i];
      // Where an input comes from matters for the calls (a residual from inside or outside
      // the segment, the packing of q/k/v): its source and relative producer are part of it.
      if (i) out += ';';
      out += Dims(t.dims);
      out += '@';
      out += TensorSourceName(t.source);
      if (t.source == TensorSource::kOp) out += std::to_string(t.op - s.first);
      if (t.name == "q" || t.name == "k" || t.name == "v") out += t.name;
    }
    out += '>';
    out += Dims(op.output.dims);
    out += ']';
    if (op.has_bias) out += "b";
    if (op.causal) out += "c";
    if (op.kind == OpKind::kMask || op.kind == OpKind::kBatchGemm) attention = true;
  }
  if (attention) out += "|mask " + mask.HashHex();
  return out;
}

std::string ChoiceText(const SegmentChoice& c, TemplateKind kind) {
  if (c.force_op_by_op) return "op by op";
  if (kind == TemplateKind::kSparseMha) {
    switch (c.mha_variant) {
      case MhaVariant::kFused:
        if (c.mha_config.kernel == MhaKernel::kRowWise) return "fused row_wise";
        return "fused block_wise " + std::to_string(c.mha_config.block_m) + "x" +
               std::to_string(c.mha_config.block_n) + " w" +
               std::to_string(c.mha_config.num_warps);
      case MhaVariant::kUnfused: return "unfused";
      case MhaVariant::kDecomposed: return "sd T" + std::to_string(c.sub_len);
      case MhaVariant::kRecomposed: return "sdf T" + std::to_string(c.sub_len);
    }
  }
  return c.params.empty() ? "default" : ParamMapText(c.params);
}

TemplateKind RunningTemplate(const OpGraph& g, const Segment& s, const SegmentChoice& c) {
  const TemplateMatch m = MatchTemplate(g, s);
  if (m.kind == TemplateKind::kNone || c.force_op_by_op) return TemplateKind::kNone;
  if (EscapingInnerOutput(g, s, m.kind) != 0) return TemplateKind::kNone;
  return m.kind;
}

}  // namespace stof::engine

namespace stof::engine {

std::vector<MhaConfig> RankMhaConfigs(const std::vector<MhaConfig>& configs,
                                      const Workload& workload, const DeviceSpec& device) {
  if (configs.size() <= 1) return configs;
  auto eq2 = EvaluateEq2(workload, device);
  const auto score = [&](const MhaConfig& c) -> double {
    if (!eq2.IsOk() || c.kernel != MhaKernel::kBlockWise) return -2;
    for (const Eq2Candidate& e : eq2->candidates)
      if (e.block_m == c.block_m && e.block_n == c.block_n && e.num_warps == c.num_warps)
        return e.feasible ? e.score : -1;
    return -1.5;
  };
  std::vector<MhaConfig> rest(configs.begin() + 1, configs.end());
  std::stable_sort(rest.begin(), rest.end(), [&](const MhaConfig& a, const MhaConfig& b) {
    return score(a) > score(b);
  });
  std::vector<MhaConfig> out{configs[0]};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

FusionScheme SchemeIsolating(const OpGraph& g, const Segment& s) {
  std::vector<Segment> segs;
  for (int op = 1; op < s.first; ++op) segs.push_back({op, op});
  segs.push_back(s);
  for (int op = s.last + 1; op <= g.Size(); ++op) segs.push_back({op, op});
  auto scheme = FusionScheme::FromSegments(segs, g);
  return scheme.IsOk() ? *scheme : FusionScheme::OpByOp(g);
}

int SegmentIndex(const FusionScheme& scheme, const Segment& s) {
  const auto& segs = scheme.Segments();
  for (size_t i = 0; i < segs.size(); ++i)
    if (segs[i] == s) return static_cast<int>(i);
  return -1;
}

}  // namespace stof::engine

namespace stof::engine {

Expected<GemmChainShape> ChainShapeOf(const OpGraph& g, const Segment& s) {
  const Op* g1 = nullptr;
  const Op* g2 = nullptr;
  for (int n = s.first; n <= s.last; ++n)
    if (g.At(n).kind == OpKind::kGemm) (g1 ? g2 : g1) = &g.At(n);
  if (!g1 || !g2) return MakeError("tune: " + SegmentLabel(s) + ": not a GEMM chain");
  GemmChainShape shape;
  shape.batch = 1;
  shape.m = g1->output.Elements() / g1->output.dims.back();
  shape.k = g1->inputs.at(0).dims.back();
  shape.n = g1->output.dims.back();
  shape.h = g2->output.dims.back();
  return shape;
}

ParamMap ChainParams(const Candidate& c) {
  return ParamMap{{"bm", c.tiles.bm}, {"bn", c.tiles.bn}, {"bk", c.tiles.bk},
                  {"bh", c.tiles.bh}, {"warps", 4}};
}

}  // namespace stof::engine
