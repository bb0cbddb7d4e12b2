// Studio's views (studio.h): for each panel, the state it draws filled from the session's
// models, the panel drawn, and the actions it returns applied through Studio's commands, in the
// order the panel reported them (the Fusion and Tune tabs' through layer_views.h). The panels
// (panels/) never see Studio or LayerWorkbench; this file is the one place that knows both
// sides. The window shell that calls these is studio_frame.cpp.
#include "app/studio/layer_views.h"
#include "app/studio/panels/export_panel.h"
#include "app/studio/panels/file_bar.h"
#include "app/studio/panels/layout_panel.h"
#include "app/studio/panels/learn_panel.h"
#include "app/studio/panels/mask_canvas.h"
#include "app/studio/panels/mask_panel.h"
#include "app/studio/panels/profile_panel.h"
#include "app/studio/panels/selection_panel.h"
#include "app/studio/studio.h"

namespace stof::app {

bool Studio::ShowPanelBody(Panel panel) {
  switch (panel) {
    case Panel::kLearn: ShowLearnTab(); return false;
    case Panel::kMask: ShowMaskTab(); return false;
    case Panel::kLayout: ShowLayoutTab(); return false;
    case Panel::kSelection: ShowSelectionTab(); return false;
    case Panel::kFusion: ShowFusionTab(); return false;
    case Panel::kTune: return ShowTuneTab();
    case Panel::kProfile: ShowProfileTab(); return false;
    case Panel::kExport: ShowExportTab(); return false;
  }
  return false;
}

void Studio::ShowFileBar() {
  const FileBarView view{m_recent, History().UndoCount() > 0, History().RedoCount() > 0, Doc().path, Doc().dirty};
  const FileBarActions a = DrawFileBar(view, m_path_buffer);
  if (a.open) OpenFile(*a.open);
  if (a.save) SaveFile(*a.save);
  if (a.undo) Undo();
  if (a.redo) Redo();
}

// The textures are current (Draw refreshed them before the panels); the exact-cell one is made
// when the canvas asks for a rectangle. Edits change the cells and re-send their texels.
void Studio::ShowCanvas() {
  MaskCanvasView view{&Doc().state.mask, Analysis(), AnalysisReady(), LayoutFits(), m_overlay, &m_textures,
                      [this](int64_t r0, int64_t r1, int64_t c0, int64_t c1) -> const Texture& {
                        return m_textures.Detail(Doc().state.mask, Doc().version, ShownBlend(), r0, r1, c0, c1);
                      }};
  const MaskCanvasActions a = DrawMaskCanvas(view, m_edit, m_view);
  if (a.overlay) SetOverlay(*a.overlay);
  for (const CanvasEdit& e : a.edits) {
    if (!e.gesture.empty()) BeginGesture(e.gesture);
    ApplyEdit(e.edit);
  }
}

// The Learn tab: the current lesson page from the live views, and its actions.
void Studio::ShowLearnTab() {
  const LessonPage page = CurrentLessonPage();
  const LearnPanelActions a = DrawLearnPanel(m_learn, page);
  if (m_learn.lesson >= 0) {  // the real views' parts, live, under the text
    const FusionView fusion = MakeFusionView(*m_workbench);
    if (page.show_segments) DrawFusionSegments(fusion);
    if (page.show_ladder) ApplyFusionActions(*m_workbench, DrawFusionLadder(fusion));
  }
  if (a.open_lesson) OpenLesson(*a.open_lesson);
  if (a.page_step != 0) StepLesson(a.page_step);
  if (a.glossary) m_learn.glossary_open = true;
  if (!a.show_view.empty())
    if (auto p = ParsePanel(a.show_view); p.IsOk()) ShowPanel(*p);
}

void Studio::ShowMaskTab() {
  const engine::MaskSpec* spec = Doc().state.spec ? &*Doc().state.spec : nullptr;
  const MaskActions a = DrawMaskPanel(MaskView{&Doc().state.mask, spec, &History(), Analysis()}, m_mask_ui);
  if (a.regenerate) {  // one undo step per drag: the gesture ends once no button is down
    BeginGesture("preset " + a.regenerate->pattern);
    ApplySpec(*a.regenerate, false);
  }
}

void Studio::ShowLayoutTab() {
  const LayoutActions a = DrawLayoutPanel(LayoutView{m_block_m, m_block_n, m_overlay, Analysis(), m_workload});
  if (a.block) SetBlockSize(a.block->first, a.block->second);
  if (a.overlay) SetOverlay(*a.overlay);  // the textures follow in the next Draw()
}

void Studio::ShowSelectionTab() {
  const SelectionView view{m_workload, &m_devices.devices, m_devices.index, Analysis(), AnalysisSerial()};
  const SelectionActions a = DrawSelectionPanel(view, m_selection_ui);
  if (a.workload) SetWorkload(*a.workload);
  if (a.device) SetDevice(*a.device);
}

void Studio::ShowExportTab() {
  const ExportView view{m_save.Busy(), m_block_m, m_block_n, Commands()};
  const ExportActions a = DrawExportPanel(view, m_export_ui);
  if (a.save_mask) SaveFile(*a.save_mask);
  if (a.export_layout) ExportLayout(*a.export_layout, a.layout_format);
  if (a.export_plan) ExportPlan(*a.export_plan);
}

void Studio::ShowFusionTab() { ApplyFusionActions(*m_workbench, DrawFusionPanel(MakeFusionView(*m_workbench))); }

bool Studio::ShowTuneTab() {
  const TuneActions a = DrawTunePanel(MakeTuneView(*m_workbench), m_export_ui.plan_path);
  ApplyTuneActions(*m_workbench, a);
  return a.show_fusion;
}

// The profile tab: the panel, with the studio's word on profiling and its actions.
void Studio::ShowProfileTab() {
  const GpuWorker& gpu = m_workbench->Worker();
  std::string status;
  if (!gpu.Ready()) status = "starting the GPU worker";
  else if (gpu.HasGpu()) status = "profiling runs on " + gpu.DeviceText();
  else status = gpu.DeviceText() + ": open profiles or plans measured elsewhere";
  const ProfilePanelActions a = DrawProfilePanel(m_workbench->Profiles(), gpu.HasGpu() && !gpu.Busy(), status);
  if (a.profile_now) m_workbench->ProfileNow();
  if (a.open) {
    if (a.open_path.empty()) Message(MessageLevel::kError, "open: give a profile or plan file");
    else m_workbench->OpenProfile(a.open_path);
  }
}

}  // namespace stof::app
