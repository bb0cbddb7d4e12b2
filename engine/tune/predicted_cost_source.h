// PredictedCostSource: candidate costs from the analytical models only (no device), so the
// tuner runs on any laptop; every cost it returns has measured = false and the CLI and the
// studio label it a prediction. Choices: attention gets what the engine runs first (ChooseRun,
// engine/analysis/mha_run.h: the kernels' rules or the engine's model of them), so the
// untuned default is the configuration every view shows, then Eq. 2's ranking of every
// feasible block-wise setting, row-wise and SDF (a setting picked from these is "tuned" in
// the plan's mha.runs); GEMM chains get the top of MCFuser's ranked candidate space that our
// chain kernel runs; other templates only their default (the models do not tell their
// parameters apart).
// Used by Tune (tuner.h) when there is no GPU or `--device predict` is asked for.
#pragma once

#include <optional>

#include "engine/analysis/mha_run.h"
#include "engine/device/device_spec.h"
#include "engine/tune/cost_source.h"

namespace stof::engine {

class PredictedCostSource : public CostSource {
 public:
  // `run_chooser`: the kernels' rules when the caller has them (null: the engine's model).
  PredictedCostSource(const OpGraph& graph, const Mask& mask, const DeviceSpec& device,
                      Predictor predictor, MhaRunChooser run_chooser = nullptr)
      : CostSource(std::move(predictor)), m_graph(graph), m_mask(mask), m_device(device),
        m_run_chooser(std::move(run_chooser)) {}

  bool Measures() const override { return false; }
  std::string Describe() const override { return "predicted: " + m_device.name; }
  std::string DeviceName() const override { return "model:" + m_device.name; }
  const OpGraph& Graph() const override { return m_graph; }
  const Mask& UserMask() const override { return m_mask; }
  DeviceSpec Device() const override { return m_device; }
  Expected<std::vector<SegmentChoice>> Choices(const Segment& s) override;
  Expected<SegmentCost> Cost(const Segment& s, const SegmentChoice& c) override;

 private:
  OpGraph m_graph;
  Mask m_mask;
  DeviceSpec m_device;
  MhaRunChooser m_run_chooser;
  std::optional<MhaConfig> m_run;  // ChooseRun's configuration, once asked
};

// At most this many GEMM-chain tilings are offered per chain segment (MCFuser's top n).
inline constexpr int64_t kPredictedChainChoices = 8;

}  // namespace stof::engine
