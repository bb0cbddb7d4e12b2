// Export panel (tab "Export"): the mask (PNG, NPY, JSON), its layout (JSON, FlexAttention
// JSON, PNG, NPY), a plan JSON with the current choices, and the `stof` command lines that
// reproduce the view, with copy buttons.
#pragma once

namespace stof::app {
class Studio;
void DrawExportPanel(Studio& studio);
}  // namespace stof::app
