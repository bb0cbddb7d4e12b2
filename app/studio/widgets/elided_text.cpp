// ElideToWidth and ElidedText (elided_text.h).
#include "app/studio/widgets/elided_text.h"

#include <imgui.h>

namespace stof::app {

std::string ElideToWidth(const std::string& text, float max_width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= max_width) return text;
  const float dots = ImGui::CalcTextSize("..").x;
  std::string out = text;
  while (!out.empty() && ImGui::CalcTextSize(out.c_str()).x + dots > max_width) out.pop_back();
  return out + "..";
}

void ElidedText(const std::string& text, bool disabled, float width) {
  const float room = width > 0 ? width : ImGui::GetContentRegionAvail().x;
  const std::string shown = ElideToWidth(text, room);
  if (disabled) ImGui::TextDisabled("%s", shown.c_str());
  else ImGui::TextUnformatted(shown.c_str());
  if (shown.size() != text.size() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
}

}  // namespace stof::app
