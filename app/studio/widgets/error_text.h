// Error text in the studio: one colour, always wrapped at the available width so a long
// message (a file path and its reason) is read in full, never clipped at a panel's or the
// window's edge (issue 16). Used by the error strip above the status bar (error_strip.cpp)
// and the panels that show an error in place (fusion, tune, kernel selection).
#pragma once

#include <imgui.h>

#include <string>

namespace stof::app {

inline const ImVec4 kErrorColour{1.0f, 0.45f, 0.45f, 1.0f};

// The text in kErrorColour, wrapped at the content region's right edge minus `reserve_right`
// pixels (room for buttons beside it).
void ErrorTextWrapped(const std::string& text, float reserve_right = 0.0f);

// A secondary note (why something is not shown, where a figure came from), wrapped the same
// way, in the theme's dimmed text colour. Used by the kernel selection view.
void NoteTextWrapped(const std::string& text);

}  // namespace stof::app
