// The mask-editor tools of mask_edit.h. Rows are written a range at a time (Mask::SetRange), so
// a band over L = 16384 rows costs L word-range writes, not L * width bit writes.
#include "engine/mask/mask_edit.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace stof::engine {

namespace {

Status CheckMask(const Mask* mask, const char* tool) {
  if (mask == nullptr || mask->Empty())
    return MakeError(std::string("mask edit: ") + tool + ": no mask to edit");
  return Status::Ok();
}

Status CheckCell(const Mask& m, int64_t row, int64_t col, const char* tool, const char* what) {
  if (row < 0 || row >= m.Rows() || col < 0 || col >= m.Cols())
    return MakeError(std::string("mask edit: ") + tool + ": " + what + " (" + std::to_string(row) +
                     ", " + std::to_string(col) + ") is outside the " + std::to_string(m.Rows()) +
                     " x " + std::to_string(m.Cols()) + " mask");
  return Status::Ok();
}

Status CheckSize(const Mask& m, int64_t size, const char* tool, const char* field) {
  const int64_t most = std::max(m.Rows(), m.Cols());
  if (size < 1 || size > most)
    return MakeError(std::string("mask edit: ") + tool + ": " + field + " must be in 1.." +
                     std::to_string(most) + ", got " + std::to_string(size));
  return Status::Ok();
}

// Sets the clipped rectangle (and its transpose when symmetric); returns what changed.
CellRect SetRectClipped(Mask* m, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                        const EditOptions& o) {
  CellRect rect{std::max<int64_t>(r0, 0), std::min(r1, m->Rows()), std::max<int64_t>(c0, 0),
                std::min(c1, m->Cols())};
  if (rect.Empty()) return CellRect{};
  m->SetRect(rect.r0, rect.r1, rect.c0, rect.c1, o.value);
  if (!o.symmetric) return rect;
  CellRect t{std::max<int64_t>(c0, 0), std::min(c1, m->Rows()), std::max<int64_t>(r0, 0),
             std::min(r1, m->Cols())};
  if (t.Empty()) return rect;
  m->SetRect(t.r0, t.r1, t.c0, t.c1, o.value);
  return rect.Union(t);
}

CellRect Stamp(Mask* m, int64_t row, int64_t col, int64_t size, const EditOptions& o) {
  const int64_t r0 = row - (size - 1) / 2, c0 = col - (size - 1) / 2;
  return SetRectClipped(m, r0, r0 + size, c0, c0 + size, o);
}

}  // namespace

CellRect CellRect::Union(const CellRect& o) const {
  if (Empty()) return o;
  if (o.Empty()) return *this;
  return {std::min(r0, o.r0), std::max(r1, o.r1), std::min(c0, o.c0), std::max(c1, o.c1)};
}

Expected<CellRect> PaintBrush(Mask* mask, int64_t row, int64_t col, int64_t size,
                              const EditOptions& options) {
  STOF_RETURN_IF_ERROR(CheckMask(mask, "brush"));
  STOF_RETURN_IF_ERROR(CheckCell(*mask, row, col, "brush", "cell"));
  STOF_RETURN_IF_ERROR(CheckSize(*mask, size, "brush", "size"));
  return Stamp(mask, row, col, size, options);
}

Expected<CellRect> PaintLine(Mask* mask, int64_t r0, int64_t c0, int64_t r1, int64_t c1,
                             int64_t size, const EditOptions& options) {
  STOF_RETURN_IF_ERROR(CheckMask(mask, "line"));
  STOF_RETURN_IF_ERROR(CheckCell(*mask, r0, c0, "line", "start"));
  STOF_RETURN_IF_ERROR(CheckCell(*mask, r1, c1, "line", "end"));
  STOF_RETURN_IF_ERROR(CheckSize(*mask, size, "line", "size"));
  // Bresenham over all octants: err tracks dc * (r - r0) - dr * (c - c0), scaled by 2.
  const int64_t dr = std::llabs(r1 - r0), dc = std::llabs(c1 - c0);
  const int64_t sr = r0 < r1 ? 1 : -1, sc = c0 < c1 ? 1 : -1;
  int64_t err = dc - dr, r = r0, c = c0;
  CellRect changed;
  for (;;) {
    changed = changed.Union(Stamp(mask, r, c, size, options));
    if (r == r1 && c == c1) break;
    const int64_t e2 = 2 * err;
    if (e2 > -dr) {
      err -= dr;
      c += sc;
    }
    if (e2 < dc) {
      err += dc;
      r += sr;
    }
  }
  return changed;
}

Expected<CellRect> PaintRect(Mask* mask, int64_t r0, int64_t c0, int64_t r1, int64_t c1,
                             const EditOptions& options) {
  STOF_RETURN_IF_ERROR(CheckMask(mask, "rectangle"));
  STOF_RETURN_IF_ERROR(CheckCell(*mask, r0, c0, "rectangle", "corner"));
  STOF_RETURN_IF_ERROR(CheckCell(*mask, r1, c1, "rectangle", "corner"));
  return SetRectClipped(mask, std::min(r0, r1), std::max(r0, r1) + 1, std::min(c0, c1),
                        std::max(c0, c1) + 1, options);
}

Expected<CellRect> PaintBand(Mask* mask, int64_t row, int64_t col, int64_t width,
                             const EditOptions& options) {
  STOF_RETURN_IF_ERROR(CheckMask(mask, "band"));
  STOF_RETURN_IF_ERROR(CheckCell(*mask, row, col, "band", "cell"));
  STOF_RETURN_IF_ERROR(CheckSize(*mask, width, "band", "width"));
  CellRect changed;
  auto band = [&](int64_t offset) {  // cells with |(j - i) - offset| < width
    for (int64_t i = 0; i < mask->Rows(); ++i) {
      const int64_t j0 = std::max<int64_t>(0, i + offset - width + 1);
      const int64_t j1 = std::min(mask->Cols(), i + offset + width);
      if (j0 >= j1) continue;
      mask->SetRange(i, j0, j1, options.value);
      changed = changed.Union(CellRect{i, i + 1, j0, j1});
    }
  };
  band(col - row);
  if (options.symmetric && col != row) band(row - col);
  return changed;
}

}  // namespace stof::engine
