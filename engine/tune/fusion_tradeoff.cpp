// PredictFusionTradeoffs (fusion_tradeoff.h).
#include "engine/tune/fusion_tradeoff.h"

#include "engine/fusion/template_match.h"
#include "engine/tune/segment_model.h"

namespace stof::engine {

namespace {

Status Predict(const OpGraph& g, const Segment& s, const Mask& mask, const DeviceSpec& device,
               double* us, double* bytes) {
  STOF_ASSIGN_OR_RETURN(const SegmentPrediction p, PredictSegment(g, s, SegmentChoice{}, mask, device));
  *us += p.us;
  *bytes += p.bytes;
  return Status::Ok();
}

Expected<FusionTradeoff> Tradeoff(const OpGraph& g, const Mask& mask, const DeviceSpec& device,
                                  std::string what, const TemplateMatch& m,
                                  std::vector<Segment> apart) {
  FusionTradeoff t;
  t.what = std::move(what);
  t.tmpl = m.Name();
  t.fused = m.segment;
  t.apart = std::move(apart);
  STOF_RETURN_IF_ERROR(Predict(g, t.fused, mask, device, &t.fused_us, &t.fused_bytes));
  for (const Segment& s : t.apart)
    STOF_RETURN_IF_ERROR(Predict(g, s, mask, device, &t.apart_us, &t.apart_bytes));
  return t;
}

const char* EpilogueName(TemplateKind k) {
  switch (k) {
    case TemplateKind::kGemmAct: return "GEMM + epilogue (activation)";
    case TemplateKind::kGemmAdd: return "GEMM + epilogue (residual add)";
    case TemplateKind::kGemmBias: return "GEMM + epilogue (bias)";
    default: return nullptr;
  }
}

}  // namespace

Expected<std::vector<FusionTradeoff>> PredictFusionTradeoffs(const OpGraph& g, const Mask& mask,
                                                             const DeviceSpec& device) {
  std::vector<FusionTradeoff> out;
  const int n = static_cast<int>(g.ops.size());
  for (int op = 1; op < n; ++op) {
    if (g.ops[static_cast<size_t>(op - 1)].kind != OpKind::kGemm) continue;
    const TemplateMatch pair = MatchTemplate(g, Segment{op, op + 1});
    if (const char* name = EpilogueName(pair.kind)) {
      STOF_ASSIGN_OR_RETURN(FusionTradeoff t, Tradeoff(g, mask, device, name, pair,
                                                       {Segment{op, op}, Segment{op + 1, op + 1}}));
      out.push_back(std::move(t));
    }
    if (op + 2 > n) continue;
    const TemplateMatch triple = MatchTemplate(g, Segment{op, op + 2});
    if (triple.kind == TemplateKind::kGemmNorm) {
      const std::string name = std::string("GEMM + ") + OpKindName(g.ops[static_cast<size_t>(op)].kind) +
                               " + " + OpKindName(g.ops[static_cast<size_t>(op + 1)].kind);
      STOF_ASSIGN_OR_RETURN(FusionTradeoff t,
                            Tradeoff(g, mask, device, name, triple,
                                     {Segment{op, op + 1}, Segment{op + 2, op + 2}}));
      out.push_back(std::move(t));
    }
  }
  return out;
}

Expected<std::vector<TradeoffOnDevice>> TradeoffAcrossDevices(const OpGraph& g, const Mask& mask,
                                                              const std::vector<DeviceSpec>& devices,
                                                              const std::string& tmpl) {
  std::vector<TradeoffOnDevice> out;
  for (const DeviceSpec& d : devices) {
    STOF_ASSIGN_OR_RETURN(const std::vector<FusionTradeoff> all, PredictFusionTradeoffs(g, mask, d));
    for (const FusionTradeoff& t : all) {
      if (t.tmpl != tmpl) continue;
      out.push_back({d.name, d.dram_bytes_per_s, t});
      break;
    }
  }
  return out;
}

}  // namespace stof::engine
