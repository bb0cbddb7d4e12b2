// ModelRunner: N layers of one OpGraph chained on a Backend (each layer its own weights from
// seed + layer index, activations shared), the measurement of a model run (per segment of
// layer 0, one layer, all layers) and the check of one layer against the CPU reference.
// Used by `stof run` (app/cli/cmd_run.cpp), the tuner's session (engine/tune/tune_session.cpp),
// the studio's layer lab and tests.
// Invariants: layer i reads io[i % 2] and writes io[(i + 1) % 2]; the model's input is set
// from the seed at Create; Run does no allocation (CUDA-graph capturable).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/run/layer_runner.h"

namespace stof::engine {

struct ModelRunOptions {
  static constexpr int kMaxLayers = 1024;
  int layers = 1;                      // 1..kMaxLayers
  uint64_t seed = 1;
  std::vector<SegmentChoice> choices;  // one per segment, or empty = defaults
};

class ModelRunner {
 public:
  static Expected<std::unique_ptr<ModelRunner>> Create(Backend& backend, const OpGraph& graph,
                                                       const Mask& mask,
                                                       const FusionScheme& scheme,
                                                       const ModelRunOptions& options);
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  Status Run(void* stream);  // every layer in order
  // The model's output after Run (host floats, [batch, seq, hidden]); synchronises.
  Expected<std::vector<float>> ReadOutput();
  int Layers() const { return static_cast<int>(m_layers.size()); }
  // The model's input (and a T5 decoder's encoder output) as host floats.
  std::vector<float> HostInput() const;
  std::vector<float> HostEncoder() const;
  LayerRunner& Layer(int i) { return *m_layers[static_cast<size_t>(i)]; }
  int64_t DeviceBytes() const;

 private:
  explicit ModelRunner(Backend& b) : m_backend(b) {}
  Backend& m_backend;
  void* m_io[2] = {nullptr, nullptr};
  void* m_encoder = nullptr;
  int64_t m_io_elements = 0;
  uint64_t m_seed = 0;
  std::unique_ptr<ActivationPool> m_pool;  // intermediates shared by every layer
  std::vector<std::unique_ptr<LayerRunner>> m_layers;
};

struct SegmentTiming {
  std::string ops;       // "7-9" or "1"
  std::string tmpl;      // template name, "" op by op
  std::string how;       // SegmentRun::how
  double us = 0;
};

struct RunReport {
  std::string backend;
  std::string method;    // Measurement::method of the totals
  std::vector<SegmentTiming> segments;  // layer 0, each segment alone
  double segments_sum_us = 0;
  double layer_us = 0;   // layer 0 as a whole
  double total_us = 0;   // every layer
  int layers = 0;
  int64_t device_bytes = 0;
};

// What MeasureModel is doing, for a progress display (`stof run` on the CPU reference spends
// minutes per layer at large shapes). Reported when a measurement starts (new_stage) and
// after each run of its work: each call of a segment or of layer 0, each layer of a whole
// model run. The estimate assumes each measurement makes Backend::Measure's number of runs
// (warm-up, then timed runs until max_seconds) at the time its first run took; a segment not
// run yet counts as the mean of those that were, layer 0 as their sum, the model as its
// layers times layer 0. The last report has fraction 1.
struct MeasureProgress {
  std::string stage;          // "segment 3/7 [#7,#8]", "layer 0", "all 12 layers"
  int64_t runs = 0;           // runs of this stage's work finished, warm-up included
  int layers_done = 0;        // the whole-model stage: layers of the current run finished
  int layers = 0;
  double fraction = -1;       // estimated share of the work done; -1 before any estimate
  double remaining_s = -1;    // estimated seconds left; -1 before any estimate
};
using MeasureProgressFn = std::function<void(const MeasureProgress& p, bool new_stage)>;

// Times each segment of layer 0, layer 0, and the whole model with `options`; `progress`
// (may be empty) is called on this thread.
Expected<RunReport> MeasureModel(Backend& backend, ModelRunner& model,
                                 const MeasureOptions& options,
                                 const MeasureProgressFn& progress = {});

// One layer of `graph` on `backend` against the same layer on the CPU reference (same weights,
// input and scheme). Error metric per output row: max |out - ref| / max(max |ref|, 1).
struct LayerCheck {
  double max_row_error = 0;
  int64_t worst_row = 0;
  int64_t nan_count = 0;
  double tolerance = 0;
  bool passed = false;
};
Expected<LayerCheck> CheckLayerAgainstCpu(Backend& backend, const OpGraph& graph,
                                          const Mask& mask, const FusionScheme& scheme,
                                          const std::vector<SegmentChoice>& choices,
                                          uint64_t seed, double tolerance);

}  // namespace stof::engine
