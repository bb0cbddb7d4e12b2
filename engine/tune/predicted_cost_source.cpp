// PredictedCostSource (predicted_cost_source.h).
#include "engine/tune/predicted_cost_source.h"

#include <algorithm>

#include "engine/layout/block_layout.h"
#include "engine/mcfuser/candidate_space.h"
#include "engine/mcfuser/chain_kernel_map.h"
#include "engine/mcfuser/chain_search.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

Expected<std::vector<SegmentChoice>> PredictedCostSource::Choices(const Segment& s) {
  std::vector<SegmentChoice> out;
  const TemplateKind kind = RunningTemplate(m_graph, s, SegmentChoice{});
  if (kind == TemplateKind::kSparseMha) {
    if (!m_run) {  // once per source: the mask, workload and device do not change
      STOF_ASSIGN_OR_RETURN(const MhaRunChoice run,
                            ChooseRun(m_run_chooser, m_mask, m_graph.AttentionWorkload(), m_device));
      m_run = RunConfig(run);
    }
    // What runs first (the default every view shows), then the rest of Eq. 2's feasible
    // settings in its order and row-wise: the tuner may find one faster, and says "tuned".
    const Workload w = m_graph.AttentionWorkload();
    STOF_ASSIGN_OR_RETURN(auto sel, SelectKernel(m_mask, w, m_device));
    std::vector<MhaConfig> configs = {*m_run};
    for (const Eq2Candidate& e : sel.eq2.candidates)
      if (e.feasible) configs.push_back({MhaKernel::kBlockWise, e.block_m, e.block_n, e.num_warps});
    configs.push_back({MhaKernel::kRowWise, 64, 64, 4});
    std::vector<MhaConfig> unique;
    for (const MhaConfig& c : RankMhaConfigs(configs, w, m_device))
      if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
    for (const MhaConfig& c : unique) {
      SegmentChoice ch;
      ch.mha_config = c;
      out.push_back(ch);
    }
    SegmentChoice sdf;
    sdf.mha_variant = MhaVariant::kRecomposed;
    sdf.sub_len = 64;
    out.push_back(sdf);
    return out;
  }
  out.push_back(SegmentChoice{});
  if (kind == TemplateKind::kGemmChain) {
    auto shape = ChainShapeOf(m_graph, s);
    if (!shape.IsOk()) return out;
    auto space = BuildCandidateSpace(*shape, m_device);
    if (!space.IsOk()) return out;
    auto ranked = RankCandidates(*space, m_device);
    if (!ranked.IsOk()) return out;
    for (const RankedCandidate& r : *ranked) {
      if (!RunnableByChainKernel(r.candidate)) continue;
      SegmentChoice c;
      c.params = ChainParams(r.candidate);
      out.push_back(c);
      if (static_cast<int64_t>(out.size()) > kPredictedChainChoices) break;
    }
  }
  return out;
}

Expected<SegmentCost> PredictedCostSource::Cost(const Segment& s, const SegmentChoice& c) {
  SegmentCost cost;
  auto p = Predict(s, c);
  if (!p.IsOk()) {
    cost.error = p.Message();
    return cost;
  }
  cost.us = cost.predicted_us = p->us;
  cost.bytes = p->bytes;
  return cost;
}

}  // namespace stof::engine
