// LayerRunner: one transformer layer (an OpGraph) under a fusion scheme, bound to a Backend:
// deterministic random weights (fp16-representable values, so the CPU and the GPU see the same
// numbers), activation buffers, and per segment the list of backend calls (engine/layer_ops.h)
// its template turns into. Segments with a template run as one fused call (plus head layout
// glue for attention); the rest run op by op (the lowering is in segment_lowering.h). Used by
// ModelRunner (model_runner.h), hence `stof run`, by the tuner's MeasuredCostSource
// (engine/tune/measured_cost_source.h), which times segments through Backend::Measure, and by
// the profiler (profiler/layer_profile.h).
// Invariants: every call is bound to buffers at Create (a run does no allocation, so runs can
// be captured into CUDA graphs); buffers hold fp16 when the backend supports it, else fp32;
// the layer reads its input from Input() and writes its output to Output(), which may be
// buffers owned by someone else (ModelRunner's ping-pong pair).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/run/layer_steps.h"
#include "engine/run/segment_choice.h"

namespace stof::engine {

// Activation buffers shared by the layers of one model (they run one after the other on one
// stream, so layer i + 1 may reuse layer i's intermediates): keyed by role ("op 7", "heads 2
// q"), allocated on first request, freed with the pool. Weights are never pooled.
class ActivationPool {
 public:
  explicit ActivationPool(Backend& backend) : m_backend(backend) {}
  ~ActivationPool();
  ActivationPool(const ActivationPool&) = delete;
  ActivationPool& operator=(const ActivationPool&) = delete;
  Expected<void*> Get(const std::string& key, int64_t bytes);
  int64_t Bytes() const { return m_bytes; }

 private:
  Backend& m_backend;
  std::map<std::string, std::pair<void*, int64_t>> m_buffers;
  int64_t m_bytes = 0;
};

// Buffers a runner does not own: the layer's input and output (ModelRunner chains layers).
struct LayerIo {
  void* input = nullptr;   // [batch, seq, hidden]
  void* output = nullptr;  // [batch, seq, hidden]
  void* encoder = nullptr; // T5 decoder cross-attention: [batch, seq, hidden]; else unused
  ActivationPool* pool = nullptr;  // intermediates from here when set, else owned
};

class LayerRunner {
 public:
  // Builds the steps of `scheme` (one SegmentChoice per segment, or empty = defaults) for
  // `graph` with `mask` (seq_len x seq_len; a causal Mask op ANDs it with causal), allocates
  // weights from `seed` and the intermediates on `backend`. Fails with the field at fault.
  static Expected<std::unique_ptr<LayerRunner>> Create(Backend& backend, const OpGraph& graph,
                                                       const Mask& mask,
                                                       const FusionScheme& scheme,
                                                       const std::vector<SegmentChoice>& choices,
                                                       const LayerIo& io, uint64_t seed);
  ~LayerRunner();
  LayerRunner(const LayerRunner&) = delete;
  LayerRunner& operator=(const LayerRunner&) = delete;

  // Rebuilds the segments' calls for another scheme and choices, keeping the weights and
  // (through the pool) the activation buffers: what the tuner does between candidates. Needs
  // LayerIo::pool. On error the runner holds no runnable segments until the next Rebind.
  Status Rebind(const FusionScheme& scheme, const std::vector<SegmentChoice>& choices);

  // Enqueues every step of segment `index` (or of all segments) on `stream`.
  Status RunSegment(size_t index, void* stream);
  Status Run(void* stream);

  const std::vector<SegmentRun>& Segments() const { return m_segments; }
  // The host values of weight `name` (as uploaded, before packing); empty if there is none.
  std::vector<float> HostWeight(const std::string& name) const;
  const OpGraph& Graph() const { return m_graph; }
  DType StorageType() const { return m_storage; }
  int64_t DeviceBytes() const { return m_bytes; }

 private:
  explicit LayerRunner(Backend& backend);
  Status Build(const Mask& mask, const FusionScheme& scheme,
               const std::vector<SegmentChoice>& choices, const LayerIo& io, uint64_t seed);
  Status BuildSegments(const FusionScheme& scheme, const std::vector<SegmentChoice>& choices);
  Status MaterialiseOutputs();
  Status Dispatch(LayerStep& step, void* stream);
  Expected<void*> NewBuffer(int64_t elements);
  Expected<void*> NewActivation(const std::string& key, int64_t elements);

  Backend& m_backend;
  OpGraph m_graph;
  DType m_storage = DType::kF16;
  uint64_t m_seed = 0;
  std::vector<void*> m_owned;
  int64_t m_bytes = 0;
  std::vector<Mask> m_masks;  // kept alive: ScoresCall / MhaCall point at them
  std::vector<SegmentRun> m_segments;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// Host values in the storage type of `backend` (fp16 bits or fp32) for upload, and back.
std::vector<uint8_t> PackForBackend(const std::vector<float>& values, DType storage);
std::vector<float> UnpackFromBackend(const std::vector<uint8_t>& bytes, DType storage);
// n values uniform in [lo, hi) from `seed` (splitmix64), rounded to fp16: weights and inputs
// that every backend sees identically.
std::vector<float> UniformHalfValues(int64_t n, uint64_t seed, double lo, double hi);
// f16 when the backend supports it, else f32.
DType StorageTypeFor(const Backend& backend);

}  // namespace stof::engine
