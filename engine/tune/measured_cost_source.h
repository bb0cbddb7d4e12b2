// MeasuredCostSource: candidate costs timed on a Backend. It keeps `layers` LayerRunners of
// the graph (each with its own weights, uploaded once; activations in one pool, as in a
// model) and, per candidate, rebinds them to a scheme that isolates the segment
// (SchemeIsolating) and times that segment of every layer back to back with Backend::Measure
// (CUDA graphs on the GPU); the cost is that time over `layers`. Why several layers: a
// segment replayed alone keeps its weights in L2 (an H100's L2 holds a whole bert-large
// layer), which the model does not, and plans tuned that way on one layer ran the whole model
// slower than the untuned default (measured: docs/tuner.md, "What is searched"). The
// analytical model (an injected Predictor) is kept beside it, so the studio can plot predicted
// vs measured.
// Choices come from the backend's parameter spaces (Backend::*ParamChoices,
// MhaConfigChoices ranked by Eq. 2) plus the SDF attention variant.
// Used by Tune (tuner.h) on a GPU and by the tests with a scripted fake backend.
#pragma once

#include <functional>
#include <memory>

#include "engine/backend.h"
#include "engine/run/layer_runner.h"
#include "engine/tune/cost_source.h"

namespace stof::engine {

class MeasuredCostSource : public CostSource {
 public:
  // `graph` is run in the backend's storage type; `mask` is seq_len x seq_len.
  static Expected<std::unique_ptr<MeasuredCostSource>> Create(Backend& backend,
                                                              const OpGraph& graph,
                                                              const Mask& mask,
                                                              const MeasureOptions& measure,
                                                              Predictor predictor,
                                                              uint64_t weight_seed = 1,
                                                              int layers = 1);
  int Layers() const { return static_cast<int>(m_layers.size()); }
  ~MeasuredCostSource() override;

  bool Measures() const override { return true; }
  std::string Describe() const override { return m_backend.Name(); }
  std::string DeviceName() const override { return m_backend.Name(); }
  const OpGraph& Graph() const override { return m_graph; }
  const Mask& UserMask() const override { return m_mask; }
  DeviceSpec Device() const override { return m_backend.Device(); }
  Expected<std::vector<SegmentChoice>> Choices(const Segment& s) override;
  Expected<SegmentCost> Cost(const Segment& s, const SegmentChoice& c) override;

 private:
  MeasuredCostSource(Backend& b, Predictor p) : CostSource(std::move(p)), m_backend(b) {}
  Expected<int> Bind(const Segment& s, const SegmentChoice& c);

  Backend& m_backend;
  OpGraph m_graph;
  Mask m_mask;
  MeasureOptions m_measure;
  void* m_io[3] = {nullptr, nullptr, nullptr};
  std::unique_ptr<ActivationPool> m_pool;
  std::vector<std::unique_ptr<LayerRunner>> m_layers;
};

}  // namespace stof::engine
