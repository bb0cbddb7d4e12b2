// ErrorStrip (error_strip.h).
#include "app/studio/widgets/error_strip.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/studio/widgets/error_text.h"

namespace stof::app {

namespace {
constexpr int kErrorStripLines = 8;
const char* const kCopyLabel = "Copy";
const char* const kDismissLabel = "Dismiss";

// Room the strip's buttons take on the right of the text.
float StripButtonsWidth() {
  const ImGuiStyle& st = ImGui::GetStyle();
  return ImGui::CalcTextSize(kCopyLabel).x + ImGui::CalcTextSize(kDismissLabel).x +
         4 * st.FramePadding.x + 2 * st.ItemSpacing.x;
}
}  // namespace

const std::string& ErrorStrip::Shown(const std::string& error) const {
  static const std::string kNone;
  return error == m_dismissed ? kNone : error;
}

float ErrorStrip::Layout(const std::string& error, float width) {
  m_view = View{};
  const std::string& e = Shown(error);
  if (e.empty()) return 0;
  const ImGuiStyle& st = ImGui::GetStyle();
  const float wrap = width - 2 * st.WindowPadding.x - StripButtonsWidth();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float text_h = ImGui::CalcTextSize(e.c_str(), e.c_str() + e.size(), false, wrap).y;
  m_view.shown = true;
  m_view.text_height = text_h;
  m_view.lines = static_cast<int>(std::lround(text_h / ImGui::GetTextLineHeight()));
  m_view.scrolls = m_view.lines > kErrorStripLines;
  const float shown_h = std::min(text_h, line * kErrorStripLines);
  m_view.strip_height = shown_h + 2 * st.WindowPadding.y;
  return m_view.strip_height + st.ItemSpacing.y;
}

void ErrorStrip::Draw(const std::string& error, float height) {
  if (height <= 0) return;
  const std::string e = Shown(error);
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0.22f, 0.07f, 0.07f, 1.0f));
  ImGui::BeginChild("error_strip", ImVec2(0, m_view.strip_height), true);
  const float top = ImGui::GetCursorPosY();
  ErrorTextWrapped(e, StripButtonsWidth());
  ImGui::SetCursorPos(ImVec2(ImGui::GetWindowContentRegionMax().x - StripButtonsWidth() +
                                 ImGui::GetStyle().ItemSpacing.x,
                             top + ImGui::GetScrollY()));
  if (ImGui::SmallButton(kCopyLabel)) ImGui::SetClipboardText(e.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton(kDismissLabel)) m_dismissed = e;
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

nlohmann::json ErrorStrip::StateJson(const std::string& error) const {
  return {{"shown", m_view.shown}, {"text", Shown(error)}, {"lines", m_view.lines},
          {"text_height", m_view.text_height}, {"strip_height", m_view.strip_height},
          {"scrolls", m_view.scrolls}};
}

}  // namespace stof::app
