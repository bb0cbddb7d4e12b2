// Finds text the window cuts off, for the GUI tests (--dump-state's "clipping"): after a
// frame is rendered, (1) a window without a scrollbar in an axis whose content reaches past
// its visible area in that axis (items beyond the edge are not even drawn: a toolbar after
// "Rect"), and (2) a glyph drawn across its clip rectangle (a label cut mid-word: "BatchGEM",
// a table cell, a box drawn with its own clip rectangle). Scrollable windows may hold more
// than they show; text elided with ".." fits and is not reported. Reads Dear ImGui's internal
// window and draw-list state; used only by batch_driver.cpp.
#pragma once

#include <string>
#include <vector>

namespace stof::app {

struct ClippedText {
  std::string window;  // the ImGui window (child windows as "parent/child")
  std::string what;    // "content 1692 px wide in 1410 px" or "text cut at the right edge: 'BatchGEM'"
};

// Call between ImGui::Render() and the next NewFrame().
std::vector<ClippedText> FindClippedText();

}  // namespace stof::app
