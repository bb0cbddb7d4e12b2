// PredictLadder and the ladder's names and default fused configuration (ladder.h).
#include "engine/tune/ladder.h"

#include <cmath>

#include "engine/select/mha_choice.h"
#include "engine/select/model_capabilities.h"
#include "engine/tune/segment_model.h"

namespace stof::engine {

const std::vector<MhaVariant>& LadderVariants() {
  static const std::vector<MhaVariant> kOrder = {MhaVariant::kUnfused, MhaVariant::kDecomposed,
                                                 MhaVariant::kRecomposed, MhaVariant::kFused};
  return kOrder;
}

const char* LadderRungName(MhaVariant v) {
  switch (v) {
    case MhaVariant::kUnfused: return "unfused";
    case MhaVariant::kDecomposed: return "decomposed (sd)";
    case MhaVariant::kRecomposed: return "decomposed + fused (sdf)";
    case MhaVariant::kFused: return "fully fused";
  }
  return "?";
}

Expected<MhaConfig> DefaultFusedMhaConfig(const Workload& w, const Mask& mask,
                                          const DeviceSpec& device) {
  // The mma.sync kernels take f16: the choice is asked in f16 whatever the workload's type.
  Workload f16 = w;
  f16.dtype = DType::kF16;
  STOF_ASSIGN_OR_RETURN(const MhaChoice c, ChooseMhaConfig(mask, f16, device, MhaRequest{},
                                                           ModelMhaCapabilities()));
  // A shape only the Hopper kernel serves has no mma.sync configuration: the fused kernel is
  // the Hopper one the choice took.
  const MhaConfig fused = c.portable.value_or(c.config);
  // Row-wise ignores the block fields; the call's validation still wants legal ones (as
  // CudaBackend::MhaConfigChoices fills them).
  if (fused.kernel == MhaKernel::kRowWise) return MhaConfig{MhaKernel::kRowWise, 64, 64, 4};
  return fused;
}

Expected<std::vector<LadderRung>> PredictLadder(const Workload& w, const Mask& mask,
                                                const DeviceSpec& device, const MhaConfig* given) {
  STOF_RETURN_IF_ERROR(w.Validate("workload"));
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  if (mask.Rows() != w.seq_len || mask.Cols() != w.seq_len)
    return MakeError("mask: expected " + std::to_string(w.seq_len) + " x " +
                     std::to_string(w.seq_len) + " (workload.seq_len), got " +
                     std::to_string(mask.Rows()) + " x " + std::to_string(mask.Cols()));
  MhaConfig fused;
  if (given != nullptr) {
    fused = *given;
  } else {
    STOF_ASSIGN_OR_RETURN(fused, DefaultFusedMhaConfig(w, mask, device));
  }
  std::vector<LadderRung> out;
  for (MhaVariant v : LadderVariants()) {
    auto p = PredictMhaCall(w, mask, v, fused, kLadderSubLen, device, H100SegmentConstants());
    if (!p.IsOk()) return MakeError(std::string("ladder: ") + LadderRungName(v) + ": " + p.Message());
    LadderRung r;
    r.variant = v;
    r.name = LadderRungName(v);
    r.us = p->us;
    r.dram_bytes = p->bytes;
    r.kernels = p->kernels;
    r.measured = false;
    r.basis = "predicted (segment model, H100 fit scaled to " + device.name + "): " + p->basis;
    out.push_back(std::move(r));
  }
  return out;
}

nlohmann::json LadderToJson(const std::vector<LadderRung>& rungs) {
  nlohmann::json a = nlohmann::json::array();
  for (const LadderRung& r : rungs) {
    a.push_back({{"variant", MhaVariantName(r.variant)},
                 {"name", r.name},
                 {"us", std::isfinite(r.us) ? nlohmann::json(r.us) : nlohmann::json(nullptr)},
                 {"dram_bytes", std::isfinite(r.dram_bytes) ? nlohmann::json(r.dram_bytes)
                                                            : nlohmann::json(nullptr)},
                 {"kernels", r.kernels},
                 {"measured", r.measured},
                 {"basis", r.basis}});
  }
  return a;
}

}  // namespace stof::engine
