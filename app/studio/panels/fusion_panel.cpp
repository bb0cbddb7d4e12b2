// DrawFusionPanel and its parts the Learn tab shows (fusion_panel.h). Everything shown is
// precomputed by LayerWorkbench when the layer, mask or scheme changes; the panel only lays it
// out and reports clicks.
#include "app/studio/panels/fusion_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "app/studio/widgets/elided_text.h"
#include "app/studio/panels/op_chain.h"
#include "app/studio/widgets/error_text.h"
#include "app/studio/widgets/plots.h"
#include "engine/fusion/scheme_hex.h"

namespace stof::app {

namespace {

void DrawSegmentTable(std::span<const SegmentView> views) {
  // Narrower than its content (the Learn tab at 1280 x 720) the table scrolls sideways
  // rather than cutting its cells; its height shows every row.
  const float narrow = 820.0f;
  const bool scroll = ImGui::GetContentRegionAvail().x < narrow;
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
      (scroll ? ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit : ImGuiTableFlags_SizingStretchProp);
  const float rows = static_cast<float>(views.size() + 2);  // the header, the segments, the sum
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1;
  const ImVec2 size(0, scroll ? rows * row_h + ImGui::GetStyle().ScrollbarSize + 4 : 0);
  if (!ImGui::BeginTable("segments", 6, flags, size)) return;
  ImGui::TableSetupColumn("ops");
  ImGui::TableSetupColumn("template");
  ImGui::TableSetupColumn("parameters", scroll ? ImGuiTableColumnFlags_WidthFixed : ImGuiTableColumnFlags_WidthStretch,
                          scroll ? 0.0f : 2.0f);
  ImGui::TableSetupColumn("predicted us");
  ImGui::TableSetupColumn("predicted DRAM");
  ImGui::TableSetupColumn("measured us");
  ImGui::TableHeadersRow();
  double pred = 0, meas = 0;
  bool all_measured = !views.empty();
  for (const SegmentView& v : views) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(engine::SegmentLabel(v.segment).c_str());
    ImGui::TableNextColumn();
    if (v.tmpl.empty()) {
      ImGui::TextDisabled("op by op");
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.why.c_str());
    } else if (scroll) {  // the table scrolls: whole text, columns fit it
      ImGui::Text("%s (%s)", v.tmpl.c_str(), v.mix.c_str());
    } else {
      ElidedText(v.tmpl + " (" + v.mix + ")");  // a stretched column narrower than it: ".."
    }
    ImGui::TableNextColumn();
    if (scroll) ImGui::TextUnformatted(v.choice.empty() ? "default" : v.choice.c_str());
    else ElidedText(v.choice.empty() ? "default" : v.choice);
    ImGui::TableNextColumn();
    if (v.predict_error.empty()) ImGui::Text("%.1f", v.predicted_us);
    else ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "error");
    if (!v.predict_error.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.predict_error.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(plots::FormatSI(v.predicted_bytes, "B").c_str());
    ImGui::TableNextColumn();
    if (v.measured_us) ImGui::Text("%.1f", *v.measured_us);
    else ImGui::TextDisabled("-");
    pred += v.predicted_us;
    if (v.measured_us) meas += *v.measured_us;
    else all_measured = false;
  }
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted("layer");
  ImGui::TableNextColumn();
  ImGui::TableNextColumn();
  ImGui::TableNextColumn();
  ImGui::Text("%.1f", pred);
  ImGui::TableNextColumn();
  ImGui::TableNextColumn();
  if (all_measured) ImGui::Text("%.1f", meas);
  else ImGui::TextDisabled("-");
  ImGui::EndTable();
}

const char* RungLetters(engine::MhaVariant v) {
  using engine::MhaVariant;
  switch (v) {
    case MhaVariant::kUnfused: return "U";
    case MhaVariant::kDecomposed: return "SD";
    case MhaVariant::kRecomposed: return "SDF";
    case MhaVariant::kFused: return "F";
  }
  return "?";
}

// Returns true when "Measure on the GPU" was pressed.
bool DrawLadder(const FusionView& view) {
  const std::span<const engine::LadderRung> rungs = view.ladder;
  ImGui::TextUnformatted("Fusion ladder of the attention block");
  ImGui::SameLine();
  ImGui::BeginDisabled(!view.can_measure_ladder);
  const bool measure = ImGui::SmallButton("Measure on the GPU");
  ImGui::EndDisabled();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", view.ladder_note.c_str());
  ImGui::PopStyleColor();
  if (rungs.empty()) return measure;
  // The paper's letters name the bars (full names would be cut to "decomp.." twice in a
  // narrow view); the key below spells them out.
  std::vector<std::string> cats;
  plots::BarGroup us{"latency (us)", {}, {}, 0}, mb{"DRAM (MB)", {}, {}, 0};
  int measured = 0;
  for (const engine::LadderRung& r : rungs) {
    cats.push_back(RungLetters(r.variant));
    us.values.push_back(r.us);
    mb.values.push_back(r.dram_bytes > 0 ? r.dram_bytes / 1e6 : std::nan(""));
    measured += r.measured ? 1 : 0;
  }
  // Tag each bar only when measured and predicted bars stand side by side; otherwise the
  // note above says which they all are.
  if (measured > 0 && measured < static_cast<int>(rungs.size())) {
    for (const engine::LadderRung& r : rungs) {
      us.tags.push_back(r.measured ? "measured" : "predicted");
      mb.tags.push_back(r.measured ? "measured" : "predicted");
    }
  }
  mb.color = plots::SeriesColor(1);
  const float w = ImGui::GetContentRegionAvail().x * 0.5f - 4.0f;
  ImGui::BeginChild("ladder_us", ImVec2(w, 230), false);
  plots::GroupedBars("ladder_latency", cats, {us}, plots::Axis{"latency (us)"}, 210);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("ladder_mb", ImVec2(0, 230), false);
  plots::GroupedBars("ladder_bytes", cats, {mb}, plots::Axis{"DRAM bytes (MB)"}, 210);
  ImGui::EndChild();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("U unfused, SD decomposed softmax, SDF decomposed + fused, F fully fused");
  ImGui::PopStyleColor();
  return measure;
}

}  // namespace

FusionActions DrawFusionLadder(const FusionView& view) {
  FusionActions actions;
  actions.measure_ladder = DrawLadder(view);
  return actions;
}

void DrawFusionSegments(const FusionView& view) { DrawSegmentTable(view.segments); }

FusionActions DrawFusionPanel(const FusionView& view) {
  FusionActions actions;
  actions.layer = DrawLayerChooser(view.layer);
  if (!view.graph || !view.scheme) return actions;
  const engine::FusionScheme& scheme = *view.scheme;
  ImGui::Separator();
  auto hex = engine::CodeToHex(scheme.Code());
  ImGui::Text("scheme %s  (hex %s)  from: %s", scheme.Code().c_str(), hex.IsOk() ? hex->c_str() : "?",
              view.scheme_source.c_str());
  ImGui::SameLine();
  actions.reset_scheme = ImGui::SmallButton("Default");
  ImGui::TextDisabled("Click between two ops to split or join segments. Blue: compute-intensive "
                      "(CI), orange: memory-intensive (MI).");
  actions.toggle_boundary = DrawOpChain(*view.graph, scheme, view.segments);
  if (!view.message.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.55f, 0.4f, 1.0f), "not allowed: %s", view.message.c_str());
  DrawSegmentTable(view.segments);
  // What runs for the attention (the same answer as the Kernel selection tab and `stof select`).
  if (const auto& run = view.run) {
    ImGui::TextWrapped("Attention runs: %s", engine::MhaRunChoiceText(*run).c_str());
    if (ImGui::IsItemHovered() && !run->note.empty()) ImGui::SetTooltip("%s", run->note.c_str());
  } else if (!view.run_error.empty()) {
    ErrorTextWrapped("attention: what runs is not known: " + view.run_error);
  }
  ImGui::Spacing();
  actions.measure_ladder = DrawLadder(view);
  return actions;
}

}  // namespace stof::app
