// DrawFusionPanel and DrawLayerChooser (fusion_panel.h). Everything shown is precomputed by
// LayerWorkbench when the layer, mask or scheme changes; the panel only lays it out.
#include "app/studio/panels/fusion_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/studio/layer_workbench.h"
#include "app/studio/widgets/elided_text.h"
#include "app/studio/widgets/error_text.h"
#include "app/studio/widgets/input_text.h"
#include "app/studio/widgets/plots.h"
#include "engine/fusion/scheme_edit.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/graph/model_config.h"

namespace stof::app {

namespace {

constexpr ImU32 kCiColor = IM_COL32(70, 120, 200, 255);   // compute-intensive: GEMMs
constexpr ImU32 kMiColor = IM_COL32(200, 130, 60, 255);   // memory-intensive: the rest
constexpr ImU32 kGroupColors[] = {IM_COL32(90, 200, 120, 70), IM_COL32(200, 90, 200, 70),
                                  IM_COL32(220, 210, 80, 70), IM_COL32(80, 200, 220, 70)};

std::string Dims(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

// The op chain: boxes in rows, segment groups behind them, clickable gaps between ops.
void DrawChain(LayerWorkbench& bench, const engine::OpGraph& g, const engine::FusionScheme& scheme) {
  const int n = static_cast<int>(g.ops.size());
  const float gap = 14.0f, box_h = 46.0f, label_h = ImGui::GetTextLineHeight() + 4.0f;
  // Every box holds its longest label ("BatchGEMM", "LayerNorm", "#14") and every group its
  // template name; the group rectangles reach 4 px past their boxes, inside the view.
  float widest = ImGui::CalcTextSize("op by op").x;
  for (const engine::Op& o : g.ops) widest = std::max(widest, ImGui::CalcTextSize(engine::OpKindName(o.kind)).x);
  const float min_w = std::max(64.0f, widest + 10.0f);
  const float avail = ImGui::GetContentRegionAvail().x - 8.0f;
  const int per_row = std::max(1, std::min(n, static_cast<int>((avail + gap) / (min_w + gap))));
  const float box_w = (avail - gap * static_cast<float>(per_row - 1)) / static_cast<float>(per_row);
  const int rows = (n + per_row - 1) / per_row;
  const ImVec2 origin(ImGui::GetCursorScreenPos().x + 4.0f, ImGui::GetCursorScreenPos().y);
  const float row_h = box_h + label_h + 16.0f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto box_at = [&](int op) {  // 1-based op -> top-left
    const int i = op - 1;
    return ImVec2(origin.x + static_cast<float>(i % per_row) * (box_w + gap),
                  origin.y + 6.0f + static_cast<float>(i / per_row) * row_h);
  };
  // Segment groups (one rectangle per row the segment spans) with the template below.
  const auto& segs = scheme.Segments();
  const auto& views = bench.Segments();
  for (size_t si = 0; si < segs.size(); ++si) {
    const engine::Segment& s = segs[si];
    const ImU32 col = kGroupColors[si % 4];
    int op = s.first;
    while (op <= s.last) {
      const int row_end = std::min(s.last, ((op - 1) / per_row + 1) * per_row);
      const ImVec2 a = box_at(op), b = box_at(row_end);
      dl->AddRectFilled(ImVec2(a.x - 4, a.y - 4), ImVec2(b.x + box_w + 4, b.y + box_h + label_h),
                        col, 6.0f);
      if (op == s.first) {
        const std::string t = si < views.size() && !views[si].tmpl.empty() ? views[si].tmpl
                                                                           : std::string("op by op");
        dl->PushClipRect(ImVec2(a.x - 4, a.y), ImVec2(b.x + box_w + 4, b.y + box_h + label_h), true);
        dl->AddText(ImVec2(a.x, a.y + box_h + 2), IM_COL32(230, 230, 235, 255), t.c_str());
        dl->PopClipRect();
      }
      op = row_end + 1;
    }
  }
  // Boxes.
  for (int op = 1; op <= n; ++op) {
    const engine::Op& o = g.ops[static_cast<size_t>(op - 1)];
    const ImVec2 p = box_at(op);
    const bool ci = o.Class() == engine::OpClass::kCI;
    dl->AddRectFilled(p, ImVec2(p.x + box_w, p.y + box_h), ci ? kCiColor : kMiColor, 4.0f);
    char top[16];
    std::snprintf(top, sizeof top, "#%d", op);
    dl->PushClipRect(p, ImVec2(p.x + box_w, p.y + box_h), true);
    dl->AddText(ImVec2(p.x + 4, p.y + 3), IM_COL32(255, 255, 255, 255), top);
    dl->AddText(ImVec2(p.x + 4, p.y + 3 + ImGui::GetTextLineHeight()), IM_COL32(255, 255, 255, 255),
                engine::OpKindName(o.kind));
    dl->PopClipRect();
    ImGui::SetCursorScreenPos(p);
    ImGui::PushID(op);
    ImGui::InvisibleButton("op", ImVec2(box_w, box_h));
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::Text("#%d %s (%s, %s)", op, engine::OpKindName(o.kind), o.name.c_str(), ci ? "CI" : "MI");
      for (const engine::TensorRef& in : o.inputs)
        ImGui::Text("in  %-8s %s  (%s)", in.name.c_str(), Dims(in.dims).c_str(),
                    engine::TensorSourceName(in.source));
      ImGui::Text("out %-8s %s", o.output.name.c_str(), Dims(o.output.dims).c_str());
      ImGui::Text("%.3f GFLOP, %s minimum", static_cast<double>(o.flops) / 1e9,
                  plots::FormatSI(static_cast<double>(o.bytes), "B").c_str());
      ImGui::EndTooltip();
    }
    // The gap after this op (same row only): click to split or join there.
    if (op < n && op % per_row != 0) {
      const ImVec2 gp(p.x + box_w, p.y);
      ImGui::SetCursorScreenPos(gp);
      ImGui::InvisibleButton("gap", ImVec2(gap, box_h));
      const bool boundary = engine::IsBoundary(scheme, op);
      const ImU32 mark = boundary ? IM_COL32(240, 240, 240, 255) : IM_COL32(240, 240, 240, 60);
      if (boundary)
        dl->AddLine(ImVec2(gp.x + gap / 2, gp.y - 2), ImVec2(gp.x + gap / 2, gp.y + box_h + 2), mark, 2.0f);
      if (ImGui::IsItemHovered()) {
        dl->AddRectFilled(gp, ImVec2(gp.x + gap, gp.y + box_h), IM_COL32(255, 255, 255, 50));
        ImGui::SetTooltip(boundary ? "join the segments at #%d | #%d" : "split the segment after #%d (#%d starts a new one)",
                          op, op + 1);
      }
      if (ImGui::IsItemClicked()) bench.ToggleBoundary(op);
    }
    ImGui::PopID();
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x - 4.0f, origin.y + 6.0f + static_cast<float>(rows) * row_h));
  ImGui::Dummy(ImVec2(avail + 8.0f, 1));
}

void DrawSegmentTable(const LayerWorkbench& bench) {
  const auto& views = bench.Segments();
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

void DrawLadder(LayerWorkbench& bench) {
  const auto& rungs = bench.Ladder();
  ImGui::TextUnformatted("Fusion ladder of the attention block");
  ImGui::SameLine();
  ImGui::BeginDisabled(!bench.HasGpu() || bench.Worker().Busy());
  if (ImGui::SmallButton("Measure on the GPU")) bench.MeasureLadder();
  ImGui::EndDisabled();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", bench.LadderNote().c_str());
  ImGui::PopStyleColor();
  if (rungs.empty()) return;
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
}

}  // namespace

void DrawFusionLadder(LayerWorkbench& bench) { DrawLadder(bench); }
void DrawFusionSegments(const LayerWorkbench& bench) { DrawSegmentTable(bench); }

void DrawLayerChooser(LayerWorkbench& bench) {
  LayerChoice& c = bench.Choice();
  ImGui::SetNextItemWidth(130);
  if (ImGui::BeginCombo("model", c.config_path.empty() ? c.model.c_str() : "config.json")) {
    for (const engine::ModelConfig& m : engine::ModelPresets()) {
      if (ImGui::Selectable(m.name.c_str(), c.config_path.empty() && m.name == c.model)) {
        c.model = m.name;
        c.config_path.clear();
        bench.ApplyChoice();
      }
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  int batch = static_cast<int>(c.batch);
  if (ImGui::InputInt("batch", &batch, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) {
    c.batch = std::clamp<int64_t>(batch, 1, engine::Workload::kMaxBatch);
    bench.ApplyChoice();
  }
  ImGui::SameLine();
  ImGui::Text("L = %lld (the editor's mask)", static_cast<long long>(bench.SeqLen()));
  ImGui::SetNextItemWidth(260);
  InputTextString("##config", &c.config_path);
  ImGui::SameLine();
  if (ImGui::Button("Use config.json")) bench.ApplyChoice();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("A HuggingFace config.json (bert, gpt2, t5); empty = the preset");
  if (!bench.GraphError().empty()) ErrorTextWrapped(bench.GraphError());
}

void DrawFusionPanel(LayerWorkbench& bench) {
  DrawLayerChooser(bench);
  const engine::OpGraph* g = bench.Graph();
  const auto& scheme = bench.Scheme();
  if (!g || !scheme) return;
  ImGui::Separator();
  auto hex = engine::CodeToHex(scheme->Code());
  ImGui::Text("scheme %s  (hex %s)  from: %s", scheme->Code().c_str(), hex.IsOk() ? hex->c_str() : "?",
              bench.SchemeSource().c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("Default")) bench.ResetScheme();
  ImGui::TextDisabled("Click between two ops to split or join segments. Blue: compute-intensive "
                      "(CI), orange: memory-intensive (MI).");
  DrawChain(bench, *g, *scheme);
  if (!bench.FusionMessage().empty())
    ImGui::TextColored(ImVec4(1.0f, 0.55f, 0.4f, 1.0f), "not allowed: %s", bench.FusionMessage().c_str());
  DrawSegmentTable(bench);
  // What runs for the attention (the same answer as the Kernel selection tab and `stof select`).
  if (const auto& run = bench.RunChoice()) {
    ImGui::TextWrapped("Attention runs: %s", engine::MhaRunChoiceText(*run).c_str());
    if (ImGui::IsItemHovered() && !run->note.empty()) ImGui::SetTooltip("%s", run->note.c_str());
  } else if (!bench.RunChoiceError().empty()) {
    ErrorTextWrapped("attention: what runs is not known: " + bench.RunChoiceError());
  }
  ImGui::Spacing();
  DrawLadder(bench);
}

}  // namespace stof::app
