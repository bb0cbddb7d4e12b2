// ModelRunner, MeasureModel and CheckLayerAgainstCpu (see model_runner.h).
// The layer input is U(-1, 1) rounded to fp16 from the seed; T5 decoders also get a random
// encoder output. The CPU check reuses the whole runner on CpuBackend, so a GPU layer is
// compared with exactly the computation its scheme describes, in fp32 with double sums.
#include "engine/run/model_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/cpu/cpu_backend.h"

namespace stof::engine {

namespace {

std::vector<float> RandomActivations(int64_t n, uint64_t seed) {
  return UniformHalfValues(n, seed, -1.0, 1.0);
}

std::string OpsText(const Segment& s) {
  return s.first == s.last ? std::to_string(s.first)
                           : std::to_string(s.first) + "-" + std::to_string(s.last);
}

}  // namespace

Expected<std::unique_ptr<ModelRunner>> ModelRunner::Create(Backend& backend, const OpGraph& graph,
                                                           const Mask& mask,
                                                           const FusionScheme& scheme,
                                                           const ModelRunOptions& options) {
  if (options.layers < 1 || options.layers > ModelRunOptions::kMaxLayers)
    return MakeError("run: layers: expected 1.." + std::to_string(ModelRunOptions::kMaxLayers) +
                     ", got " + std::to_string(options.layers));
  std::unique_ptr<ModelRunner> m(new ModelRunner(backend));
  const DType storage = StorageTypeFor(backend);
  m->m_io_elements = graph.batch * graph.seq_len * graph.hidden;
  m->m_seed = options.seed;
  const size_t bytes = static_cast<size_t>(m->m_io_elements * DTypeBytes(storage));
  for (void*& p : m->m_io) {
    auto buf = backend.Allocate(bytes);
    if (!buf.IsOk()) return buf.ToStatus().WithContext("run: activations: ");
    p = *buf;
  }
  const auto x = PackForBackend(RandomActivations(m->m_io_elements, options.seed), storage);
  STOF_RETURN_IF_ERROR(backend.CopyToDevice(m->m_io[0], x.data(), x.size()));
  if (graph.part == LayerPart::kDecoder && graph.family == ModelFamily::kT5) {
    auto buf = backend.Allocate(bytes);
    if (!buf.IsOk()) return buf.ToStatus().WithContext("run: encoder output: ");
    m->m_encoder = *buf;
    const auto e = PackForBackend(RandomActivations(m->m_io_elements, options.seed + 7), storage);
    STOF_RETURN_IF_ERROR(backend.CopyToDevice(m->m_encoder, e.data(), e.size()));
  }
  m->m_pool = std::make_unique<ActivationPool>(backend);
  for (int i = 0; i < options.layers; ++i) {
    LayerIo io{m->m_io[i % 2], m->m_io[(i + 1) % 2], m->m_encoder, m->m_pool.get()};
    auto layer = LayerRunner::Create(backend, graph, mask, scheme, options.choices, io,
                                     options.seed * 1000003ull + static_cast<uint64_t>(i));
    if (!layer.IsOk())
      return layer.ToStatus().WithContext("layer " + std::to_string(i) + ": ");
    m->m_layers.push_back(std::move(*layer));
  }
  return m;
}

ModelRunner::~ModelRunner() {
  m_layers.clear();  // before the buffers they point at
  m_pool.reset();
  for (void* p : m_io) m_backend.Free(p);
  m_backend.Free(m_encoder);
}

std::vector<float> ModelRunner::HostInput() const {
  return RandomActivations(m_io_elements, m_seed);
}
std::vector<float> ModelRunner::HostEncoder() const {
  return m_encoder ? RandomActivations(m_io_elements, m_seed + 7) : std::vector<float>{};
}

int64_t ModelRunner::DeviceBytes() const {
  int64_t b = m_pool ? m_pool->Bytes() : 0;
  for (const auto& l : m_layers) b += l->DeviceBytes();
  return b;
}

Status ModelRunner::Run(void* stream) {
  for (auto& l : m_layers) STOF_RETURN_IF_ERROR(l->Run(stream));
  return Status::Ok();
}

Expected<std::vector<float>> ModelRunner::ReadOutput() {
  STOF_RETURN_IF_ERROR(m_backend.Synchronize());
  const DType storage = StorageTypeFor(m_backend);
  std::vector<uint8_t> bytes(static_cast<size_t>(m_io_elements * DTypeBytes(storage)));
  STOF_RETURN_IF_ERROR(
      m_backend.CopyToHost(bytes.data(), m_io[m_layers.size() % 2], bytes.size()));
  return UnpackFromBackend(bytes, storage);
}

namespace {

// MeasureModel's progress and its estimate of the time left (model_runner.h: MeasureProgress).
class MeasureTracker {
 public:
  MeasureTracker(const MeasureProgressFn& fn, const MeasureOptions& o, size_t segments, int layers)
      : m_fn(fn), m_options(o), m_call_s(segments + 2, -1.0), m_layers(layers) {}

  // Stage i: the segments 0..n-1, then layer 0 (n), then the whole model (n + 1).
  void Begin(size_t stage, const std::string& name) {
    m_stage = stage;
    m_p = MeasureProgress{};
    m_p.stage = name;
    m_p.layers = m_layers;
    m_stage_start = Clock::now();
    Report(true);
  }
  // After each run of the stage's work (each layer for the whole model).
  void Ran(bool whole_run) {
    if (!m_fn) return;
    const bool model = m_stage + 1 == m_call_s.size();
    if (model) m_p.layers_done = whole_run ? m_layers : m_p.layers_done % m_layers + 1;
    if (whole_run) {
      ++m_p.runs;
      if (m_call_s[m_stage] < 0) m_call_s[m_stage] = Seconds(m_stage_start);
    }
    Report(false);
  }
  void End() {
    m_done_s += Seconds(m_stage_start);
    if (!m_fn) return;
    m_p.fraction = 1;
    m_p.remaining_s = 0;
    if (m_stage + 1 == m_call_s.size()) m_fn(m_p, false);
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double Seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  }
  // Runs Backend::Measure makes when one takes t seconds.
  double Calls(double t) const {
    const double timed = t > 0 ? std::floor(m_options.max_seconds / t) + 1 : m_options.repeats;
    return m_options.warmup + std::clamp(timed, 1.0, static_cast<double>(m_options.repeats));
  }
  // Seconds per run of stage i: measured, else guessed from the stages before it.
  double CallSeconds(size_t i) const {
    if (m_call_s[i] >= 0) return m_call_s[i];
    const size_t segments = m_call_s.size() - 2;
    double sum = 0;
    size_t known = 0;
    for (size_t k = 0; k < segments; ++k)
      if (m_call_s[k] >= 0) sum += m_call_s[k], ++known;
    if (known == 0) return -1;
    if (i < segments) return sum / static_cast<double>(known);
    const double layer = m_call_s[segments] >= 0 ? m_call_s[segments]
                                                  : sum * static_cast<double>(segments) / known;
    return i == segments ? layer : layer * m_layers;
  }
  void Report(bool new_stage) {
    if (!m_fn) return;
    double left = 0;
    for (size_t i = m_stage; i < m_call_s.size(); ++i) {
      const double t = CallSeconds(i);
      if (t < 0) {
        left = -1;
        break;
      }
      left += Calls(t) * t;
    }
    const double in_stage = Seconds(m_stage_start);
    if (left >= 0) {
      left = std::max(0.0, left - in_stage);
      m_p.remaining_s = left;
      const double done = m_done_s + in_stage;
      m_p.fraction = done + left > 0 ? done / (done + left) : 0;
    }
    m_fn(m_p, new_stage);
  }

  const MeasureProgressFn& m_fn;
  MeasureOptions m_options;
  std::vector<double> m_call_s;  // per stage: seconds of its first run, -1 until then
  int m_layers;
  size_t m_stage = 0;
  MeasureProgress m_p;
  Clock::time_point m_stage_start;
  double m_done_s = 0;           // seconds of the finished stages
};

}  // namespace

Expected<RunReport> MeasureModel(Backend& backend, ModelRunner& model,
                                 const MeasureOptions& options,
                                 const MeasureProgressFn& progress) {
  RunReport r;
  r.backend = backend.Name();
  r.layers = model.Layers();
  r.device_bytes = model.DeviceBytes();
  LayerRunner& layer0 = model.Layer(0);
  const size_t n = layer0.Segments().size();
  MeasureTracker track(progress, options, n, model.Layers());
  for (size_t i = 0; i < n; ++i) {
    const SegmentRun& seg = layer0.Segments()[i];
    track.Begin(i, "segment " + std::to_string(i + 1) + "/" + std::to_string(n) + " " +
                       SegmentLabel(seg.segment));
    auto m = backend.Measure(
        [&](void* s) -> Status {
          STOF_RETURN_IF_ERROR(layer0.RunSegment(i, s));
          track.Ran(true);
          return Status::Ok();
        },
        options);
    track.End();
    if (!m.IsOk())
      return m.ToStatus().WithContext("segment " + SegmentLabel(seg.segment) + ": ");
    r.segments.push_back({OpsText(seg.segment), seg.fused ? seg.match.Name() : "", seg.how,
                          m->median_us});
    r.segments_sum_us += m->median_us;
  }
  track.Begin(n, "layer 0");
  auto one = backend.Measure(
      [&](void* s) -> Status {
        STOF_RETURN_IF_ERROR(layer0.Run(s));
        track.Ran(true);
        return Status::Ok();
      },
      options);
  track.End();
  if (!one.IsOk()) return one.ToStatus().WithContext("layer: ");
  r.layer_us = one->median_us;
  // Layer by layer, as ModelRunner::Run, so a run of many slow layers reports each one.
  track.Begin(n + 1, "all " + std::to_string(model.Layers()) + " layers");
  auto all = backend.Measure(
      [&](void* s) -> Status {
        for (int i = 0; i < model.Layers(); ++i) {
          STOF_RETURN_IF_ERROR(model.Layer(i).Run(s));
          if (i + 1 < model.Layers()) track.Ran(false);
        }
        track.Ran(true);
        return Status::Ok();
      },
      options);
  track.End();
  if (!all.IsOk()) return all.ToStatus().WithContext("model: ");
  r.total_us = all->median_us;
  r.method = all->method;
  return r;
}

Expected<LayerCheck> CheckLayerAgainstCpu(Backend& backend, const OpGraph& graph,
                                          const Mask& mask, const FusionScheme& scheme,
                                          const std::vector<SegmentChoice>& choices,
                                          uint64_t seed, double tolerance) {
  ModelRunOptions o;
  o.layers = 1;
  o.seed = seed;
  o.choices = choices;
  STOF_ASSIGN_OR_RETURN(auto dev, ModelRunner::Create(backend, graph, mask, scheme, o));
  STOF_RETURN_IF_ERROR(dev->Run(nullptr));
  STOF_ASSIGN_OR_RETURN(auto got, dev->ReadOutput());
  CpuBackend cpu;
  auto ref_model = ModelRunner::Create(cpu, graph, mask, scheme, o);
  if (!ref_model.IsOk()) return ref_model.ToStatus().WithContext("cpu reference: ");
  STOF_RETURN_IF_ERROR((*ref_model)->Run(nullptr));
  STOF_ASSIGN_OR_RETURN(auto want, (*ref_model)->ReadOutput());
  LayerCheck c;
  c.tolerance = tolerance;
  const int64_t cols = graph.hidden, rows = static_cast<int64_t>(want.size()) / cols;
  for (int64_t r = 0; r < rows; ++r) {
    double scale = 1, err = 0;
    for (int64_t j = 0; j < cols; ++j)
      scale = std::max(scale, static_cast<double>(std::fabs(want[r * cols + j])));
    for (int64_t j = 0; j < cols; ++j) {
      const double g = got[r * cols + j];
      if (std::isnan(g)) {
        ++c.nan_count;
        continue;
      }
      err = std::max(err, std::fabs(g - want[r * cols + j]));
    }
    if (err / scale > c.max_row_error) {
      c.max_row_error = err / scale;
      c.worst_row = r;
    }
  }
  c.passed = c.nan_count == 0 && c.max_row_error <= tolerance;
  return c;
}

}  // namespace stof::engine
