// DrawSummaryPanel (summary_panel.h): text and two small controls; all figures come
// precomputed from StudioState.
#include "app/studio/panels/summary_panel.h"

#include <imgui.h>

#include <cmath>

namespace stof::app {

namespace {
ImVec4 ToVec4(uint32_t c) {
  return ImVec4((c & 255) / 255.0f, ((c >> 8) & 255) / 255.0f, ((c >> 16) & 255) / 255.0f, 1.0f);
}

void Legend(uint32_t color, const char* label, long long count) {
  ImGui::ColorButton(label, ToVec4(color), ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
  ImGui::SameLine();
  ImGui::Text("%-6s %lld", label, count);
}
}  // namespace

bool DrawSummaryPanel(const SummaryInput& in) {
  const StudioState& s = in.state;
  bool changed = false;
  ImGui::TextUnformatted("Mask");
  ImGui::Separator();
  ImGui::Text("L          %lld", static_cast<long long>(s.mask.Rows()));
  ImGui::Text("nnz        %lld", static_cast<long long>(s.mask.Count()));
  ImGui::Text("density    %.2f %%", 100.0 * s.mask.Density());
  ImGui::Text("sparsity   %.2f %%", 100.0 * s.mask.Sparsity());
  ImGui::Spacing();

  ImGui::TextUnformatted("Block layout (BSR)");
  ImGui::Separator();
  const char* sizes[] = {"16 x 16", "32 x 32", "64 x 64", "128 x 128"};
  ImGui::SetNextItemWidth(140);
  if (ImGui::Combo("block", in.block_choice, sizes, 4)) changed = true;
  ImGui::SameLine();
  ImGui::Checkbox("overlay", in.show_blocks);
  const engine::LayoutStats& st = s.stats;
  Legend(kColorFull, "full", static_cast<long long>(st.full_blocks));
  Legend(kColorPart, "part", static_cast<long long>(st.part_blocks));
  Legend(kColorMasked, "empty", static_cast<long long>(st.empty_blocks));
  ImGui::Text("valid      %.2f %% of blocks", 100.0 * st.valid_block_ratio);
  ImGui::Text("index      %lld B (+%lld B bitmaps)", static_cast<long long>(st.index_bytes),
              static_cast<long long>(st.bitmap_bytes));
  ImGui::Text("wasted     %.2f %% of block FLOPs", 100.0 * st.wasted_fraction);
  ImGui::Spacing();

  ImGui::TextUnformatted("Kernel selection (STOF Eq. 1, Eq. 2)");
  ImGui::Separator();
  const engine::Workload& w = s.workload;
  ImGui::Text("workload   B %lld, H %lld, d %lld", static_cast<long long>(w.batch),
              static_cast<long long>(w.heads), static_cast<long long>(w.head_dim));
  ImGui::Text("device     %s", s.device.name.c_str());
  const engine::Eq1Result& e1 = s.selection.eq1;
  ImGui::Text("Eq. 1      %lld/%lld^2 - 1.2/(log2 %lld)^2", static_cast<long long>(e1.valid_blocks),
              static_cast<long long>(e1.n), static_cast<long long>(e1.n));
  ImGui::Text("threshold  %.4f -> %s", e1.threshold, engine::MhaKernelName(e1.kernel));
  if (s.selection.eq2.best >= 0) {
    const engine::Eq2Candidate& b = s.selection.eq2.candidates[s.selection.eq2.best];
    ImGui::Text("Eq. 2      BM %lld, BN %lld, %lld warps", static_cast<long long>(b.block_m),
                static_cast<long long>(b.block_n), static_cast<long long>(b.num_warps));
    ImGui::Text("           OCC %.3f, score %.2f", b.occ, b.score);
  }
  ImGui::Text("kernel     %s", engine::MhaKernelName(s.selection.kernel));
  return changed;
}

}  // namespace stof::app
