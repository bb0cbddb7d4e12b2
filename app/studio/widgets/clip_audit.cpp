// FindClippedText (clip_audit.h) over Dear ImGui 1.86's windows and draw lists.
#include "app/studio/widgets/clip_audit.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace stof::app {

namespace {

constexpr float kTolerance = 1.5f;  // px: rounding of item widths

std::string Px(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f px", v);
  return buf;
}

// The glyphs of the default font by their texture coordinates, to tell text quads from the
// rectangles and lines that use the atlas' white pixel.
std::map<std::pair<float, float>, ImWchar> GlyphsByUv() {
  std::map<std::pair<float, float>, ImWchar> out;
  const ImFont* font = ImGui::GetFont();
  for (const ImFontGlyph& g : font->Glyphs)
    if (g.Visible) out[{g.U0, g.V0}] = static_cast<ImWchar>(g.Codepoint);
  return out;
}

// Content past the visible area of a window that cannot scroll that way.
void CheckContent(const ImGuiWindow* w, std::vector<ClippedText>* out) {
  const float content_w = w->DC.CursorMaxPos.x - w->DC.CursorStartPos.x;
  const float content_h = w->DC.CursorMaxPos.y - w->DC.CursorStartPos.y;
  const float avail_w = w->ContentRegionRect.GetWidth();
  const float avail_h = w->InnerRect.Max.y - w->DC.CursorStartPos.y + w->Scroll.y;
  const bool scrolls_x = w->ScrollbarX || (w->Flags & ImGuiWindowFlags_HorizontalScrollbar);
  if (!scrolls_x && content_w > avail_w + kTolerance)
    out->push_back({w->Name, "content " + Px(content_w) + " wide in " + Px(avail_w)});
  if (!w->ScrollbarY && (w->Flags & ImGuiWindowFlags_NoScrollbar) && content_h > avail_h + kTolerance)
    out->push_back({w->Name, "content " + Px(content_h) + " high in " + Px(avail_h)});
}

// Glyph quads (4 vertices, 6 indices each) drawn across their command's clip rectangle
// horizontally: the text is cut mid-character. Reports each cut run of text (glyphs on one
// line, in drawing order) with the glyphs it holds, so the message names the label.
void CheckGlyphs(const ImGuiWindow* w, const std::map<std::pair<float, float>, ImWchar>& glyphs,
                 std::vector<ClippedText>* out) {
  if (w->ScrollbarX || (w->Flags & ImGuiWindowFlags_HorizontalScrollbar)) return;  // scrolls sideways
  const ImDrawList* dl = w->DrawList;
  const ImTextureID font = ImGui::GetIO().Fonts->TexID;
  for (const ImDrawCmd& cmd : dl->CmdBuffer) {
    if (cmd.UserCallback || cmd.TextureId != font) continue;
    std::string run;
    float run_y = NAN, run_x = NAN;
    bool run_cut = false;
    auto flush = [&] {
      if (run_cut) out->push_back({w->Name, "text cut at the clip edge: '" + run + "'"});
      run.clear();
      run_cut = false;
    };
    for (unsigned i = cmd.IdxOffset; i + 6 <= cmd.IdxOffset + cmd.ElemCount; i += 6) {
      // A glyph's quad: vertices a (top-left) .. c (bottom-right) with the glyph's UVs;
      // indices count from the command's vertex offset.
      const ImDrawVert& a = dl->VtxBuffer[static_cast<int>(cmd.VtxOffset + dl->IdxBuffer[i])];
      const ImDrawVert& c = dl->VtxBuffer[static_cast<int>(cmd.VtxOffset + dl->IdxBuffer[i + 2])];
      const auto it = glyphs.find({a.uv.x, a.uv.y});
      if (it == glyphs.end() || c.uv.x == a.uv.x) continue;
      const float x0 = std::min(a.pos.x, c.pos.x), x1 = std::max(a.pos.x, c.pos.x);
      const float y0 = std::min(a.pos.y, c.pos.y), y1 = std::max(a.pos.y, c.pos.y);
      const float line = std::round(y1);  // glyphs of one line share their bottom row, near enough
      if (!(std::abs(line - run_y) <= 4 && x0 >= run_x - 2 && x0 < run_x + 40)) flush();
      run_y = line;
      run_x = x1;
      run += static_cast<char>(it->second < 128 ? it->second : '?');
      const bool visible_rows = y1 > cmd.ClipRect.y && y0 < cmd.ClipRect.w;
      if (visible_rows && ((x1 > cmd.ClipRect.z + kTolerance && x0 < cmd.ClipRect.z) ||
                           (x0 < cmd.ClipRect.x - kTolerance && x1 > cmd.ClipRect.x)))
        run_cut = true;
    }
    flush();
  }
}

}  // namespace

std::vector<ClippedText> FindClippedText() {
  std::vector<ClippedText> out;
  const ImGuiContext* g = ImGui::GetCurrentContext();
  if (g == nullptr) return out;
  const auto glyphs = GlyphsByUv();
  for (const ImGuiWindow* w : g->Windows) {
    if (!w->Active || w->Hidden || w->SkipItems) continue;  // drawn this frame
    CheckContent(w, &out);
    CheckGlyphs(w, glyphs, &out);
  }
  return out;
}

}  // namespace stof::app
