// DrawFileBar (file_bar.h).
#include "app/studio/panels/file_bar.h"

#include <imgui.h>

#include "app/studio/studio.h"
#include "app/studio/widgets/input_text.h"

namespace stof::app {

void DrawFileBar(Studio& studio) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("File");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 560.0f));
  const bool enter = InputTextString("##path", &studio.PathBuffer(), ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A mask file: .png, .npy or .json. Enter or Open loads it; you can also drop a file on the window.");
  ImGui::SameLine();
  if (ImGui::Button("Open") || enter) studio.OpenFile(studio.PathBuffer());
  ImGui::SameLine();
  if (ImGui::Button("Save")) studio.SaveFile(studio.PathBuffer());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  if (ImGui::BeginCombo("##recent", "Recent files")) {
    if (studio.Recent().empty()) ImGui::TextDisabled("none yet");
    std::string pick;
    for (const std::string& p : studio.Recent())
      if (ImGui::Selectable(p.c_str())) pick = p;
    ImGui::EndCombo();
    if (!pick.empty()) {
      studio.PathBuffer() = pick;
      studio.OpenFile(pick);
    }
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(studio.History().UndoCount() == 0);
  if (ImGui::Button("Undo")) studio.Undo();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(studio.History().RedoCount() == 0);
  if (ImGui::Button("Redo")) studio.Redo();
  ImGui::EndDisabled();
  ImGui::SameLine();
  const Document& d = studio.Doc();
  ImGui::TextDisabled("%s%s", d.path.empty() ? "(generated)" : d.path.c_str(), d.dirty ? " *" : "");
}

}  // namespace stof::app
