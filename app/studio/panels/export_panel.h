// Export panel (tab "Export"): the mask (PNG, NPY, JSON), its layout (JSON, FlexAttention
// JSON, PNG, NPY), a plan JSON with the current choices, and the `stof` command lines that
// reproduce the view, with copy buttons. Studio-independent like profile_panel.h: it draws an
// ExportView (filled by the studio each frame) and its own path fields (ExportPanelUi, kept by
// the studio between frames), and returns what the user asked to write; the studio writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "app/studio/cli_command.h"
#include "engine/layout/layout_export.h"

namespace stof::app {

// The tab's fields between frames. plan_path is also the tune view's plan field: a plan
// exported from either view goes to the same file.
struct ExportPanelUi {
  std::string mask_path = "mask.json", layout_path = "layout.json", plan_path = "plan.json";
  int layout_format = 0;  // engine::LayoutExportFormat
};

struct ExportView {
  bool saving = false;              // a mask save is running (the button waits)
  int64_t block_m = 0, block_n = 0;  // the layout's block size
  CliCommands commands;             // the view as `stof` command lines
};

struct ExportActions {
  std::optional<std::string> save_mask;      // "Save mask": the file
  std::optional<std::string> export_layout;  // "Export layout": the file, in layout_format
  engine::LayoutExportFormat layout_format = engine::LayoutExportFormat::kJson;
  std::optional<std::string> export_plan;    // "Export plan": the file
};

ExportActions DrawExportPanel(const ExportView& view, ExportPanelUi& ui);

}  // namespace stof::app
