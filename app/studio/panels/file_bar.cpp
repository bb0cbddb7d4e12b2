// DrawFileBar (file_bar.h).
#include "app/studio/panels/file_bar.h"

#include <imgui.h>

#include <algorithm>

#include "app/studio/widgets/input_text.h"

namespace stof::app {

FileBarActions DrawFileBar(const FileBarView& view, std::string& path) {
  FileBarActions a;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("File");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 560.0f));
  const bool enter = InputTextString("##path", &path, ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A mask file: .png, .npy or .json. Enter or Open loads it; you can also drop a file on the window.");
  ImGui::SameLine();
  if (ImGui::Button("Open") || enter) a.open = path;
  ImGui::SameLine();
  if (ImGui::Button("Save")) a.save = path;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  if (ImGui::BeginCombo("##recent", "Recent files")) {
    if (view.recent.empty()) ImGui::TextDisabled("none yet");
    std::string pick;
    for (const std::string& p : view.recent)
      if (ImGui::Selectable(p.c_str())) pick = p;
    ImGui::EndCombo();
    if (!pick.empty()) {
      path = pick;
      a.open = pick;
    }
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(!view.can_undo);
  if (ImGui::Button("Undo")) a.undo = true;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!view.can_redo);
  if (ImGui::Button("Redo")) a.redo = true;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::TextDisabled("%s%s", view.doc_path.empty() ? "(generated)" : view.doc_path.c_str(), view.dirty ? " *" : "");
  return a;
}

}  // namespace stof::app
