// LayerRunner (see layer_runner.h): turns (graph, scheme, choices) into bound backend calls.
// Attention glue: our MHA kernels and batched GEMMs take q, k, v as [B, H, L, d], while the
// graph's projections produce [B, L, 3 H d] (or [B, L, H d] / [B, L, 2 H d] for T5's cross
// attention), so an attention block splits heads before and merges them after; those steps
// are labelled and belong to the segment that needs them. A fused segment whose inner op's
// output is read after the segment cannot keep that output on chip: Add -> Norm writes it as
// NormCall::sum_out; any other case runs op by op, and SegmentRun::how says why.
#include "engine/run/layer_runner.h"

#include <cmath>
#include <cstring>
#include <map>

#include "engine/core/half.h"
#include "engine/core/split_mix64.h"
#include "engine/fusion/default_scheme.h"

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
  std::map<int, void*> op_out;              // materialised op outputs
  std::map<std::string, void*> weights;     // by the graph's weight names
  struct Heads { void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr; };
  std::map<int, Heads> heads;               // per attention block, keyed by its scores op
  const Mask* plain = nullptr;
  const Mask* causal = nullptr;
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
  Impl& im = *m_impl;
  const OpGraph& g = m_graph;
  im.io = io;
  m_seed = seed;
  m_storage = StorageTypeFor(m_backend);
  const int64_t L = g.seq_len;

  // Masks: the user's, and the user's AND causal when a Mask op asks for it.
  m_masks.reserve(2);
  m_masks.push_back(mask);
  im.plain = &m_masks[0];
  for (const Op& op : g.ops)
    if (op.kind == OpKind::kMask && op.causal && im.causal == nullptr) {
      Mask c = mask;
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = i + 1; j < L; ++j) c.Set(i, j, false);
      m_masks.push_back(std::move(c));
      im.causal = &m_masks[1];
    }

  // Weights (uploaded once) and the encoder input a T5 decoder needs.
  for (const Op& op : g.ops)
    for (const TensorRef& t : op.inputs) {
      if (t.source == TensorSource::kEncoderOutput && io.encoder == nullptr)
        return MakeError("layer: io.encoder: the " + g.model +
                         " decoder layer reads the encoder output; none was given");
      if (t.source != TensorSource::kWeight || im.weights.count(t.name)) continue;
      auto buf = NewBuffer(t.Elements());
      if (!buf.IsOk()) return buf.ToStatus().WithContext("layer: weight " + t.name + ": ");
      const auto host = PackForBackend(WeightValues(t, seed ^ HashName(t.name)), m_storage);
      STOF_RETURN_IF_ERROR(m_backend.CopyToDevice(*buf, host.data(), host.size()));
      im.weights[t.name] = *buf;
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
  m_impl->op_out.clear();
  m_impl->heads.clear();
  return BuildSegments(scheme, choices);
}

Status LayerRunner::BuildSegments(const FusionScheme& scheme,
                                  const std::vector<SegmentChoice>& choices) {
  Impl& im = *m_impl;
  const OpGraph& g = m_graph;
  const LayerIo& io = im.io;
  const int64_t B = g.batch, L = g.seq_len, H = g.heads, d = g.head_dim;
  const auto escapes = [&](const Segment& s, int op) { return OutputEscapes(g, s, op); };

  // Pass 1: decide per segment (fused or not) and allocate the outputs that reach memory.
  const auto& segs = scheme.Segments();
  m_segments.clear();
  for (size_t i = 0; i < segs.size(); ++i) {
    SegmentRun run;
    run.segment = segs[i];
    run.match = MatchTemplate(g, segs[i]);
    const SegmentChoice choice = choices.empty() ? SegmentChoice{} : choices[i];
    run.fused = run.match.kind != TemplateKind::kNone && !choice.force_op_by_op;
    if (run.match.kind == TemplateKind::kNone) {
      run.how = "op by op: " + run.match.reason;
      if (segs[i].Size() == 1 && !choice.params.empty())
        run.how += " (" + ParamMapText(choice.params) + ")";
    }
    if (choice.force_op_by_op && run.match.kind != TemplateKind::kNone)
      run.how = std::string("op by op (requested; template ") + run.match.Name() + ")";
    if (const int op = run.fused ? EscapingInnerOutput(g, segs[i], run.match.kind) : 0) {
      run.fused = false;
      run.how = "op by op: op " + std::to_string(op) + "'s output is read after the segment";
    }
    m_segments.push_back(std::move(run));
  }
  for (const SegmentRun& run : m_segments)
    for (int op = run.segment.first; op <= run.segment.last; ++op) {
      const bool materialised =
          !run.fused || op == run.segment.last || escapes(run.segment, op);
      if (!materialised) continue;
      if (op == g.Size()) {
        im.op_out[op] = io.output;
        continue;
      }
      auto buf = NewActivation("op " + std::to_string(op), g.At(op).output.Elements());
      if (!buf.IsOk()) return buf.ToStatus().WithContext("layer: op " + std::to_string(op) + ": ");
      im.op_out[op] = *buf;
    }

  const auto src = [&](const TensorRef& t) -> const void* {
    switch (t.source) {
      case TensorSource::kLayerInput: return io.input;
      case TensorSource::kEncoderOutput: return io.encoder;
      case TensorSource::kWeight: return im.weights[t.name];
      case TensorSource::kOp: return im.op_out.count(t.op) ? im.op_out[t.op] : nullptr;
      default: return nullptr;
    }
  };
  const auto input_of = [&](const Op& op, size_t i) -> const void* {
    return i < op.inputs.size() ? src(op.inputs[i]) : nullptr;
  };
  // The weight inputs of an op: [0] the matrix, [1] the bias (when present).
  const auto weight_inputs = [&](const Op& op) {
    std::vector<const void*> w;
    for (const TensorRef& t : op.inputs)
      if (t.source == TensorSource::kWeight) w.push_back(im.weights[t.name]);
    return w;
  };
  const auto mask_for = [&](const Op& op) { return op.causal ? im.causal : im.plain; };
  const auto heads_of = [&](int scores_op) -> Expected<Impl::Heads*> {
    Impl::Heads& h = im.heads[scores_op];
    if (h.q == nullptr) {
      const std::string key = "heads " + std::to_string(scores_op) + " ";
      int part = 0;
      for (void** p : {&h.q, &h.k, &h.v, &h.o}) {
        auto buf = NewActivation(key + "qkvo"[part++], B * H * L * d);
        if (!buf.IsOk()) return buf.ToStatus();
        *p = *buf;
      }
    }
    return &h;
  };
  // Where q, k or v sits in its projection's rows: the width tells the packing ([q k v],
  // T5's cross-attention [k v], or q alone).
  const auto column_offset = [&](const TensorRef& t) -> int64_t {
    const int64_t width = g.At(t.op).output.dims.back(), hd = H * d;
    if (t.name == "k") return width == 3 * hd ? hd : 0;
    if (t.name == "v") return width == 3 * hd ? 2 * hd : (width == 2 * hd ? hd : 0);
    return 0;
  };
  // The mask a segment's Mask op applies (the user's when it has none).
  const auto segment_mask = [&](const Segment& s) {
    for (int n = s.first; n <= s.last; ++n)
      if (g.At(n).kind == OpKind::kMask) return mask_for(g.At(n));
    return im.plain;
  };
  // Split one of q, k, v out of its projection's output.
  const auto split = [&](const TensorRef& t, void* dst) -> Expected<LayerStep> {
    if (t.source != TensorSource::kOp || src(t) == nullptr)
      return MakeError("layer: " + t.name + ": not produced inside the layer");
    const int64_t width = g.At(t.op).output.dims.back(), offset = column_offset(t);
    HeadsCall c;
    c.split = true, c.batch = B, c.seq_len = L, c.heads = H, c.head_dim = d;
    c.src = src(t), c.src_row_stride = width, c.col_offset = offset, c.dst = dst;
    return LayerStep{"split heads " + t.name, c};
  };
  const auto merge = [&](const void* from, void* to) {
    HeadsCall c;
    c.split = false, c.batch = B, c.seq_len = L, c.heads = H, c.head_dim = d;
    c.src = from, c.dst = to;
    return LayerStep{"merge heads", c};
  };
  const float inv_sqrt_d = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));

  // Pass 2: the calls.
  for (size_t si = 0; si < m_segments.size(); ++si) {
    SegmentRun& run = m_segments[si];
    const SegmentChoice choice = choices.empty() ? SegmentChoice{} : choices[si];
    const Segment s = run.segment;
    const Op& first = g.At(s.first);
    const Op& last = g.At(s.last);
    void* out = im.op_out[s.last];
    auto& steps = run.steps;
    const auto label = [&](const std::string& what) {
      return what + " #" + std::to_string(s.first) +
             (s.last != s.first ? "-#" + std::to_string(s.last) : "");
    };
    if (run.fused) {
      run.how = std::string(run.match.Name());
      if (!choice.params.empty()) run.how += " (" + ParamMapText(choice.params) + ")";
      // Gather the segment's pieces by kind.
      const Op* gemm1 = nullptr;
      const Op* gemm2 = nullptr;
      const Op* add = nullptr;
      const Op* norm = nullptr;
      const Op* bias_op = nullptr;
      Activation act = Activation::kNone;
      bool has_scale = false;
      for (int n = s.first; n <= s.last; ++n) {
        const Op& op = g.At(n);
        switch (op.kind) {
          case OpKind::kGemm: (gemm1 ? gemm2 : gemm1) = &op; break;
          case OpKind::kAdd: add = &op; break;
          case OpKind::kLayerNorm: case OpKind::kRmsNorm: norm = &op; break;
          case OpKind::kBias: bias_op = &op; break;
          case OpKind::kGelu: act = Activation::kGelu; break;
          case OpKind::kRelu: act = Activation::kRelu; break;
          case OpKind::kScale: has_scale = true; break;
          default: break;
        }
      }
      // The residual an Add reads: its input that does not come from inside the segment.
      const auto residual_of = [&](const Op& a) -> const void* {
        for (const TensorRef& t : a.inputs)
          if (!(t.source == TensorSource::kOp && s.Contains(t.op))) return src(t);
        return nullptr;
      };
      const auto bias_of = [&](const Op* gemm) -> const void* {
        if (gemm && gemm->has_bias) return weight_inputs(*gemm).at(1);
        return nullptr;
      };
      const auto m_rows = [&](const Op& op) { return op.output.Elements() / op.output.dims.back(); };
      switch (run.match.kind) {
        case TemplateKind::kSparseMha: {
          const Op& scores = first;
          const Op& context = last;
          MhaCall c;
          c.workload = Workload{B, L, H, d, m_storage};
          c.mask = segment_mask(s);
          c.config = choice.mha_config;
          c.variant = choice.mha_variant;
          c.sub_len = choice.sub_len;
          c.scale = has_scale ? 0.0f : 1.0f;
          // The fused block-wise kernel reads q, k, v straight out of the projections and
          // writes the context in [B, L, H d]: no head split or merge (4 kernels fewer).
          if (c.variant == MhaVariant::kFused && c.config.kernel == MhaKernel::kBlockWise) {
            const auto view = [&](const TensorRef& t, MhaStrides* st) -> const void* {
              const int64_t width = g.At(t.op).output.dims.back();
              *st = MhaStrides{L * width, d, width};
              return static_cast<const uint8_t*>(src(t)) + column_offset(t) * DTypeBytes(m_storage);
            };
            MhaStrides v_st;
            c.q = view(scores.inputs.at(0), &c.q_strides);
            c.k = view(scores.inputs.at(1), &c.kv_strides);
            c.v = view(context.inputs.at(1), &v_st);
            c.o_strides = MhaStrides{L * H * d, d, H * d};
            if (!(c.kv_strides.batch == v_st.batch && c.kv_strides.row == v_st.row))
              return MakeError("layer: " + SegmentLabel(s) + ": k and v layouts differ");
            c.o = out;
            steps.push_back({"attention (fused, strided views)", c});
            break;
          }
          auto hb = heads_of(scores.number);
          if (!hb.IsOk()) return hb.ToStatus();
          Impl::Heads& h = **hb;
          for (auto [t, dst] : {std::pair{scores.inputs.at(0), h.q}, {scores.inputs.at(1), h.k},
                                {context.inputs.at(1), h.v}}) {
            auto st = split(t, dst);
            if (!st.IsOk()) return st.ToStatus();
            steps.push_back(*st);
          }
          c.q = h.q, c.k = h.k, c.v = h.v, c.o = h.o;
          steps.push_back({std::string("attention (") + MhaVariantName(c.variant) + ")", c});
          steps.push_back(merge(h.o, out));
          break;
        }
        case TemplateKind::kScaleMaskSoftmax: {
          ScoresCall c;
          c.op = ScoreOp::kScaleMaskSoftmax, c.bh = B * H, c.seq_len = L;
          c.x = input_of(first, 0), c.out = out;
          c.scale = has_scale ? inv_sqrt_d : 1.0f;
          c.mask = segment_mask(s);
          steps.push_back({label("scale+mask+softmax"), c});
          break;
        }
        case TemplateKind::kGemmChain: {
          GemmChainCall c;
          c.batch = 1, c.m = m_rows(*gemm1), c.k = gemm1->inputs.at(0).dims.back();
          c.n = gemm1->output.dims.back(), c.h = gemm2->output.dims.back();
          c.a = input_of(*gemm1, 0), c.b = weight_inputs(*gemm1).at(0);
          c.d = weight_inputs(*gemm2).at(0);
          c.stride_b = 0, c.stride_d = 0;
          c.bias1 = bias_of(gemm1), c.act = act, c.bias2 = bias_of(gemm2);
          if (bias_op) {  // a separate Bias op belongs to the GEMM before it
            (bias_op->number < gemm2->number ? c.bias1 : c.bias2) = weight_inputs(*bias_op).at(0);
          }
          c.e = out;
          c.params = choice.params;
          steps.push_back({label("gemm chain"), c});
          break;
        }
        case TemplateKind::kGemmNorm: {
          GemmNormCall c;
          c.m = m_rows(*gemm1), c.k = gemm1->inputs.at(0).dims.back(), c.n = gemm1->output.dims.back();
          c.a = input_of(*gemm1, 0), c.w = weight_inputs(*gemm1).at(0), c.bias = bias_of(gemm1);
          if (bias_op) c.bias = weight_inputs(*bias_op).at(0);
          c.residual = add ? residual_of(*add) : nullptr;
          const auto nw = weight_inputs(*norm);
          c.gamma = nw.at(0), c.beta = nw.size() > 1 ? nw[1] : nullptr;
          c.eps = norm->kind == OpKind::kRmsNorm ? 1e-6f : 1e-5f;
          c.out = out, c.params = choice.params;
          steps.push_back({label("gemm+norm"), c});
          break;
        }
        case TemplateKind::kGemmAct:
        case TemplateKind::kGemmAdd:
        case TemplateKind::kGemmBias: {
          GemmCall c;
          c.m = m_rows(*gemm1), c.k = gemm1->inputs.at(0).dims.back(), c.n = gemm1->output.dims.back();
          c.a = input_of(*gemm1, 0), c.w = weight_inputs(*gemm1).at(0), c.bias = bias_of(gemm1);
          if (bias_op) c.bias = weight_inputs(*bias_op).at(0);
          c.act = act;
          c.residual = add ? residual_of(*add) : nullptr;
          c.out = out, c.params = choice.params;
          steps.push_back({label("gemm+epilogue"), c});
          break;
        }
        case TemplateKind::kBiasAddNorm: {
          NormCall c;
          c.rows = m_rows(*norm), c.cols = norm->output.dims.back();
          // x enters through the first op; the Add's other input is the residual.
          c.x = input_of(first, 0);
          if (bias_op) c.bias = weight_inputs(*bias_op).at(0);
          if (add) {
            c.residual = add == &first ? input_of(*add, 1) : residual_of(*add);
            if (escapes(s, add->number)) c.sum_out = im.op_out[add->number];
          }
          const auto nw = weight_inputs(*norm);
          c.gamma = nw.at(0), c.beta = nw.size() > 1 ? nw[1] : nullptr;
          c.eps = norm->kind == OpKind::kRmsNorm ? 1e-6f : 1e-5f;
          c.out = out, c.params = choice.params;
          steps.push_back({label("bias+add+norm"), c});
          break;
        }
        default:
          return MakeError("layer: segment " + SegmentLabel(s) + ": template " +
                           run.match.Name() + " has no runner");
      }
      continue;
    }
    // Op by op.
    for (int n = s.first; n <= s.last; ++n) {
      const Op& op = g.At(n);
      void* o = im.op_out[n];
      const std::string tag = " #" + std::to_string(n);
      switch (op.kind) {
        case OpKind::kGemm: {
          GemmCall c;
          c.m = op.output.Elements() / op.output.dims.back();
          c.k = op.inputs.at(0).dims.back(), c.n = op.output.dims.back();
          c.a = input_of(op, 0);
          const auto w = weight_inputs(op);
          c.w = w.at(0), c.bias = op.has_bias ? w.at(1) : nullptr, c.out = o;
          if (s.Size() == 1) c.params = choice.params;  // a lone GEMM is tuned too (algo)
          steps.push_back({std::string(op.has_bias ? "gemm+bias" : "gemm") + tag, c});
          break;
        }
        case OpKind::kBatchGemm: {
          const bool is_scores = op.inputs.at(0).name == "q";
          BatchedGemmCall c;
          c.batch = B * H;
          if (is_scores) {
            auto hb = heads_of(n);
            if (!hb.IsOk()) return hb.ToStatus();
            Impl::Heads& h = **hb;
            for (auto [t, dst] : {std::pair{op.inputs.at(0), h.q}, {op.inputs.at(1), h.k}}) {
              auto st = split(t, dst);
              if (!st.IsOk()) return st.ToStatus();
              steps.push_back(*st);
            }
            c.m = L, c.n = L, c.k = d, c.a = h.q, c.b = h.k, c.c = o, c.trans_b = true;
            steps.push_back({"q k^T" + tag, c});
          } else {
            // The context op reads probs from its scores op's chain: find that block's heads.
            const int probs_op = op.inputs.at(0).op;
            int scores_op = probs_op;
            while (scores_op > 0 && g.At(scores_op).kind != OpKind::kBatchGemm)
              scores_op = g.At(scores_op).inputs.at(0).op;
            auto hb = heads_of(scores_op);
            if (!hb.IsOk()) return hb.ToStatus();
            Impl::Heads& h = **hb;
            auto st = split(op.inputs.at(1), h.v);
            if (!st.IsOk()) return st.ToStatus();
            steps.push_back(*st);
            c.m = L, c.n = d, c.k = L, c.a = input_of(op, 0), c.b = h.v, c.c = h.o;
            steps.push_back({"p v" + tag, c});
            steps.push_back(merge(h.o, o));
          }
          break;
        }
        case OpKind::kBias:
        case OpKind::kAdd:
        case OpKind::kGelu:
        case OpKind::kRelu: {
          EpilogueCall c;
          c.rows = op.output.Elements() / op.output.dims.back(), c.cols = op.output.dims.back();
          c.x = input_of(op, 0), c.out = o;
          if (op.kind == OpKind::kBias) c.bias = weight_inputs(op).at(0);
          if (op.kind == OpKind::kAdd) c.residual = input_of(op, 1);
          if (op.kind == OpKind::kGelu) c.act = Activation::kGelu;
          if (op.kind == OpKind::kRelu) c.act = Activation::kRelu;
          steps.push_back({std::string(OpKindName(op.kind)) + tag, c});
          break;
        }
        case OpKind::kLayerNorm:
        case OpKind::kRmsNorm: {
          NormCall c;
          c.rows = op.output.Elements() / op.output.dims.back(), c.cols = op.output.dims.back();
          c.x = input_of(op, 0);
          const auto nw = weight_inputs(op);
          c.gamma = nw.at(0), c.beta = nw.size() > 1 ? nw[1] : nullptr;
          c.eps = op.kind == OpKind::kRmsNorm ? 1e-6f : 1e-5f;
          c.out = o;
          if (s.Size() == 1) c.params = choice.params;
          steps.push_back({std::string(OpKindName(op.kind)) + tag, c});
          break;
        }
        case OpKind::kScale:
        case OpKind::kMask:
        case OpKind::kSoftmax: {
          ScoresCall c;
          c.op = op.kind == OpKind::kScale ? ScoreOp::kScale
                 : op.kind == OpKind::kMask ? ScoreOp::kMask
                                            : ScoreOp::kSoftmax;
          c.bh = B * H, c.seq_len = L, c.x = input_of(op, 0), c.out = o;
          c.scale = inv_sqrt_d;
          c.mask = mask_for(op);
          steps.push_back({std::string(OpKindName(op.kind)) + tag, c});
          break;
        }
      }
    }
  }
  // Every bound input must exist (a graph reading an output nobody materialised is a bug here).
  for (const SegmentRun& run : m_segments)
    for (const LayerStep& st : run.steps)
      if (std::holds_alternative<GemmCall>(st.call) && std::get<GemmCall>(st.call).a == nullptr)
        return MakeError("layer: " + st.label + ": input is not materialised");
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
