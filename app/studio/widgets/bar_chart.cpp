// DrawBarChart (bar_chart.h). Bars carry their values where the text fits the bar.
#include "app/studio/widgets/bar_chart.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace stof::app {

void DrawBarChart(const char* id, const std::vector<int32_t>& values, float height,
                  unsigned int color, const char* index_label, const char* label) {
  const float axis = 40.0f;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float width = std::max(100.0f, ImGui::GetContentRegionAvail().x);
  ImGui::InvisibleButton(id, ImVec2(width, height));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 a(p0.x + axis, p0.y), b(p0.x + width, p0.y + height);
  dl->AddRectFilled(a, b, IM_COL32(30, 32, 40, 255));
  if (values.empty()) return;
  const int32_t top = std::max<int32_t>(1, *std::max_element(values.begin(), values.end()));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d", top);
  dl->AddText(ImVec2(p0.x, p0.y), IM_COL32(200, 200, 210, 255), buf);
  dl->AddText(ImVec2(p0.x, b.y - ImGui::GetTextLineHeight()), IM_COL32(200, 200, 210, 255), "0");
  const int n = static_cast<int>(values.size());
  const float plot_w = b.x - a.x;
  const int bars = std::min(n, std::max(1, static_cast<int>(plot_w)));
  const float bar_w = plot_w / static_cast<float>(bars);
  for (int i = 0; i < bars; ++i) {
    const int v0 = static_cast<int>(static_cast<int64_t>(i) * n / bars);
    const int v1 = std::max(v0 + 1, static_cast<int>(static_cast<int64_t>(i + 1) * n / bars));
    const int32_t v = *std::max_element(values.begin() + v0, values.begin() + v1);
    const float y = b.y - (b.y - a.y) * static_cast<float>(v) / static_cast<float>(top);
    const float x0 = a.x + bar_w * static_cast<float>(i);
    dl->AddRectFilled(ImVec2(x0 + (bar_w > 3 ? 1.0f : 0.0f), y), ImVec2(x0 + bar_w, b.y), color);
    // Each bar's value where it fits: inside the top of a tall bar, else just above it.
    if (bars == n) {
      std::snprintf(buf, sizeof buf, "%d", v);
      const ImVec2 t = ImGui::CalcTextSize(buf);
      if (t.x + 2 <= bar_w) {
        const bool inside = b.y - y >= t.y + 2;
        dl->AddText(ImVec2(x0 + (bar_w - t.x) * 0.5f, inside ? y + 1 : y - t.y - 1),
                    inside ? IM_COL32(255, 255, 255, 255) : IM_COL32(200, 200, 210, 255), buf);
      }
    }
  }
  if (ImGui::IsItemHovered()) {
    const float mx = ImGui::GetIO().MousePos.x;
    if (mx >= a.x) {
      const int i = std::clamp(static_cast<int>((mx - a.x) / plot_w * static_cast<float>(n)), 0, n - 1);
      ImGui::SetTooltip("%s %d: %d %s", index_label, i, values[static_cast<size_t>(i)], label);
    }
  }
}

}  // namespace stof::app
