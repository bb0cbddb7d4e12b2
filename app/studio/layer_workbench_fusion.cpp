// LayerWorkbench (layer_workbench.h), the fusion view's part: the scheme shown (default, edited
// by clicks, typed) with each segment's template and predicted time and bytes, and the
// attention block's fusion ladder, predicted or measured on the GPU worker.
#include "app/studio/layer_workbench.h"

#include "engine/fusion/default_scheme.h"
#include "engine/fusion/scheme_edit.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/fusion/template_match.h"
#include "engine/tune/cost_source.h"
#include "engine/tune/segment_model.h"
#include "profiler/ladder_profile.h"

namespace stof::app {

void LayerWorkbench::SchemeChanged(const std::string& source) {
  m_scheme_source = source;
  m_fusion_message.clear();
  RecomputeSegments();
}

void LayerWorkbench::RecomputeSegments() {
  m_segments.clear();
  if (!m_graph || !m_scheme || !m_mask) return;
  const engine::OpGraph& g = *m_graph;
  const auto& segs = m_scheme->Segments();
  const std::vector<engine::SegmentChoice> choices = EffectiveChoices();
  for (size_t i = 0; i < segs.size(); ++i) {
    SegmentView v;
    v.segment = segs[i];
    const engine::TemplateMatch m = engine::MatchTemplate(g, segs[i]);
    const engine::SegmentChoice c = i < choices.size() ? choices[i] : engine::SegmentChoice{};
    const engine::TemplateKind running = engine::RunningTemplate(g, segs[i], c);
    v.tmpl = engine::TemplateName(running);
    v.why = running == engine::TemplateKind::kNone ? (m.reason.empty() ? "run op by op" : m.reason) : "";
    v.mix = m.mix;
    v.choice = engine::ChoiceText(c, running);
    auto p = engine::PredictSegment(g, segs[i], c, *m_mask, m_device);
    if (p.IsOk()) {
      v.predicted_us = p->us;
      v.predicted_bytes = p->bytes;
    } else {
      v.predict_error = p.Message();
    }
    if (i < m_measured.size()) v.measured_us = m_measured[i];
    m_segments.push_back(std::move(v));
  }
}

void LayerWorkbench::RecomputeLadder() {
  m_ladder.clear();
  m_ladder_note.clear();
  ++m_ladder_tag;  // a measured ladder still on its way is for other inputs now
  if (!m_graph || !m_mask) return;
  if (!m_run) {
    m_ladder_note = "what runs is not known: " + m_run_error;
    return;
  }
  const engine::MhaConfig fused = engine::RunConfig(*m_run);
  auto r = engine::PredictLadder(AttentionWorkload(), *m_mask, m_device, &fused);
  if (!r.IsOk()) {
    m_ladder_note = r.Message();
    return;
  }
  m_ladder = std::move(*r);
  m_ladder_note = "predicted by the analytical model for " + m_device.name + "; fully fused = what runs: " +
                  engine::MhaRunChoiceShort(*m_run);
}

void LayerWorkbench::MeasureLadder() {
  if (!m_graph || !m_mask) return;
  if (!m_worker.HasGpu()) {
    Message(true, "fusion ladder: no GPU here (" + m_worker.DeviceText() + "); the bars stay predicted");
    return;
  }
  const engine::Workload w = AttentionWorkload();
  auto mask = m_mask;
  const uint64_t tag = m_ladder_tag;
  m_worker.Submit("fusion ladder", [this, w, mask, tag](JobContext& ctx) -> GpuWorker::Done {
    auto r = profiler::MeasureLadder(*ctx.backend, *ctx.profiler, w, *mask,
                                     [&](const std::string& part, double f) {
                                       ctx.progress("fusion ladder: " + part, f);
                                       return !ctx.cancel->load();
                                     });
    return [this, r = std::move(r), tag]() {
      if (!r.IsOk()) return Message(true, "fusion ladder: " + r.Message());
      if (tag != m_ladder_tag) return;  // the layer or mask changed meanwhile
      m_ladder = *r;
      m_ladder_note = "measured on " + m_worker.DeviceText();
      Message(false, "fusion ladder measured");
    };
  });
}

void LayerWorkbench::ToggleBoundary(int after_op) {
  if (!m_graph || !m_scheme) return;
  auto s = engine::ToggleBoundary(*m_scheme, *m_graph, after_op);
  if (!s.IsOk()) {
    m_fusion_message = s.Message();
    return;
  }
  m_scheme = *s;
  m_choices.clear();
  m_measured.clear();
  SchemeChanged("edited");
}

void LayerWorkbench::ResetScheme() {
  if (!m_graph) return;
  m_scheme = engine::DefaultScheme(*m_graph);
  m_choices.clear();
  m_measured.clear();
  SchemeChanged("default");
}

bool LayerWorkbench::SetSchemeCode(const std::string& text) {
  if (!m_graph) return false;
  std::string code = text;
  if (code.find_first_not_of("01") != std::string::npos) {
    auto c = engine::HexToCode(text, "scheme");
    if (!c.IsOk()) {
      m_fusion_message = c.Message();
      return false;
    }
    code = *c;
  }
  auto s = engine::FusionScheme::FromCode(code, *m_graph, "scheme");
  if (!s.IsOk()) {
    m_fusion_message = s.Message();
    return false;
  }
  m_scheme = *s;
  m_choices.clear();
  m_measured.clear();
  SchemeChanged("typed");
  return true;
}

}  // namespace stof::app
