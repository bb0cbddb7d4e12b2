// DrawMaskCanvas (mask_canvas.h). Per frame: one textured quad (the mask, with the block
// classes pre-blended in "blocks over mask"; the block texture in "blocks only"), grid lines
// only for the visible cells / blocks, one tooltip. The exact-cell "detail" texture (masks
// larger than the 2048-texel overview) is rebuilt by MaskTextures only when the visible
// rectangle, rounded out to 64 cells, the mask version or the blended layout changes. Edits
// go back to the studio as EditCommands, applied after the canvas is drawn.
#include "app/studio/panels/mask_canvas.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/studio/canvas_key.h"
#include "app/studio/panels/canvas_toolbar.h"
#include "engine/layout/block_lookup.h"

namespace stof::app {

namespace {

constexpr double kMaxCellPixels = 48.0;
constexpr int64_t kDetailMaxCells = 1024;

struct Geometry {
  ImVec2 p0, p1, centre;
  double ppc = 1;  // pixels per cell
  double cx = 0, cy = 0;
  ImVec2 Screen(double row, double col) const {
    return ImVec2(static_cast<float>(centre.x + (col - cx) * ppc),
                  static_cast<float>(centre.y + (row - cy) * ppc));
  }
  double Col(float x) const { return cx + (x - centre.x) / ppc; }
  double Row(float y) const { return cy + (y - centre.y) / ppc; }
};

void DrawGrid(ImDrawList* dl, const Geometry& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
              int64_t step_r, int64_t step_c, ImU32 color) {
  const int64_t a = (r0 + step_r - 1) / step_r * step_r, b = (c0 + step_c - 1) / step_c * step_c;
  const ImVec2 top = g.Screen(static_cast<double>(r0), 0), bottom = g.Screen(static_cast<double>(r1), 0);
  const ImVec2 left = g.Screen(0, static_cast<double>(c0)), right = g.Screen(0, static_cast<double>(c1));
  // One-pixel filled rectangles, not AddLine: an anti-aliased line is a ~3 px wide blended
  // strip, and llvmpipe pays per pixel (measured: docs/user-guide.md, "Responsiveness").
  for (int64_t c = b; c <= c1; c += step_c) {
    const float x = std::floor(g.Screen(0, static_cast<double>(c)).x);
    dl->AddRectFilled(ImVec2(x, top.y), ImVec2(x + 1.0f, bottom.y), color);
  }
  for (int64_t r = a; r <= r1; r += step_r) {
    const float y = std::floor(g.Screen(static_cast<double>(r), 0).y);
    dl->AddRectFilled(ImVec2(left.x, y), ImVec2(right.x, y + 1.0f), color);
  }
}

void Tooltip(const MaskCanvasView& view, int64_t row, int64_t col) {
  const engine::Mask& m = *view.mask;
  ImGui::BeginTooltip();
  ImGui::Text("cell (%lld, %lld): %s", static_cast<long long>(row), static_cast<long long>(col),
              m.Get(row, col) ? "attend" : "masked");
  const engine::MaskAnalysis* a = view.analysis;
  if (a && a->layout.Rows() == m.Rows() && a->layout.Cols() == m.Cols()) {
    const engine::BlockLayout& l = a->layout;
    const int64_t br = row / l.BlockM(), bc = col / l.BlockN();
    auto place = engine::LocateBlock(l, br, bc);
    if (place.IsOk()) {
      ImGui::Text("block (%lld, %lld) at %lld x %lld: %s, %lld of %lld cells attend",
                  static_cast<long long>(br), static_cast<long long>(bc),
                  static_cast<long long>(l.BlockM()), static_cast<long long>(l.BlockN()),
                  engine::BlockClassName(place->cls), static_cast<long long>(place->popcount),
                  static_cast<long long>(l.BlockM() * l.BlockN()));
      if (place->load_index >= 0) {
        const bool full = place->cls == engine::BlockClass::kFull;
        ImGui::Text("load_col_idx[%lld] (row %lld: load_row_ptr %d..%d)",
                    static_cast<long long>(place->load_index), static_cast<long long>(br),
                    l.LoadRowPtr()[static_cast<size_t>(br)], l.LoadRowPtr()[static_cast<size_t>(br) + 1]);
        ImGui::Text("%s_col_idx[%lld]%s", full ? "full" : "part",
                    static_cast<long long>(place->class_index), full ? "" : " = part bitmap index");
      }
      if (!view.analysis_ready) ImGui::TextDisabled("(layout updating)");
    }
  }
  ImGui::EndTooltip();
}

void HandleTools(const MaskCanvasView& view, EditSettings& e, const Geometry& g, bool hovered, int64_t row,
                 int64_t col, std::vector<CanvasEdit>* edits) {
  const ImGuiIO& io = ImGui::GetIO();
  const engine::Mask& mask = *view.mask;
  const engine::EditOptions opt{!e.erase, e.symmetric};
  const bool in_mask = row >= 0 && col >= 0 && row < mask.Rows() && col < mask.Cols();
  const int64_t r = std::clamp<int64_t>(row, 0, mask.Rows() - 1);
  const int64_t c = std::clamp<int64_t>(col, 0, mask.Cols() - 1);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 preview = IM_COL32(86, 180, 233, 255);

  if (hovered && in_mask && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    e.active = true;
    e.anchor_r = e.last_r = r;
    e.anchor_c = e.last_c = c;
    switch (e.tool) {
      case Tool::kBrush:
        edits->push_back({e.erase ? "erase" : "brush", EditCommand::Brush(r, c, e.brush, opt)});
        break;
      case Tool::kBand:
        edits->push_back({"band", EditCommand::Band(r, c, e.band_width, opt)});
        e.active = false;
        break;
      default: break;
    }
  }
  if (!e.active) {
    if (e.tool == Tool::kBand && hovered && in_mask) {  // preview the band's edges
      const double off = static_cast<double>(c - r), w = static_cast<double>(e.band_width);
      const double n = static_cast<double>(mask.Rows());
      for (double k : {off - w + 1, off + w}) {
        dl->AddLine(g.Screen(std::max(0.0, -k), std::max(0.0, k)),
                    g.Screen(std::min(n, n - k), std::min(n, n + k)), preview, 1.5f);
      }
    }
    return;
  }
  if (io.MouseDown[ImGuiMouseButton_Left]) {
    if (e.tool == Tool::kBrush && (r != e.last_r || c != e.last_c)) {
      edits->push_back({"", EditCommand::Line(e.last_r, e.last_c, r, c, e.brush, opt)});
      e.last_r = r;
      e.last_c = c;
    } else if (e.tool == Tool::kLine) {
      dl->AddLine(g.Screen(e.anchor_r + 0.5, e.anchor_c + 0.5), g.Screen(r + 0.5, c + 0.5), preview, 2.0f);
    } else if (e.tool == Tool::kRect) {
      dl->AddRect(g.Screen(static_cast<double>(std::min(e.anchor_r, r)), static_cast<double>(std::min(e.anchor_c, c))),
                  g.Screen(static_cast<double>(std::max(e.anchor_r, r) + 1), static_cast<double>(std::max(e.anchor_c, c) + 1)),
                  preview, 0.0f, 0, 2.0f);
    }
    return;
  }
  // Released: finish line / rectangle; Studio ends the gesture once no button is down.
  if (e.tool == Tool::kLine)
    edits->push_back({"line", EditCommand::Line(e.anchor_r, e.anchor_c, r, c, e.brush, opt)});
  else if (e.tool == Tool::kRect)
    edits->push_back({"rectangle", EditCommand::Rect(e.anchor_r, e.anchor_c, r, c, opt)});
  e.active = false;
}

// The canvas rectangle at the cursor, filling the space left (`size`); `fit` is the pixels
// per cell that show the whole mask.
Geometry PlaceCanvas(const engine::Mask& m, ImVec2* size_out, double* fit) {
  Geometry g;
  g.p0 = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 size(std::max(64.0f, avail.x), std::max(64.0f, avail.y));
  *size_out = size;
  g.p1 = ImVec2(g.p0.x + size.x, g.p0.y + size.y);
  g.centre = ImVec2((g.p0.x + g.p1.x) * 0.5f, (g.p0.y + g.p1.y) * 0.5f);
  const double L = static_cast<double>(std::max(m.Rows(), m.Cols()));
  *fit = std::min(size.x, size.y) / L;
  return g;
}

// Zoom around the cursor, pan by dragging (right / middle, or left with Inspect); `v` keeps
// the result between frames, `g` takes it for this one.
void ZoomAndPan(const engine::Mask& m, double fit, bool hovered, bool active, bool pan_left, CanvasView& v,
                Geometry& g) {
  const ImGuiIO& io = ImGui::GetIO();
  const double max_zoom = std::max(1.0, kMaxCellPixels / fit);
  g.ppc = fit * v.zoom;
  g.cx = v.cx;
  g.cy = v.cy;
  if (hovered && io.MouseWheel != 0.0f) {
    const double col = g.Col(io.MousePos.x), row = g.Row(io.MousePos.y);
    v.zoom = std::clamp(v.zoom * std::pow(1.25, io.MouseWheel), 1.0, max_zoom);
    g.ppc = fit * v.zoom;
    v.cx = col - (io.MousePos.x - g.centre.x) / g.ppc;
    v.cy = row - (io.MousePos.y - g.centre.y) / g.ppc;
  }
  if (active && (io.MouseDown[ImGuiMouseButton_Right] || io.MouseDown[ImGuiMouseButton_Middle] ||
                 (pan_left && io.MouseDown[ImGuiMouseButton_Left]))) {
    v.cx -= io.MouseDelta.x / g.ppc;
    v.cy -= io.MouseDelta.y / g.ppc;
  }
  v.cx = std::clamp(v.cx, 0.0, static_cast<double>(m.Cols()));
  v.cy = std::clamp(v.cy, 0.0, static_cast<double>(m.Rows()));
  g.cx = v.cx;
  g.cy = v.cy;
}

struct VisibleCells {
  int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;  // rows [r0, r1), columns [c0, c1)
};

VisibleCells Visible(const Geometry& g, const engine::Mask& m) {
  return {std::max<int64_t>(0, static_cast<int64_t>(std::floor(g.Row(g.p0.y)))),
          std::min<int64_t>(m.Rows(), static_cast<int64_t>(std::ceil(g.Row(g.p1.y)))),
          std::max<int64_t>(0, static_cast<int64_t>(std::floor(g.Col(g.p0.x)))),
          std::min<int64_t>(m.Cols(), static_cast<int64_t>(std::ceil(g.Col(g.p1.x))))};
}

// The mask's picture: the exact-cell detail texture when few enough cells show and the
// overview is coarser than a cell, else the overview; or the block texture in "blocks only".
void DrawMaskImage(ImDrawList* dl, const Geometry& g, const MaskCanvasView& view, Overlay overlay,
                   const VisibleCells& vis) {
  const engine::Mask& m = *view.mask;
  if (overlay != Overlay::kBlocks && vis.r0 < vis.r1 && vis.c0 < vis.c1) {
    const MaskTextures& textures = *view.textures;
    const Texture& ov = textures.Overview();
    const int64_t step = textures.OverviewStep();
    if (step > 1 && vis.r1 - vis.r0 <= kDetailMaxCells && vis.c1 - vis.c0 <= kDetailMaxCells) {
      const Texture& detail = view.detail(vis.r0 / 64 * 64, std::min(m.Rows(), (vis.r1 + 63) / 64 * 64),
                                          vis.c0 / 64 * 64, std::min(m.Cols(), (vis.c1 + 63) / 64 * 64));
      const MaskTextures::DetailKey& k = textures.DetailRect();
      dl->AddImage(detail.Id(), g.Screen(static_cast<double>(k.r0), static_cast<double>(k.c0)),
                   g.Screen(static_cast<double>(k.r1), static_cast<double>(k.c1)));
    } else if (ov.Valid()) {
      const double tw = static_cast<double>(ov.Width() * step), th = static_cast<double>(ov.Height() * step);
      dl->AddImage(ov.Id(), g.Screen(0, 0), g.Screen(th, tw));
    }
  }
  if (overlay == Overlay::kBlocks && view.layout_fits && view.textures->BlockTexture().Valid()) {
    const engine::BlockLayout& l = view.analysis->layout;
    dl->AddImage(view.textures->BlockTexture().Id(), g.Screen(0, 0),
                 g.Screen(static_cast<double>(l.BlockRows() * l.BlockM()),
                          static_cast<double>(l.BlockCols() * l.BlockN())));
  }
}

// Cell lines once a cell is 8 px, block lines once a block is 6 px, and the mask's border.
void DrawGrids(ImDrawList* dl, const Geometry& g, const MaskCanvasView& view, Overlay overlay,
               const VisibleCells& vis) {
  const engine::MaskAnalysis* a = view.analysis;
  if (g.ppc >= 8.0)
    DrawGrid(dl, g, vis.r0, vis.r1, vis.c0, vis.c1, 1, 1, IM_COL32(70, 74, 90, 160));
  if (overlay != Overlay::kMask && view.layout_fits && g.ppc * std::min(a->layout.BlockM(), a->layout.BlockN()) >= 6.0)
    DrawGrid(dl, g, vis.r0, vis.r1, vis.c0, vis.c1, a->layout.BlockM(), a->layout.BlockN(), IM_COL32(150, 150, 170, 200));
  dl->AddRect(g.Screen(0, 0), g.Screen(static_cast<double>(view.mask->Rows()), static_cast<double>(view.mask->Cols())),
              IM_COL32(120, 120, 140, 255));
}

struct PointerCell {
  int64_t row = 0, col = 0;  // may lie outside the mask
  bool on_mask = false;
};

PointerCell CellUnderPointer(const Geometry& g, const engine::Mask& m) {
  const ImGuiIO& io = ImGui::GetIO();
  PointerCell p;
  p.row = static_cast<int64_t>(std::floor(g.Row(io.MousePos.y)));
  p.col = static_cast<int64_t>(std::floor(g.Col(io.MousePos.x)));
  p.on_mask = p.row >= 0 && p.col >= 0 && p.row < m.Rows() && p.col < m.Cols();
  return p;
}

// The pointer's cell: edits from the tools, or with Inspect a click that zooms to its block;
// the hovered block outlined.
void PointerOnCell(const MaskCanvasView& view, Overlay overlay, const Geometry& g, const PointerCell& p,
                   bool hovered, EditSettings& edit, CanvasView& v, MaskCanvasActions* actions) {
  const ImGuiIO& io = ImGui::GetIO();
  const engine::Mask& m = *view.mask;
  const engine::MaskAnalysis* a = view.analysis;
  const bool layout_fits = view.layout_fits;
  const int64_t row = p.row, col = p.col;
  const bool on_mask = p.on_mask;
  if (edit.tool != Tool::kInspect) {
    HandleTools(view, edit, g, hovered, row, col, &actions->edits);
  } else if (hovered && on_mask && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
             io.MouseDragMaxDistanceSqr[ImGuiMouseButton_Left] < 9.0f && layout_fits &&
             overlay != Overlay::kMask) {
    const int64_t bm = a->layout.BlockM(), bn = a->layout.BlockN();
    v = CanvasView::Around(m, row / bm * bm, row / bm * bm + bm, col / bn * bn, col / bn * bn + bn);
  }
  if (hovered && on_mask && layout_fits && overlay != Overlay::kMask) {
    const int64_t bm = a->layout.BlockM(), bn = a->layout.BlockN();
    ImGui::GetWindowDrawList()->AddRect(
        g.Screen(static_cast<double>(row / bm * bm), static_cast<double>(col / bn * bn)),
        g.Screen(static_cast<double>(row / bm * bm + bm), static_cast<double>(col / bn * bn + bn)),
        IM_COL32(255, 255, 255, 230), 0.0f, 0, 2.0f);
  }
}

}  // namespace

MaskCanvasActions DrawMaskCanvas(const MaskCanvasView& view, EditSettings& edit, CanvasView& v) {
  MaskCanvasActions actions;
  actions.overlay = DrawCanvasToolbar(*view.mask, view.overlay, edit, v);
  // The overlay chosen, this frame's pick included (the studio applies it after the canvas).
  const Overlay overlay = actions.overlay.value_or(view.overlay);
  plots::KeyRow(CanvasKey(overlay));  // the canvas' colours, named
  const engine::Mask& m = *view.mask;
  if (m.Empty()) return actions;

  double fit = 1;
  ImVec2 size;
  Geometry g = PlaceCanvas(m, &size, &fit);
  ImGui::InvisibleButton("canvas", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  ZoomAndPan(m, fit, hovered, ImGui::IsItemActive(), edit.tool == Tool::kInspect, v, g);
  const VisibleCells vis = Visible(g, m);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(g.p0, g.p1, true);
  DrawMaskImage(dl, g, view, overlay, vis);
  DrawGrids(dl, g, view, overlay, vis);
  const PointerCell p = CellUnderPointer(g, m);
  PointerOnCell(view, overlay, g, p, hovered, edit, v, &actions);
  dl->PopClipRect();
  // Zoom and position readout in the canvas corner.
  char buf[96];
  std::snprintf(buf, sizeof buf, "zoom %.1fx  %.1f px/cell", v.zoom, g.ppc);
  dl->AddText(ImVec2(g.p0.x + 6, g.p1.y - ImGui::GetTextLineHeight() - 4), IM_COL32(190, 190, 200, 255), buf);
  if (hovered && p.on_mask && !edit.active) Tooltip(view, p.row, p.col);
  return actions;
}

}  // namespace stof::app
