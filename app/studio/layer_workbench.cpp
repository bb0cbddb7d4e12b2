// LayerWorkbench (layer_workbench.h), the layer itself: the mask and device Studio forwards,
// the model and batch chosen, the op graph built from them, what runs for its attention and
// the fused-or-apart trade-offs. The other jobs' members are in layer_workbench_*.cpp.
#include "app/studio/layer_workbench.h"

#include "app/common/run_choice.h"
#include "app/studio/asset_paths.h"
#include "engine/fusion/default_scheme.h"
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"

namespace stof::app {

LayerWorkbench::LayerWorkbench(GpuWorker& worker)
    : m_worker(worker), m_live(std::make_shared<TuneLiveFeed>()) {
  m_profiles.shipped = ShippedProfiles();
}

void LayerWorkbench::Message(bool error, const std::string& text) {
  m_message_error = error;
  m_message = text;
  m_has_message = true;
}

bool LayerWorkbench::TakeMessage(bool* error, std::string* text) {
  if (!m_has_message) return false;
  *error = m_message_error;
  *text = m_message;
  m_has_message = false;
  return true;
}

engine::Workload LayerWorkbench::AttentionWorkload() const {
  engine::Workload w;
  w.batch = m_graph->batch;
  w.seq_len = m_graph->seq_len;
  w.heads = m_graph->heads;
  w.head_dim = m_graph->head_dim;
  w.dtype = engine::DType::kF16;
  return w;
}

void LayerWorkbench::SetDevice(const engine::DeviceSpec& device) {
  if (device.name == m_device.name) return;
  m_device = device;
  // The roofline's roofs are this device's peaks, as every other view's.
  m_profiles.peaks = profiler::DevicePeaks{device.name, device.fp16_tensor_flops, device.dram_bytes_per_s};
  RecomputeRun();
  RecomputeSegments();
  RecomputeLadder();
  RecomputeTradeoffs();
}

void LayerWorkbench::SetMask(const engine::Mask& mask, uint64_t version,
                       const std::optional<engine::MaskSpec>& spec, const std::string& label) {
  if (m_mask && version == m_mask_version) return;
  const bool resized = !m_mask || m_mask->Rows() != mask.Rows();
  m_mask = std::make_shared<const engine::Mask>(mask);
  m_mask_version = version;
  m_spec = spec;
  m_mask_label = label;
  if (resized || !m_graph) {
    RebuildGraph();
  } else {
    RecomputeRun();
    RecomputeSegments();
    RecomputeLadder();
    RecomputeTradeoffs();
  }
}

void LayerWorkbench::ApplyChoice() {
  if (m_choice_edit == m_choice && m_graph) return;
  m_choice = m_choice_edit;
  RebuildGraph();
}

void LayerWorkbench::SetChoice(const LayerChoice& choice) {
  m_choice_edit = choice;
  ApplyChoice();
}

void LayerWorkbench::RebuildGraph() {
  m_graph.reset();
  m_scheme.reset();
  m_segments.clear();
  m_ladder.clear();
  m_graph_error.clear();
  if (!m_mask) return;
  engine::Expected<engine::ModelConfig> model =
      m_choice.config_path.empty() ? engine::FindModelPreset(m_choice.model)
                                   : engine::LoadModelConfig(m_choice.config_path);
  if (!model.IsOk()) {
    m_graph_error = model.Message();
    return;
  }
  engine::GraphRequest rq;
  rq.model = *model;
  rq.batch = m_choice.batch;
  rq.seq_len = m_mask->Rows();
  auto g = engine::BuildLayerGraph(rq);
  if (!g.IsOk()) {
    m_graph_error = g.Message();
    return;
  }
  m_graph = std::move(*g);
  m_scheme = engine::DefaultScheme(*m_graph);
  m_choices.clear();
  m_measured.clear();
  RecomputeRun();
  SchemeChanged("default");
  RecomputeLadder();
  RecomputeTradeoffs();
}

void LayerWorkbench::RecomputeRun() {
  m_run.reset();
  m_run_error.clear();
  if (!m_graph || !m_mask || m_device.name.empty()) return;
  static const engine::MhaRunChooser chooser = MakeMhaRunChooser();  // the kernels' rules
  auto r = engine::ChooseRun(chooser, *m_mask, AttentionWorkload(), m_device);
  if (r.IsOk()) m_run = std::move(*r);
  else m_run_error = r.Message();
}

void LayerWorkbench::RecomputeTradeoffs() {
  m_tradeoffs.clear();
  m_norm_by_device.clear();
  if (!m_graph || !m_mask || m_device.name.empty()) return;
  if (auto t = engine::PredictFusionTradeoffs(*m_graph, *m_mask, m_device); t.IsOk()) m_tradeoffs = std::move(*t);
  if (auto d = engine::TradeoffAcrossDevices(*m_graph, *m_mask, engine::BuiltinDevices(), "gemm_norm"); d.IsOk())
    m_norm_by_device = std::move(*d);
}

std::vector<engine::SegmentChoice> LayerWorkbench::EffectiveChoices() const {
  if (!m_choices.empty() || !m_scheme) return m_choices;
  engine::SegmentChoice c;
  if (m_run) c.mha_config = engine::RunConfig(*m_run);  // only attention segments read it
  return std::vector<engine::SegmentChoice>(m_scheme->Segments().size(), c);
}

}  // namespace stof::app
