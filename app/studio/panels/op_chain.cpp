// DrawOpChain (op_chain.h): the layout of the boxes, then the segment groups behind them, then
// each op's box and the gap after it.
#include "app/studio/panels/op_chain.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app/studio/widgets/plots.h"
#include "engine/fusion/scheme_edit.h"

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

// Where the op chain's boxes go: rows of equal boxes, each wide enough for its longest label
// ("BatchGEMM", "LayerNorm", "#14") and every group its template name; the group rectangles
// reach 4 px past their boxes, inside the view.
struct ChainLayout {
  int n = 0, per_row = 1, rows = 0;
  float gap = 14.0f, box_h = 46.0f, box_w = 0, label_h = 0, row_h = 0, avail = 0;
  ImVec2 origin;
  ImVec2 BoxAt(int op) const {  // 1-based op -> top-left
    const int i = op - 1;
    return ImVec2(origin.x + static_cast<float>(i % per_row) * (box_w + gap),
                  origin.y + 6.0f + static_cast<float>(i / per_row) * row_h);
  }
};

ChainLayout LayOutChain(const engine::OpGraph& g) {
  ChainLayout c;
  c.n = static_cast<int>(g.ops.size());
  c.label_h = ImGui::GetTextLineHeight() + 4.0f;
  float widest = ImGui::CalcTextSize("op by op").x;
  for (const engine::Op& o : g.ops) widest = std::max(widest, ImGui::CalcTextSize(engine::OpKindName(o.kind)).x);
  const float min_w = std::max(64.0f, widest + 10.0f);
  c.avail = ImGui::GetContentRegionAvail().x - 8.0f;
  c.per_row = std::max(1, std::min(c.n, static_cast<int>((c.avail + c.gap) / (min_w + c.gap))));
  c.box_w = (c.avail - c.gap * static_cast<float>(c.per_row - 1)) / static_cast<float>(c.per_row);
  c.rows = (c.n + c.per_row - 1) / c.per_row;
  c.origin = ImVec2(ImGui::GetCursorScreenPos().x + 4.0f, ImGui::GetCursorScreenPos().y);
  c.row_h = c.box_h + c.label_h + 16.0f;
  return c;
}

// Segment groups (one rectangle per row the segment spans) with the template below.
void DrawSegmentGroups(const ChainLayout& c, const engine::FusionScheme& scheme,
                       std::span<const SegmentView> views) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const auto& segs = scheme.Segments();
  for (size_t si = 0; si < segs.size(); ++si) {
    const engine::Segment& s = segs[si];
    const ImU32 col = kGroupColors[si % 4];
    int op = s.first;
    while (op <= s.last) {
      const int row_end = std::min(s.last, ((op - 1) / c.per_row + 1) * c.per_row);
      const ImVec2 a = c.BoxAt(op), b = c.BoxAt(row_end);
      const ImVec2 b_end(b.x + c.box_w + 4, b.y + c.box_h + c.label_h);
      dl->AddRectFilled(ImVec2(a.x - 4, a.y - 4), b_end, col, 6.0f);
      if (op == s.first) {
        const std::string t = si < views.size() && !views[si].tmpl.empty() ? views[si].tmpl
                                                                           : std::string("op by op");
        dl->PushClipRect(ImVec2(a.x - 4, a.y), b_end, true);
        dl->AddText(ImVec2(a.x, a.y + c.box_h + 2), IM_COL32(230, 230, 235, 255), t.c_str());
        dl->PopClipRect();
      }
      op = row_end + 1;
    }
  }
}

// One op's box with its number and kind, and its shapes, FLOPs and bytes on hover.
void DrawOpBox(const ChainLayout& c, const engine::Op& o, int op) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = c.BoxAt(op);
  const bool ci = o.Class() == engine::OpClass::kCI;
  dl->AddRectFilled(p, ImVec2(p.x + c.box_w, p.y + c.box_h), ci ? kCiColor : kMiColor, 4.0f);
  char top[16];
  std::snprintf(top, sizeof top, "#%d", op);
  dl->PushClipRect(p, ImVec2(p.x + c.box_w, p.y + c.box_h), true);
  dl->AddText(ImVec2(p.x + 4, p.y + 3), IM_COL32(255, 255, 255, 255), top);
  dl->AddText(ImVec2(p.x + 4, p.y + 3 + ImGui::GetTextLineHeight()), IM_COL32(255, 255, 255, 255),
              engine::OpKindName(o.kind));
  dl->PopClipRect();
  ImGui::SetCursorScreenPos(p);
  ImGui::InvisibleButton("op", ImVec2(c.box_w, c.box_h));
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::Text("#%d %s (%s, %s)", op, engine::OpKindName(o.kind), o.name.c_str(), ci ? "CI" : "MI");
  for (const engine::TensorRef& in : o.inputs)
    ImGui::Text("in  %-8s %s  (%s)", in.name.c_str(), Dims(in.dims).c_str(), engine::TensorSourceName(in.source));
  ImGui::Text("out %-8s %s", o.output.name.c_str(), Dims(o.output.dims).c_str());
  ImGui::Text("%.3f GFLOP, %s minimum", static_cast<double>(o.flops) / 1e9,
              plots::FormatSI(static_cast<double>(o.bytes), "B").c_str());
  ImGui::EndTooltip();
}

// The gap after op `op` (same row only): marked when it is a segment boundary; true when
// clicked (split or join there).
bool DrawGap(const ChainLayout& c, const engine::FusionScheme& scheme, int op) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = c.BoxAt(op);
  const ImVec2 gp(p.x + c.box_w, p.y);
  ImGui::SetCursorScreenPos(gp);
  ImGui::InvisibleButton("gap", ImVec2(c.gap, c.box_h));
  const bool boundary = engine::IsBoundary(scheme, op);
  const ImU32 mark = boundary ? IM_COL32(240, 240, 240, 255) : IM_COL32(240, 240, 240, 60);
  if (boundary)
    dl->AddLine(ImVec2(gp.x + c.gap / 2, gp.y - 2), ImVec2(gp.x + c.gap / 2, gp.y + c.box_h + 2), mark, 2.0f);
  if (ImGui::IsItemHovered()) {
    dl->AddRectFilled(gp, ImVec2(gp.x + c.gap, gp.y + c.box_h), IM_COL32(255, 255, 255, 50));
    ImGui::SetTooltip(boundary ? "join the segments at #%d | #%d" : "split the segment after #%d (#%d starts a new one)",
                      op, op + 1);
  }
  return ImGui::IsItemClicked();
}

}  // namespace

std::optional<int> DrawOpChain(const engine::OpGraph& g, const engine::FusionScheme& scheme,
                               std::span<const SegmentView> segments) {
  const ChainLayout c = LayOutChain(g);
  DrawSegmentGroups(c, scheme, segments);
  std::optional<int> clicked;
  for (int op = 1; op <= c.n; ++op) {
    ImGui::PushID(op);
    DrawOpBox(c, g.ops[static_cast<size_t>(op - 1)], op);
    if (op < c.n && op % c.per_row != 0 && DrawGap(c, scheme, op)) clicked = op;
    ImGui::PopID();
  }
  ImGui::SetCursorScreenPos(ImVec2(c.origin.x - 4.0f, c.origin.y + 6.0f + static_cast<float>(c.rows) * c.row_h));
  ImGui::Dummy(ImVec2(c.avail + 8.0f, 1));
  return clicked;
}

}  // namespace stof::app
