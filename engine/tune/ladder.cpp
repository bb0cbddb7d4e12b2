// PredictLadder and the ladder's names and default fused configuration (ladder.h).
#include "engine/tune/ladder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/select/kernel_select.h"
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
  STOF_ASSIGN_OR_RETURN(auto sel, SelectKernel(mask, w, device));
  // Row-wise ignores the block fields; the call's validation still wants legal ones (as
  // CudaBackend::MhaConfigChoices fills them).
  if (sel.kernel == MhaKernel::kRowWise) return MhaConfig{MhaKernel::kRowWise, 64, 64, 4};
  const std::vector<Eq2Candidate>& c = sel.eq2.candidates;
  std::vector<size_t> order(c.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // The kernels' order: Eq. 2-feasible first, best score first, ties in enumeration order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (c[a].feasible != c[b].feasible) return c[a].feasible;
    return c[a].score > c[b].score;
  });
  for (size_t i : order) {
    const Eq2Candidate& e = c[i];
    if (e.feasible && e.block_m >= 64 && e.block_n >= 64 && e.num_warps == e.block_m / 16)
      return MhaConfig{MhaKernel::kBlockWise, e.block_m, e.block_n, e.num_warps};
  }
  if (sel.eq2.best >= 0) {
    const Eq2Candidate& e = c[static_cast<size_t>(sel.eq2.best)];
    return MhaConfig{MhaKernel::kBlockWise, e.block_m, e.block_n, e.num_warps};
  }
  return MakeError("ladder: fused: no feasible block-wise configuration (Eq. 2) for head_dim " +
                   std::to_string(w.head_dim) + " on " + device.name);
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
