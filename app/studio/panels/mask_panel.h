// Mask panel (tab "Mask"): pattern presets with live parameter sliders for every engine
// generator (compositions included, operands edited recursively), L from 16 to 16384, the
// seed, and the mask's statistics.
#pragma once

namespace stof::app {
class Studio;
void DrawMaskPanel(Studio& studio);
}  // namespace stof::app
