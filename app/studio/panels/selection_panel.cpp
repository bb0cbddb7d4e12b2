// DrawSelectionPanel (selection_panel.h). The Eq. 2 table's sort order (SelectionPanelUi) is
// recomputed only when the user changes the sort or a new analysis arrives, not per frame.
#include "app/studio/panels/selection_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "app/common/run_choice.h"
#include "app/studio/widgets/error_text.h"

namespace stof::app {

namespace {

// Grey text wrapped to the tab's width (the formulas are wider than 1280 x 720's tab).
void DisabledWrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

double Key(const engine::Eq2Candidate& c, int column) {
  switch (column) {
    case 0: return static_cast<double>(c.block_m);
    case 1: return static_cast<double>(c.block_n);
    case 2: return static_cast<double>(c.num_warps);
    case 3: return static_cast<double>(c.req_smem_bytes);
    case 4: return static_cast<double>(c.blocks_per_sm);
    case 5: return c.occ;
    case 6: return c.score;
    default: return c.feasible ? 1.0 : 0.0;
  }
}

void Eq2Table(const engine::KernelSelection& sel, uint64_t serial, SelectionPanelUi& ui) {
  std::vector<int>& order = ui.eq2_order;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("eq2", 8, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("BM");
  ImGui::TableSetupColumn("BN");
  ImGui::TableSetupColumn("warps");
  ImGui::TableSetupColumn("req_SMEM (B)");
  ImGui::TableSetupColumn("blocks/SM");
  ImGui::TableSetupColumn("OCC");
  ImGui::TableSetupColumn("score", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("feasible");
  ImGui::TableHeadersRow();
  const auto& cands = sel.eq2.candidates;
  ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
  if (specs && (specs->SpecsDirty || ui.eq2_sorted_for != serial || order.size() != cands.size())) {
    order.resize(cands.size());
    std::iota(order.begin(), order.end(), 0);
    if (specs->SpecsCount > 0) {
      const ImGuiTableColumnSortSpecs& s = specs->Specs[0];
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const double ka = Key(cands[static_cast<size_t>(a)], s.ColumnIndex);
        const double kb = Key(cands[static_cast<size_t>(b)], s.ColumnIndex);
        return s.SortDirection == ImGuiSortDirection_Ascending ? ka < kb : ka > kb;
      });
    }
    specs->SpecsDirty = false;
    ui.eq2_sorted_for = serial;
  }
  for (int i : order) {
    const engine::Eq2Candidate& c = cands[static_cast<size_t>(i)];
    ImGui::TableNextRow();
    if (i == sel.eq2.best)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, IM_COL32(0, 114, 178, 140));
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(c.block_m));
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(c.block_n));
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(c.num_warps));
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(c.req_smem_bytes));
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(c.blocks_per_sm));
    ImGui::TableNextColumn();
    ImGui::Text("%.3f", c.occ);
    ImGui::TableNextColumn();
    ImGui::Text("%.2f", c.score);
    ImGui::TableNextColumn();
    if (c.feasible) {
      ImGui::TextUnformatted(i == sel.eq2.best ? "yes (best)" : "yes");
    } else {
      ImGui::TextDisabled("no");
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", c.why_infeasible.c_str());
    }
  }
  ImGui::EndTable();
}

// Batch, heads, d, key/value heads and query rows in fields on one line where they fit (each
// 140 px and its label), else one per line; the edited workload when one changed. Key/value
// heads 0 means as many as heads, query rows 0 all of the mask's (a square call); other values
// are a grouped-query call or a KV cache's last rows, which run on the Hopper kernel.
std::optional<engine::Workload> WorkloadFields(const engine::Workload& workload) {
  engine::Workload w = workload;
  bool changed = false;
  const int64_t step = 1;
  bool first = true;
  for (auto [label, field] :
       {std::pair{"batch", &w.batch}, std::pair{"heads", &w.heads},
        std::pair{"head dim d", &w.head_dim}, std::pair{"kv heads", &w.kv_heads},
        std::pair{"query rows", &w.q_len}}) {
    const float width = 140 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
    if (!first) {
      ImGui::SameLine();
      if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
    }
    first = false;
    ImGui::SetNextItemWidth(140);
    changed |= ImGui::InputScalar(label, ImGuiDataType_S64, field, &step, nullptr, "%lld");
  }
  DisabledWrapped("kv heads 0: as many as heads; query rows 0: all L (a KV cache's step: its "
                  "last rows over every key)");
  if (!changed) return std::nullopt;
  return w;
}

// The device combo and the chosen device's figures (this frame's pick included: the studio
// applies it after the panel); the index picked, if any.
std::optional<int> DeviceChooser(const std::vector<engine::DeviceSpec>& devices, int index) {
  std::optional<int> picked;
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo("device", devices[static_cast<size_t>(index)].name.c_str())) {
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string label = devices[i].name + (devices[i].source == "queried" ? " (this GPU)" : "");
      if (ImGui::Selectable(label.c_str(), static_cast<int>(i) == index)) picked = static_cast<int>(i);
    }
    ImGui::EndCombo();
  }
  const engine::DeviceSpec& d = devices[static_cast<size_t>(picked.value_or(index))];
  char spec[160];
  std::snprintf(spec, sizeof spec, "%d SMs, %lld KiB SMEM/SM, %lld KiB/block, %d warps/SM, sm_%d%d (%s)", d.sm_count,
                static_cast<long long>(d.smem_per_sm_bytes / 1024), static_cast<long long>(d.smem_per_block_bytes / 1024),
                d.max_warps_per_sm, d.cc_major, d.cc_minor, d.source.c_str());
  DisabledWrapped(spec);
  return picked;
}

// STOF Eq. 1 with its inputs written out.
void DrawEq1(const engine::Eq1Result& e1, int64_t seq_len) {
  ImGui::Spacing();
  ImGui::TextUnformatted("STOF Eq. 1: row-wise or block-wise");
  ImGui::Separator();
  ImGui::TextWrapped("threshold = valid / n^2 - tau / (log2 n)^2,  n = ceil(L / 16),  tau = 1.2");
  ImGui::TextWrapped("n = ceil(%lld / 16) = %lld,  valid 16x16 blocks = %lld", static_cast<long long>(seq_len),
              static_cast<long long>(e1.n), static_cast<long long>(e1.valid_blocks));
  ImGui::TextWrapped("threshold = %lld / %lld^2 - 1.2 / (log2 %lld)^2 = %.6f - %.6f = %.6f",
              static_cast<long long>(e1.valid_blocks), static_cast<long long>(e1.n), static_cast<long long>(e1.n),
              e1.valid_ratio, e1.penalty, e1.threshold);
  ImGui::Text("threshold %s 0  ->  %s kernel", e1.threshold < 0 ? "<" : ">=", engine::MhaKernelName(e1.kernel));
}

// What the engine runs on this device (the kernels' rules on top of Eq. 1 / Eq. 2), then
// Eq. 2's own pick, which the engine restricts to the kernels' supported set.
void DrawChosenKernel(const engine::MaskAnalysis& a) {
  const engine::KernelSelection& s = a.selection;
  ImGui::Spacing();
  ImGui::TextUnformatted("Chosen kernel");
  ImGui::Separator();
  if (a.has_run_choice) {
    ImGui::TextWrapped("engine runs:  %s", engine::MhaRunChoiceText(a.run_choice).c_str());
    if (!a.run_choice.note.empty()) NoteTextWrapped(a.run_choice.note);
  } else {
    NoteTextWrapped("engine runs: not known here (" + a.run_choice_why_not + ")");
  }
  if (s.kernel == engine::MhaKernel::kBlockWise || s.block_m > 0)
    ImGui::TextWrapped("Eq. 2's best:  %s,  BM %lld, BN %lld, %lld warps", engine::MhaKernelName(s.kernel),
                static_cast<long long>(s.block_m), static_cast<long long>(s.block_n), static_cast<long long>(s.num_warps));
  else
    ImGui::Text("Eq. 1:  %s", engine::MhaKernelName(s.kernel));
}

}  // namespace

SelectionActions DrawSelectionPanel(const SelectionView& view, SelectionPanelUi& ui) {
  SelectionActions actions;
  ImGui::TextUnformatted("Workload and device");
  ImGui::Separator();
  actions.workload = WorkloadFields(view.workload);
  actions.device = DeviceChooser(*view.devices, view.device_index);

  const engine::MaskAnalysis* a = view.analysis;
  if (!a) {
    ImGui::TextDisabled("computing...");
    return actions;
  }
  if (!a->has_selection) {
    ErrorTextWrapped(a->selection_error);
    return actions;
  }
  DrawEq1(a->selection.eq1, view.workload.seq_len);
  DrawChosenKernel(*a);
  ImGui::Spacing();
  ImGui::TextWrapped("STOF Eq. 2: every (BM, BN, num_warps); click a header to sort");
  ImGui::Separator();
  DisabledWrapped("req_SMEM = 2 ((2 BM + BN)(d + 16) + BM (BN + 16)) bytes;  OCC = warps min(blocks, MAX_WARP / "
                  "warps) / MAX_WARP");
  DisabledWrapped("score = OCC sqrt(SM_NUM / (BM BN) * (L H B) / BM)");
  Eq2Table(a->selection, view.analysis_serial, ui);
  return actions;
}

}  // namespace stof::app
