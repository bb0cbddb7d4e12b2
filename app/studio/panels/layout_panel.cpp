// DrawLayoutPanel (layout_panel.h). Everything shown comes precomputed from the last
// engine::MaskAnalysis; the panel only formats it.
#include "app/studio/panels/layout_panel.h"

#include <imgui.h>

#include <cstdio>

#include "app/studio/canvas_key.h"
#include "app/studio/widgets/bar_chart.h"
#include "app/studio/widgets/texture.h"

namespace stof::app {

namespace {

constexpr int64_t kSizes[] = {16, 32, 64, 128, 256};

std::string Flops(double f) {
  char buf[32];
  if (f >= 1e12) std::snprintf(buf, sizeof buf, "%.2f TFLOP", f / 1e12);
  else if (f >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GFLOP", f / 1e9);
  else std::snprintf(buf, sizeof buf, "%.2f MFLOP", f / 1e6);
  return buf;
}

std::string Bytes(int64_t b) {
  char buf[32];
  if (b >= (1 << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

bool BlockCombo(const char* label, int64_t* value) {
  bool changed = false;
  ImGui::SetNextItemWidth(90);
  if (ImGui::BeginCombo(label, std::to_string(*value).c_str())) {
    for (int64_t s : kSizes) {
      if (ImGui::Selectable(std::to_string(s).c_str(), s == *value)) {
        *value = s;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

void StatsTable(const engine::MaskAnalysis& a) {
  const char* rows[] = {"block", "grid", "full", "part", "empty", "valid blocks",
                        "index + bitmaps", "block-kernel FLOPs", "FLOPs on valid cells", "wasted work"};
  if (!ImGui::BeginTable("stats", 3, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_RowBg)) return;
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 150);
  ImGui::TableSetupColumn("this layout");
  ImGui::TableSetupColumn("FlexAttention 128 x 128");
  ImGui::TableHeadersRow();
  // Row-major output: one row per figure, both layouts side by side.
  for (int r = 0; r < 10; ++r) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(rows[r]);
    for (int k = 0; k < 2; ++k) {
      const engine::LayoutStats& s = k == 0 ? a.stats : a.flex_stats;
      const engine::LayoutWork& w = k == 0 ? a.work : a.flex_work;
      const double total = static_cast<double>(s.block_rows * s.block_cols);
      ImGui::TableNextColumn();
      switch (r) {
        case 0: ImGui::Text("%lld x %lld", static_cast<long long>(s.block_m), static_cast<long long>(s.block_n)); break;
        case 1: ImGui::Text("%lld x %lld blocks", static_cast<long long>(s.block_rows), static_cast<long long>(s.block_cols)); break;
        case 2: ImGui::Text("%lld (%.1f %%)", static_cast<long long>(s.full_blocks), 100.0 * s.full_blocks / total); break;
        case 3: ImGui::Text("%lld (%.1f %%)", static_cast<long long>(s.part_blocks), 100.0 * s.part_blocks / total); break;
        case 4: ImGui::Text("%lld (%.1f %%)", static_cast<long long>(s.empty_blocks), 100.0 * s.empty_blocks / total); break;
        case 5: ImGui::Text("%.2f %%", 100.0 * s.valid_block_ratio); break;
        case 6: ImGui::Text("%s + %s", Bytes(s.index_bytes).c_str(), Bytes(s.bitmap_bytes).c_str()); break;
        case 7: ImGui::TextUnformatted(Flops(w.block_kernel_flops).c_str()); break;
        case 8: ImGui::TextUnformatted(Flops(w.valid_flops).c_str()); break;
        case 9: ImGui::Text("%.2f %%", 100.0 * w.wasted_fraction); break;
      }
    }
  }
  ImGui::EndTable();
}

}  // namespace

LayoutActions DrawLayoutPanel(const LayoutView& view) {
  LayoutActions actions;
  // bm, bn and the overlay hold the user's choice from here on, as the studio will.
  int64_t bm = view.block_m, bn = view.block_n;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Block");
  ImGui::SameLine();
  bool changed = BlockCombo("BM (rows)", &bm);
  ImGui::SameLine();
  changed |= BlockCombo("BN (cols)", &bn);
  if (changed) actions.block = {bm, bn};
  int ov = static_cast<int>(view.overlay);
  ImGui::RadioButton("mask only", &ov, 0);
  ImGui::SameLine();
  ImGui::RadioButton("blocks over mask", &ov, 1);
  ImGui::SameLine();
  ImGui::RadioButton("blocks only", &ov, 2);
  if (static_cast<Overlay>(ov) != view.overlay) actions.overlay = static_cast<Overlay>(ov);
  plots::KeyRow(CanvasKey(static_cast<Overlay>(ov)));  // the canvas' own colours
  ImGui::TextDisabled("(hover a block for its CSR place; click in Inspect to zoom)");

  const engine::MaskAnalysis* a = view.analysis;
  if (!a) {
    ImGui::TextDisabled("computing the layout...");
    return actions;
  }
  ImGui::Spacing();
  ImGui::Text("element density %.2f %%  (nnz %lld)", 100.0 * a->stats.density, static_cast<long long>(a->stats.nnz));
  ImGui::Text("workload B %lld, H %lld, d %lld: FLOPs = 4 d B H x cells", static_cast<long long>(view.workload.batch),
              static_cast<long long>(view.workload.heads), static_cast<long long>(view.workload.head_dim));
  StatsTable(*a);

  ImGui::Spacing();
  ImGui::Text("Valid blocks per block row (load balance: min %lld, max %lld)",
              static_cast<long long>(a->stats.min_blocks_per_row), static_cast<long long>(a->stats.max_blocks_per_row));
  DrawBarChart("row_valid", a->row_valid, 90.0f, kColorFull, "block row", "valid blocks");

  ImGui::Spacing();
  ImGui::TextUnformatted("Block sizes (click a row to use it)");
  if (a->table.empty()) {
    ImGui::TextDisabled("table not computed");
    return actions;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("sizes", 7, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"BM x BN", "full", "part", "empty", "valid", "index B", "wasted"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const engine::BlockSizeRow& r : a->table) {
      const engine::LayoutStats& s = r.stats;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      char label[32];
      std::snprintf(label, sizeof label, "%lld x %lld", static_cast<long long>(s.block_m), static_cast<long long>(s.block_n));
      const bool current = s.block_m == bm && s.block_n == bn;
      if (ImGui::Selectable(label, current, ImGuiSelectableFlags_SpanAllColumns))
        actions.block = {s.block_m, s.block_n};
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.full_blocks));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.part_blocks));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.empty_blocks));
      ImGui::TableNextColumn();
      ImGui::Text("%.1f %%", 100.0 * s.valid_block_ratio);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(Bytes(s.index_bytes).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.1f %%", 100.0 * r.work.wasted_fraction);
    }
    ImGui::EndTable();
  }
  return actions;
}

}  // namespace stof::app
