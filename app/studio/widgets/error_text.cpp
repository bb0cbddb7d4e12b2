// ErrorTextWrapped (error_text.h).
#include "app/studio/widgets/error_text.h"

namespace stof::app {

void ErrorTextWrapped(const std::string& text, float reserve_right) {
  const float wrap = ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - reserve_right;
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColour);
  ImGui::PushTextWrapPos(wrap);
  ImGui::TextUnformatted(text.c_str(), text.c_str() + text.size());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

}  // namespace stof::app
