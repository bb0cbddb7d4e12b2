// DrawMaskPanel (mask_panel.h). Per frame: two textured quads, block grid lines when blocks
// are at least 6 px wide, and a hover tooltip - O(grid lines) work, nothing per cell.
#include "app/studio/panels/mask_panel.h"

#include <imgui.h>

#include <algorithm>

namespace stof::app {

void DrawMaskPanel(const StudioState& state, const Texture& mask, const Texture& blocks,
                   bool show_blocks) {
  const engine::Mask& m = state.mask;
  ImGui::Text("Mask  %s", engine::Describe(state.spec).c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = std::max(64.0f, std::min(avail.x, avail.y));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 p1(p0.x + side, p0.y + side);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (mask.Valid()) dl->AddImage(mask.Id(), p0, p1);
  const engine::BlockLayout& layout = state.layout;
  if (show_blocks && blocks.Valid()) {
    const float bw = side * static_cast<float>(layout.BlockN()) / static_cast<float>(m.Cols());
    const float bh = side * static_cast<float>(layout.BlockM()) / static_cast<float>(m.Rows());
    // The texture has one texel per block; blocks past L are clipped to the mask's square.
    const ImVec2 q1(p0.x + bw * layout.BlockCols(), p0.y + bh * layout.BlockRows());
    dl->PushClipRect(p0, p1, true);
    dl->AddImage(blocks.Id(), p0, q1);
    if (bw >= 6.0f) {
      const ImU32 grid = IM_COL32(90, 90, 110, 120);
      for (int64_t c = 1; c < layout.BlockCols(); ++c)
        dl->AddLine(ImVec2(p0.x + c * bw, p0.y), ImVec2(p0.x + c * bw, p1.y), grid);
      for (int64_t r = 1; r < layout.BlockRows(); ++r)
        dl->AddLine(ImVec2(p0.x, p0.y + r * bh), ImVec2(p1.x, p0.y + r * bh), grid);
    }
    dl->PopClipRect();
  }
  dl->AddRect(p0, p1, IM_COL32(120, 120, 140, 255));
  ImGui::InvisibleButton("mask_canvas", ImVec2(side, side));
  if (ImGui::IsItemHovered() && !m.Empty()) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const int64_t col = std::clamp<int64_t>(static_cast<int64_t>((mp.x - p0.x) / side * m.Cols()), 0, m.Cols() - 1);
    const int64_t row = std::clamp<int64_t>(static_cast<int64_t>((mp.y - p0.y) / side * m.Rows()), 0, m.Rows() - 1);
    const int64_t br = row / layout.BlockM(), bc = col / layout.BlockN();
    ImGui::BeginTooltip();
    ImGui::Text("cell (%lld, %lld): %s", static_cast<long long>(row), static_cast<long long>(col),
                m.Get(row, col) ? "attend" : "masked");
    ImGui::Text("block (%lld, %lld): %s, %lld of %lld cells", static_cast<long long>(br),
                static_cast<long long>(bc), engine::BlockClassName(layout.ClassAt(br, bc)),
                static_cast<long long>(layout.PopcountAt(br, bc)),
                static_cast<long long>(layout.BlockM() * layout.BlockN()));
    ImGui::EndTooltip();
  }
}

}  // namespace stof::app
