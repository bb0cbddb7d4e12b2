// LayerRunner (see layer_runner.h): turns (graph, scheme, choices) into bound backend calls.
// Here: weights, masks and buffers, which segments run fused, and running the steps; the
// calls of each segment are built by segment_lowering.h. A fused segment whose inner op's
// output is read after the segment cannot keep that output on chip: Add -> Norm writes it as
// NormCall::sum_out; any other case runs op by op, and SegmentRun::how says why.
#include "engine/run/layer_runner.h"

#include <cmath>
#include <cstring>

#include "engine/core/half.h"
#include "engine/core/split_mix64.h"
#include "engine/fusion/default_scheme.h"
#include "engine/run/segment_binder.h"
#include "engine/run/segment_lowering.h"

namespace stof::engine {

namespace {

// Values of a weight by its role (the graph's names: w_*, b_*, g_*, beta_*), rounded to fp16
// so that every backend computes with the same numbers. Linear weights ~ U(-1, 1)/sqrt(fan_in)
// keep activations O(1) through the layer, as trained layers do.
std::vector<float> WeightValues(const TensorRef& t, uint64_t seed) {
  double lo = -1, hi = 1;
  if (t.name.rfind("w_", 0) == 0 && !t.dims.empty()) {
    const double s = 1.0 / std::sqrt(static_cast<double>(t.dims[0]));
    lo = -s, hi = s;
  } else if (t.name.rfind("g_", 0) == 0) {
    lo = 0.8, hi = 1.2;
  } else {  // biases, beta
    lo = -0.1, hi = 0.1;
  }
  return UniformHalfValues(t.Elements(), seed, lo, hi);
}

uint64_t HashName(const std::string& s) {  // FNV-1a: per-weight seeds from names
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

// Whether a segment runs its template's fused call, and SegmentRun::how when it does not. A
// fused segment must keep every inner output on chip: one read after the segment (other than
// the Add that bias_add_norm writes as sum_out) sends it op by op.
SegmentRun DecideSegment(const OpGraph& g, const Segment& seg, const SegmentChoice& choice) {
  SegmentRun run;
  run.segment = seg;
  run.match = MatchTemplate(g, seg);
  run.fused = run.match.kind != TemplateKind::kNone && !choice.force_op_by_op;
  if (run.match.kind == TemplateKind::kNone) {
    run.how = "op by op: " + run.match.reason;
    if (seg.Size() == 1 && !choice.params.empty())
      run.how += " (" + ParamMapText(choice.params) + ")";
  }
  if (choice.force_op_by_op && run.match.kind != TemplateKind::kNone)
    run.how = std::string("op by op (requested; template ") + run.match.Name() + ")";
  if (const int op = run.fused ? EscapingInnerOutput(g, seg, run.match.kind) : 0) {
    run.fused = false;
    run.how = "op by op: op " + std::to_string(op) + "'s output is read after the segment";
  }
  return run;
}

SegmentChoice ChoiceFor(const std::vector<SegmentChoice>& choices, size_t i) {
  return choices.empty() ? SegmentChoice{} : choices[i];  // empty: every segment's defaults
}

}  // namespace

std::vector<float> UniformHalfValues(int64_t n, uint64_t seed, double lo, double hi) {
  std::vector<float> v(static_cast<size_t>(n));
  SplitMix64 rng(seed);  // the same values on every platform
  for (auto& x : v) x = RoundToHalf(static_cast<float>(lo + (hi - lo) * rng.Unit()));
  return v;
}

DType StorageTypeFor(const Backend& backend) {
  return backend.Supports(DType::kF16) ? DType::kF16 : DType::kF32;
}

std::vector<uint8_t> PackForBackend(const std::vector<float>& values, DType storage) {
  std::vector<uint8_t> out;
  if (storage == DType::kF16) {
    out.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t h = FloatToHalf(values[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  } else {
    out.resize(values.size() * 4);
    std::memcpy(out.data(), values.data(), out.size());
  }
  return out;
}

std::vector<float> UnpackFromBackend(const std::vector<uint8_t>& bytes, DType storage) {
  std::vector<float> out;
  if (storage == DType::kF16) {
    out.resize(bytes.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = HalfToFloat(h);
    }
  } else {
    out.resize(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
  }
  return out;
}

struct LayerRunner::Impl {
  LayerIo io;
  LayerBuffers buffers;  // what the segments' calls point at (segment_binder.h)
};

LayerRunner::LayerRunner(Backend& backend) : m_backend(backend) {}

LayerRunner::~LayerRunner() {
  for (void* p : m_owned) m_backend.Free(p);
}

Expected<void*> LayerRunner::NewBuffer(int64_t elements) {
  const int64_t bytes = elements * DTypeBytes(m_storage);
  auto p = m_backend.Allocate(static_cast<size_t>(bytes));
  if (!p.IsOk()) return p;
  m_owned.push_back(*p);
  m_bytes += bytes;
  return *p;
}

ActivationPool::~ActivationPool() {
  for (auto& [key, buf] : m_buffers) m_backend.Free(buf.first);
}

Expected<void*> ActivationPool::Get(const std::string& key, int64_t bytes) {
  auto it = m_buffers.find(key);
  if (it != m_buffers.end()) {
    if (it->second.second != bytes)
      return MakeError("activation pool: " + key + ": size " + std::to_string(bytes) +
                       " differs from the shared buffer's " + std::to_string(it->second.second));
    return it->second.first;
  }
  auto p = m_backend.Allocate(static_cast<size_t>(bytes));
  if (!p.IsOk()) return p;
  m_buffers[key] = {*p, bytes};
  m_bytes += bytes;
  return *p;
}

Expected<void*> LayerRunner::NewActivation(const std::string& key, int64_t elements) {
  if (m_impl->io.pool == nullptr) return NewBuffer(elements);
  return m_impl->io.pool->Get(key, elements * DTypeBytes(m_storage));
}

Expected<std::unique_ptr<LayerRunner>> LayerRunner::Create(
    Backend& backend, const OpGraph& graph, const Mask& mask, const FusionScheme& scheme,
    const std::vector<SegmentChoice>& choices, const LayerIo& io, uint64_t seed) {
  if (graph.Size() == 0) return MakeError("layer: graph: has no ops");
  if (static_cast<int>(scheme.Code().size()) != graph.Size())
    return MakeError("layer: scheme: has " + std::to_string(scheme.Code().size()) +
                     " digits for " + std::to_string(graph.Size()) + " ops");
  if (!choices.empty() && choices.size() != scheme.Segments().size())
    return MakeError("layer: choices: expected one per segment (" +
                     std::to_string(scheme.Segments().size()) + "), got " +
                     std::to_string(choices.size()));
  if (mask.Rows() != graph.seq_len || mask.Cols() != graph.seq_len)
    return MakeError("layer: mask: size " + std::to_string(mask.Rows()) + " x " +
                     std::to_string(mask.Cols()) + " does not match the graph's seq_len " +
                     std::to_string(graph.seq_len));
  if (io.input == nullptr || io.output == nullptr)
    return MakeError("layer: io: input and output buffers must be set");
  std::unique_ptr<LayerRunner> r(new LayerRunner(backend));
  r->m_graph = graph;
  r->m_impl = std::make_unique<Impl>();
  STOF_RETURN_IF_ERROR(r->Build(mask, scheme, choices, io, seed));
  return r;
}

Status LayerRunner::Build(const Mask& mask, const FusionScheme& scheme,
                          const std::vector<SegmentChoice>& choices, const LayerIo& io,
                          uint64_t seed) {
  LayerBuffers& buffers = m_impl->buffers;
  const OpGraph& g = m_graph;
  m_impl->io = io;
  buffers.input = io.input;
  buffers.encoder = io.encoder;
  m_seed = seed;
  m_storage = StorageTypeFor(m_backend);
  const int64_t L = g.seq_len;

  // Masks: the user's, and the user's AND causal when a Mask op asks for it.
  m_masks.reserve(2);
  m_masks.push_back(mask);
  buffers.plain = &m_masks[0];
  for (const Op& op : g.ops)
    if (op.kind == OpKind::kMask && op.causal && buffers.causal == nullptr) {
      Mask c = mask;
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = i + 1; j < L; ++j) c.Set(i, j, false);
      m_masks.push_back(std::move(c));
      buffers.causal = &m_masks[1];
    }

  // Weights (uploaded once) and the encoder input a T5 decoder needs.
  for (const Op& op : g.ops)
    for (const TensorRef& t : op.inputs) {
      if (t.source == TensorSource::kEncoderOutput && io.encoder == nullptr)
        return MakeError("layer: io.encoder: the " + g.model +
                         " decoder layer reads the encoder output; none was given");
      if (t.source != TensorSource::kWeight || buffers.weights.count(t.name)) continue;
      auto buf = NewBuffer(t.Elements());
      if (!buf.IsOk()) return buf.ToStatus().WithContext("layer: weight " + t.name + ": ");
      const auto host = PackForBackend(WeightValues(t, seed ^ HashName(t.name)), m_storage);
      STOF_RETURN_IF_ERROR(m_backend.CopyToDevice(*buf, host.data(), host.size()));
      buffers.weights[t.name] = *buf;
    }

  return BuildSegments(scheme, choices);
}

Status LayerRunner::Rebind(const FusionScheme& scheme, const std::vector<SegmentChoice>& choices) {
  if (m_impl->io.pool == nullptr)
    return MakeError("layer: rebind: needs an activation pool (LayerIo::pool)");
  if (static_cast<int>(scheme.Code().size()) != m_graph.Size())
    return MakeError("layer: scheme: has " + std::to_string(scheme.Code().size()) +
                     " digits for " + std::to_string(m_graph.Size()) + " ops");
  if (!choices.empty() && choices.size() != scheme.Segments().size())
    return MakeError("layer: choices: expected one per segment (" +
                     std::to_string(scheme.Segments().size()) + "), got " +
                     std::to_string(choices.size()));
  m_impl->buffers.op_out.clear();
  m_impl->buffers.heads.clear();
  return BuildSegments(scheme, choices);
}

// Two passes: first every segment's decision and the outputs that reach memory, then each
// segment's calls, which point at outputs of earlier segments and (bias_add_norm's sum_out)
// at inner outputs that later segments read.
Status LayerRunner::BuildSegments(const FusionScheme& scheme,
                                  const std::vector<SegmentChoice>& choices) {
  const auto& segs = scheme.Segments();
  m_segments.clear();
  for (size_t i = 0; i < segs.size(); ++i)
    m_segments.push_back(DecideSegment(m_graph, segs[i], ChoiceFor(choices, i)));
  STOF_RETURN_IF_ERROR(MaterialiseOutputs());

  SegmentBinder binder(m_graph, m_storage, m_impl->buffers,
                       [this](const std::string& key, int64_t elements) {
                         return NewActivation(key, elements);
                       });
  for (size_t i = 0; i < m_segments.size(); ++i) {
    SegmentRun& run = m_segments[i];
    const SegmentChoice choice = ChoiceFor(choices, i);
    if (run.fused) {
      run.how = std::string(run.match.Name());
      if (!choice.params.empty()) run.how += " (" + ParamMapText(choice.params) + ")";
      STOF_RETURN_IF_ERROR(LowerFusedSegment(binder, run.segment, run.match, choice, run.steps));
    } else {
      STOF_RETURN_IF_ERROR(LowerOpByOp(binder, run.segment, choice, run.steps));
    }
  }
  // Every bound input must exist (a graph reading an output nobody materialised is a bug here).
  for (const SegmentRun& run : m_segments)
    for (const LayerStep& st : run.steps)
      if (std::holds_alternative<GemmCall>(st.call) && std::get<GemmCall>(st.call).a == nullptr)
        return MakeError("layer: " + st.label + ": input is not materialised");
  return Status::Ok();
}

// The op outputs that reach memory: all of a segment run op by op; of a fused segment its
// last op's and the inner outputs read after it. The layer's last op writes LayerIo::output.
Status LayerRunner::MaterialiseOutputs() {
  LayerBuffers& buffers = m_impl->buffers;
  for (const SegmentRun& run : m_segments)
    for (int op = run.segment.first; op <= run.segment.last; ++op) {
      const bool materialised =
          !run.fused || op == run.segment.last || OutputEscapes(m_graph, run.segment, op);
      if (!materialised) continue;
      if (op == m_graph.Size()) {
        buffers.op_out[op] = m_impl->io.output;
        continue;
      }
      auto buf = NewActivation("op " + std::to_string(op), m_graph.At(op).output.Elements());
      if (!buf.IsOk()) return buf.ToStatus().WithContext("layer: op " + std::to_string(op) + ": ");
      buffers.op_out[op] = *buf;
    }
  return Status::Ok();
}

std::vector<float> LayerRunner::HostWeight(const std::string& name) const {
  for (const Op& op : m_graph.ops)
    for (const TensorRef& t : op.inputs)
      if (t.source == TensorSource::kWeight && t.name == name)
        return WeightValues(t, m_seed ^ HashName(t.name));
  return {};
}

Status LayerRunner::Dispatch(LayerStep& step, void* stream) {
  return std::visit(
      [&](auto& c) -> Status {
        c.stream = stream;
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, GemmCall>) return m_backend.RunGemm(c);
        else if constexpr (std::is_same_v<T, BatchedGemmCall>) return m_backend.RunBatchedGemm(c);
        else if constexpr (std::is_same_v<T, EpilogueCall>) return m_backend.RunEpilogue(c);
        else if constexpr (std::is_same_v<T, NormCall>) return m_backend.RunNorm(c);
        else if constexpr (std::is_same_v<T, GemmNormCall>) return m_backend.RunGemmNorm(c);
        else if constexpr (std::is_same_v<T, GemmChainCall>) return m_backend.RunGemmChain(c);
        else if constexpr (std::is_same_v<T, ScoresCall>) return m_backend.RunScores(c);
        else if constexpr (std::is_same_v<T, HeadsCall>) return m_backend.RunHeads(c);
        else return m_backend.RunMha(c);
      },
      step.call).WithContext(step.label + ": ");
}

Status LayerRunner::RunSegment(size_t index, void* stream) {
  if (index >= m_segments.size())
    return MakeError("layer: segment index " + std::to_string(index) + " out of range");
  for (LayerStep& st : m_segments[index].steps) STOF_RETURN_IF_ERROR(Dispatch(st, stream));
  return Status::Ok();
}

Status LayerRunner::Run(void* stream) {
  for (size_t i = 0; i < m_segments.size(); ++i) STOF_RETURN_IF_ERROR(RunSegment(i, stream));
  return Status::Ok();
}

}  // namespace stof::engine
