// Studio's window shell (studio.h): the frame's layout (file bar on top, canvas left, tabbed
// panels right, the error strip and the status bar at the bottom), the tab table, keyboard
// shortcuts and the unsaved-changes dialog. Each view's state and actions are
// studio_views.cpp's; the panels themselves are in panels/.
#include <imgui.h>

#include <algorithm>
#include <string>

#include "app/studio/panels/learn_panel.h"
#include "app/studio/studio.h"
#include "app/studio/widgets/elided_text.h"
#include "app/studio/widgets/error_text.h"

namespace stof::app {

namespace {

// One tab of the side area, in the tab bar's order; Studio::ShowPanelBody draws its body.
struct PanelRow {
  Panel panel;
  const char* name;   // --panel, --also-panels, the state dump
  const char* title;  // the tab
  bool wide;          // the view needs the width more than the mask canvas does
};

const PanelRow kPanels[] = {
    {Panel::kLearn, "learn", "Learn", false},
    {Panel::kMask, "mask", "Mask", false},
    {Panel::kLayout, "layout", "Block layout", false},
    {Panel::kSelection, "selection", "Kernel selection", false},
    {Panel::kFusion, "fusion", "Fusion", true},
    {Panel::kTune, "tune", "Tune", true},
    {Panel::kProfile, "profile", "Profile", true},
    {Panel::kExport, "export", "Export", false},
};

const PanelRow& RowOf(Panel p) {
  for (const PanelRow& row : kPanels)
    if (row.panel == p) return row;
  return kPanels[0];
}

}  // namespace

const char* PanelName(Panel p) { return RowOf(p).name; }

engine::Expected<Panel> ParsePanel(const std::string& name, const std::string& what) {
  for (const PanelRow& row : kPanels)
    if (name == row.name) return row.panel;
  return engine::Error{what + ": expected learn, mask, layout, selection, export, fusion, tune or profile, got '" +
                       name + "'"};
}

void Studio::HandleShortcuts() {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Z), false)) {
    if (io.KeyShift) Redo(); else Undo();
  }
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Y), false)) Redo();
}

void Studio::DrawQuitDialog() {
  if (m_quit.dialog) {
    ImGui::OpenPopup("Unsaved changes");
    m_quit.dialog = false;
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("The mask has changes that are not saved%s%s.", Doc().path.empty() ? "" : " to ",
                Doc().path.c_str());
    ImGui::TextUnformatted("Save them in the path field's file, quit without saving, or go back.");
    if (ImGui::Button("Save and quit")) {
      SaveFile(m_path_buffer.empty() ? Doc().path : m_path_buffer);
      m_quit.after_save = m_save.Busy();  // PollSave quits once the file is written
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Quit without saving")) {
      m_quit.confirmed = true;
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void Studio::DrawStatusBar() {
  if (m_gpu->Busy()) {
    const double f = m_gpu->Fraction();
    std::string text = m_gpu->Title();
    const std::string stage = m_gpu->Stage();
    if (!stage.empty()) text = stage;
    ImGui::ProgressBar(f >= 0 ? static_cast<float>(f) : 0.0f, ImVec2(420, 0), text.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("Cancel")) m_workbench->CancelJobs();
    ImGui::SameLine();
  }
  if (m_save.Busy()) {
    ImGui::TextColored(ImVec4(0.94f, 0.89f, 0.26f, 1.0f), "saving %s: %.1f s |", m_save.Path().c_str(),
                       m_save.Seconds());
    ImGui::SameLine();
  }
  if (const AnalysisWorker& worker = m_analyses.Worker(); worker.Busy()) {
    ImGui::ProgressBar(static_cast<float>(worker.Progress()), ImVec2(220, 0), worker.Stage().c_str());
    ImGui::SameLine();
  } else if (Analysis()) {
    ImGui::Text("analysis %.0f ms", m_analyses.Seconds() * 1000.0);
    ImGui::SameLine();
  }
  ImGui::Text("| %.0f fps | L = %lld | undo %lld%s | %s", ImGui::GetIO().Framerate,
              static_cast<long long>(Doc().state.mask.Rows()),
              static_cast<long long>(History().UndoCount()), Doc().dirty ? " | unsaved" : "",
              Device().name.c_str());
  if (m_devices.index == m_devices.initial && !m_devices.note.empty()) {
    ImGui::SameLine(0, 4);
    // A long note (why this machine has no usable GPU) is cut to the line, whole in its
    // tooltip, leaving room for the message after it.
    const float room = ImGui::GetContentRegionAvail().x - 16 * ImGui::GetFontSize();
    ElidedText("(" + m_devices.note + ")", /*disabled=*/true, room > 0 ? room : 1);
  }
  ImGui::SameLine(0, 4);
  ImGui::TextUnformatted("|");
  ImGui::SameLine();
  // Errors are in the strip above; a dismissed one comes back from here.
  const bool error = !m_analyses.Error().empty() || m_message.level == MessageLevel::kError;
  if (!error) {
    ElidedText(m_message.text);  // the rest of the line; whole on hover
  } else if (m_error_strip.Shown(CurrentError()).empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColour);
    if (ImGui::SmallButton("show the error")) m_error_strip.ShowAgain();
    ImGui::PopStyleColor();
  }
}

void Studio::Draw() {
  m_analyses.Poll();
  PollSave();
  for (GpuWorker::Done& done : m_gpu->TakeDone()) done();
  m_workbench->SetDevice(Device());
  m_workbench->SetMask(Doc().state.mask, Doc().version, Doc().state.spec, MaskLabel());
  {
    bool error = false;
    std::string text;
    if (m_workbench->TakeMessage(&error, &text)) Message(error ? MessageLevel::kError : MessageLevel::kInfo, text);
  }
  HandleShortcuts();
  m_textures.Refresh(ShownBlend(), LatestLayout(), m_overlay == Overlay::kBlocks);

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("STOF Studio", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollbar);
  ShowFileBar();
  const float status_h = ImGui::GetFrameHeightWithSpacing() + 4.0f;
  const float error_h = m_error_strip.Layout(CurrentError(), ImGui::GetContentRegionAvail().x);
  const float body_h = ImGui::GetContentRegionAvail().y - status_h - error_h;
  // The fusion, tune and profile views need the width more than the mask canvas does.
  const bool wide = RowOf(m_panel).wide;
  const float full = ImGui::GetContentRegionAvail().x;
  const float side = wide ? full * 0.80f : std::min(700.0f, std::max(420.0f, full * 0.44f));
  ImGui::BeginChild("canvas_area", ImVec2(full - side, body_h), true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ShowCanvas();
  ImGui::EndChild();
  ImGui::SameLine();
  DrawTabs(body_h);
  m_error_strip.Draw(CurrentError(), error_h);
  DrawStatusBar();
  DrawQuitDialog();
  DrawGlossaryPopup(&m_learn.glossary_open);
  ImGui::End();
  if (!ImGui::IsAnyMouseDown() && !ImGui::IsAnyItemActive()) EndGesture();
}

// The side area: one tab per kPanels row; the tune view may ask for the fusion view.
void Studio::DrawTabs(float height) {
  ImGui::BeginChild("side", ImVec2(0, height), true);
  if (ImGui::BeginTabBar("views")) {
    bool to_fusion = false;
    for (const PanelRow& row : kPanels) {
      const ImGuiTabItemFlags flags = m_force_panel && m_panel == row.panel ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(row.title, nullptr, flags)) {
        if (!m_force_panel) m_panel = row.panel;
        ImGui::BeginChild("panel_body", ImVec2(0, 0), false);
        to_fusion = ShowPanelBody(row.panel) || to_fusion;
        ImGui::EndChild();
        ImGui::EndTabItem();
      }
    }
    // The glossary, one click away from every view.
    if (ImGui::TabItemButton("Glossary", ImGuiTabItemFlags_Trailing)) m_learn.glossary_open = true;
    m_force_panel = false;
    if (to_fusion) {
      m_panel = Panel::kFusion;
      m_force_panel = true;
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

}  // namespace stof::app
