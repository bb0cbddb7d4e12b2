// Text that fits the space it is given: cut with ".." at `max_width` pixels (the available
// width by default) and shown whole in a tooltip on hover, so a narrow column or window never
// clips a label mid-letter. Used by the profile view's run list and other narrow cells.
#pragma once

#include <string>

namespace stof::app {

// `text` cut to `max_width` pixels with a trailing "..", or whole when it fits.
std::string ElideToWidth(const std::string& text, float max_width);

// ImGui::TextUnformatted of ElideToWidth(text, width) (width <= 0: the available width),
// greyed when `disabled`; the whole text as a tooltip when it was cut.
void ElidedText(const std::string& text, bool disabled = false, float width = 0);

}  // namespace stof::app
