// `stof run`'s check before any timing: one small layer of the run's model and scheme
// (batch 1, L <= 128) against the CPU reference (engine::CheckLayerAgainstCpu). Called by Run
// (cmd_run.cpp) unless --no-check or --device cpu.
#include <algorithm>
#include <string>

#include "app/cli/cmd_run_internal.h"

namespace stof::app::run_detail {

// One small layer (batch 1, L <= 128, the same scheme) against the CPU reference: its JSON,
// or an error when it could not run or differs.
engine::Expected<nlohmann::json> CheckSmallLayer(const RunArgs& a, const LayerSource& src,
                                                 engine::Backend& backend,
                                                 engine::DType dtype,
                                                 const engine::FusionScheme& scheme,
                                                 const std::vector<engine::SegmentChoice>& choices) {
  const int64_t check_seq = std::min<int64_t>(src.graph.seq_len, 128);
  auto sg = src.GraphAt(1, check_seq);
  MaskSourceOptions mo = a.mask;
  mo.seq = check_seq;
  // A mask file or the plan's mask has its own size: the check uses BigBird at its L.
  if (!a.mask.mask_file.empty() || a.mask.pattern.empty()) mo.mask_file.clear(), mo.pattern = "bigbird";
  if (mo.width > check_seq) mo.width = -1;
  if (mo.global > check_seq) mo.global = -1;
  auto sm = ResolveMaskSource(mo);
  if (!sg.IsOk() || !sm.IsOk()) return engine::Error{"check: " + (sg.IsOk() ? sm.Message() : sg.Message())};
  sg->dtype = dtype;
  auto ss = engine::FusionScheme::FromCode(scheme.Code(), *sg);
  if (!ss.IsOk()) return engine::Error{"check: " + ss.Message()};
  std::vector<engine::SegmentChoice> sc = choices;
  for (auto& c : sc) c.mha_config = engine::MhaConfig{};  // 64x64x4: supported at any L
  auto check = engine::CheckLayerAgainstCpu(backend, *sg, sm->mask, *ss, sc, a.weight_seed,
                                            a.tolerance);
  if (!check.IsOk()) return engine::Error{"check: " + check.Message()};
  if (!check->passed)
    return engine::Error{"check: layer output differs from the CPU reference: max row error " +
                         std::to_string(check->max_row_error) + " (tolerance " +
                         std::to_string(a.tolerance) + "), " + std::to_string(check->nan_count) +
                         " NaN"};
  return nlohmann::json{{"batch", 1}, {"seq_len", check_seq}, {"max_row_error", check->max_row_error},
                        {"worst_row", check->worst_row}, {"nan", check->nan_count},
                        {"tolerance", check->tolerance}, {"passed", check->passed}};
}

}  // namespace stof::app::run_detail
