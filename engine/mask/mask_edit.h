// Hand edits of a Mask: the studio's mask-editor tools (brush, line, rectangle, diagonal
// band), each setting cells to attend (paint) or masked (erase), optionally mirrored across
// the main diagonal (symmetric editing: cell (i, j) and (j, i) together). Used by the GUI's
// mask editor; tested in tests/engine/mask_edit_test.cpp.
// Invariants: an edit only touches cells inside the mask (brushes are clipped at the edges);
// a tool position outside the mask or a size out of range is an error and changes nothing.
// The returned CellRect bounds every changed cell (the GUI re-uploads only that region).
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "engine/mask/mask.h"

namespace stof::engine {

// Rows [r0, r1) x cols [c0, c1); empty when r0 >= r1 or c0 >= c1.
struct CellRect {
  int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  bool Empty() const { return r0 >= r1 || c0 >= c1; }
  // The smallest rectangle holding both (an empty operand is ignored).
  CellRect Union(const CellRect& o) const;
  bool operator==(const CellRect&) const = default;
};

struct EditOptions {
  bool value = true;       // true = paint (attend), false = erase (masked)
  bool symmetric = false;  // also edit the mirrored cells (j, i)
};

// A square brush of side `size` (1..L) centred on (row, col): rows
// [row - (size-1)/2, row - (size-1)/2 + size), clipped to the mask; same for columns.
Expected<CellRect> PaintBrush(Mask* mask, int64_t row, int64_t col, int64_t size,
                              const EditOptions& options);
// The brush stamped along the Bresenham line from (r0, c0) to (r1, c1), both ends included.
Expected<CellRect> PaintLine(Mask* mask, int64_t r0, int64_t c0, int64_t r1, int64_t c1,
                             int64_t size, const EditOptions& options);
// The filled rectangle with corners (r0, c0) and (r1, c1), in any order, both included.
Expected<CellRect> PaintRect(Mask* mask, int64_t r0, int64_t c0, int64_t r1, int64_t c1,
                             const EditOptions& options);
// The diagonal band through (row, col) over the whole mask: every (i, j) with
// |(j - i) - (col - row)| < width, width in 1..L (width 1 = that one diagonal).
Expected<CellRect> PaintBand(Mask* mask, int64_t row, int64_t col, int64_t width,
                             const EditOptions& options);

}  // namespace stof::engine
