// ErrorTextWrapped and NoteTextWrapped (error_text.h).
#include "app/studio/widgets/error_text.h"

namespace stof::app {

namespace {

void ColouredTextWrapped(const std::string& text, const ImVec4& colour, float reserve_right) {
  const float wrap = ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - reserve_right;
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::PushTextWrapPos(wrap);
  ImGui::TextUnformatted(text.c_str(), text.c_str() + text.size());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

}  // namespace

void ErrorTextWrapped(const std::string& text, float reserve_right) {
  ColouredTextWrapped(text, kErrorColour, reserve_right);
}

void NoteTextWrapped(const std::string& text) {
  ColouredTextWrapped(text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled), 0.0f);
}

}  // namespace stof::app
