// MeasuredCostSource (measured_cost_source.h).
#include "engine/tune/measured_cost_source.h"

namespace stof::engine {

Expected<std::unique_ptr<MeasuredCostSource>> MeasuredCostSource::Create(
    Backend& backend, const OpGraph& graph, const Mask& mask, const MeasureOptions& measure,
    Predictor predictor, uint64_t weight_seed, int layers) {
  if (layers < 1 || layers > 1024)
    return MakeError("tune: layers: expected 1..1024, got " + std::to_string(layers));
  std::unique_ptr<MeasuredCostSource> m(new MeasuredCostSource(backend, std::move(predictor)));
  m->m_graph = graph;
  m->m_graph.dtype = StorageTypeFor(backend);
  m->m_mask = mask;
  m->m_measure = measure;
  const int64_t elements = graph.batch * graph.seq_len * graph.hidden;
  const auto values = PackForBackend(UniformHalfValues(elements, weight_seed, -1, 1),
                                     m->m_graph.dtype);
  for (void*& p : m->m_io) {
    auto buf = backend.Allocate(values.size());
    if (!buf.IsOk()) return buf.ToStatus().WithContext("tune: layer buffers: ");
    p = *buf;
    STOF_RETURN_IF_ERROR(backend.CopyToDevice(p, values.data(), values.size()));
  }
  m->m_pool = std::make_unique<ActivationPool>(backend);
  LayerIo io{m->m_io[0], m->m_io[1], m->m_io[2], m->m_pool.get()};
  for (int i = 0; i < layers; ++i) {
    auto layer = LayerRunner::Create(backend, m->m_graph, mask, FusionScheme::OpByOp(m->m_graph),
                                     {}, io, weight_seed * 1000003ull + static_cast<uint64_t>(i));
    if (!layer.IsOk()) return layer.ToStatus().WithContext("tune: layer " + std::to_string(i) + ": ");
    m->m_layers.push_back(std::move(*layer));
  }
  return m;
}

MeasuredCostSource::~MeasuredCostSource() {
  m_layers.clear();
  m_pool.reset();
  for (void* p : m_io) m_backend.Free(p);
}

Expected<int> MeasuredCostSource::Bind(const Segment& s, const SegmentChoice& c) {
  const FusionScheme scheme = SchemeIsolating(m_graph, s);
  const int idx = SegmentIndex(scheme, s);
  if (idx < 0) return MakeError("tune: segment " + SegmentLabel(s) + ": not a valid segment");
  std::vector<SegmentChoice> choices(scheme.Segments().size());
  choices[static_cast<size_t>(idx)] = c;
  for (auto& layer : m_layers) STOF_RETURN_IF_ERROR(layer->Rebind(scheme, choices));
  return idx;
}

Expected<std::vector<SegmentChoice>> MeasuredCostSource::Choices(const Segment& s) {
  STOF_ASSIGN_OR_RETURN(auto idx, Bind(s, SegmentChoice{}));
  const SegmentRun& run = m_layers.front()->Segments()[static_cast<size_t>(idx)];
  std::vector<SegmentChoice> out;
  const auto with_params = [&](Expected<std::vector<ParamMap>> maps) -> Status {
    if (!maps.IsOk()) return maps.ToStatus();
    for (ParamMap& p : *maps) {
      SegmentChoice c;
      c.params = std::move(p);
      out.push_back(std::move(c));
    }
    return Status::Ok();
  };
  const bool tunable = run.fused || s.Size() == 1;
  for (const LayerStep& st : run.steps) {
    if (!tunable) break;
    if (const auto* mha = std::get_if<MhaCall>(&st.call)) {
      STOF_ASSIGN_OR_RETURN(auto configs, m_backend.MhaConfigChoices(mha->workload, *mha->mask));
      for (const MhaConfig& cfg : RankMhaConfigs(configs, mha->workload, m_backend.Device())) {
        SegmentChoice c;
        c.mha_config = cfg;
        out.push_back(c);
      }
      // Softmax decomposition + fusion: the variant that wins for some dense, long rows.
      SegmentChoice sdf;
      sdf.mha_variant = MhaVariant::kRecomposed;
      sdf.sub_len = 64;
      out.push_back(sdf);
      break;
    }
    Status st_ok = Status::Ok();
    if (const auto* g = std::get_if<GemmCall>(&st.call)) st_ok = with_params(m_backend.GemmParamChoices(*g));
    else if (const auto* n = std::get_if<NormCall>(&st.call)) st_ok = with_params(m_backend.NormParamChoices(*n));
    else if (const auto* gn = std::get_if<GemmNormCall>(&st.call)) st_ok = with_params(m_backend.GemmNormParamChoices(*gn));
    else if (const auto* ch = std::get_if<GemmChainCall>(&st.call)) st_ok = with_params(m_backend.GemmChainParamChoices(*ch));
    else continue;
    if (!st_ok.IsOk()) return std::move(st_ok).WithContext("tune: " + SegmentLabel(s) + ": ");
    break;  // one tunable call per segment
  }
  if (out.empty()) out.push_back(SegmentChoice{});
  return out;
}

Expected<SegmentCost> MeasuredCostSource::Cost(const Segment& s, const SegmentChoice& c) {
  SegmentCost cost;
  cost.measured = true;
  auto idx = Bind(s, c);
  if (!idx.IsOk()) {
    cost.error = idx.Message();
    return cost;
  }
  const size_t i = static_cast<size_t>(*idx);
  auto m = m_backend.Measure(
      [&](void* stream) -> Status {
        for (auto& layer : m_layers) STOF_RETURN_IF_ERROR(layer->RunSegment(i, stream));
        return Status::Ok();
      },
      m_measure);
  if (!m.IsOk()) {
    cost.error = m.Message();
    // A failed launch may leave an error pending on the device; later candidates must not
    // inherit it.
    (void)m_backend.Synchronize();
    return cost;
  }
  cost.us = m->median_us / static_cast<double>(m_layers.size());
  return cost;
}

}  // namespace stof::engine
