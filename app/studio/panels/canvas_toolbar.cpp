// DrawCanvasToolbar (canvas_toolbar.h): one row of items that wraps to the next line where the
// canvas is too narrow for the next one.
#include "app/studio/panels/canvas_toolbar.h"

#include <imgui.h>

#include <algorithm>

namespace stof::app {

namespace {

// The next toolbar item on this line when `width` pixels are left for it, else on the next:
// the toolbar wraps in a narrow canvas instead of running past its edge.
void Flow(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}
float CheckWidth(const char* label) {  // radio buttons and checkboxes
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

}  // namespace

std::optional<Overlay> DrawCanvasToolbar(const engine::Mask& mask, Overlay overlay, EditSettings& e,
                                         CanvasView& canvas) {
  std::optional<Overlay> picked;
  const char* tools[] = {"Inspect", "Brush", "Line", "Rect", "Band"};
  for (int i = 0; i < 5; ++i) {
    if (i) Flow(CheckWidth(tools[i]));
    if (ImGui::RadioButton(tools[i], static_cast<int>(e.tool) == i)) e.tool = static_cast<Tool>(i);
  }
  Flow(CheckWidth("Erase"));
  ImGui::Checkbox("Erase", &e.erase);
  Flow(CheckWidth("Symmetric"));
  ImGui::Checkbox("Symmetric", &e.symmetric);
  Flow(80 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("width").x);
  ImGui::SetNextItemWidth(80);
  const int most = static_cast<int>(std::max<int64_t>(1, mask.Rows()));
  if (e.tool == Tool::kBand)
    ImGui::SliderInt("width", &e.band_width, 1, std::min(most, 1024), "%d", ImGuiSliderFlags_Logarithmic);
  else
    ImGui::SliderInt("size", &e.brush, 1, std::min(most, 256), "%d", ImGuiSliderFlags_Logarithmic);
  Flow(135);
  ImGui::SetNextItemWidth(135);
  const char* overlays[] = {"Mask", "Blocks + mask", "Blocks"};
  int ov = static_cast<int>(overlay);
  if (ImGui::Combo("##overlay", &ov, overlays, 3)) picked = static_cast<Overlay>(ov);
  Flow(ImGui::CalcTextSize("Fit").x + 2 * ImGui::GetStyle().FramePadding.x);
  if (ImGui::Button("Fit")) canvas = CanvasView::Fitting(mask);
  return picked;
}

}  // namespace stof::app
