// Kernel-selection panel (tab "Kernel selection"): the workload and the device (built-ins and
// the local GPU), STOF Eq. 1 with its inputs and threshold, the chosen kernel, and Eq. 2 as a
// sortable table of all 64 (BM, BN, num_warps) candidates. Studio-independent like
// profile_panel.h: it draws a SelectionView (filled by the studio each frame) and the table's
// sort order (SelectionPanelUi, kept by the studio), and returns the workload or device the
// user chose; the studio applies them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/analysis/layout_analysis.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"

namespace stof::app {

// The Eq. 2 table's row order, for the analysis with this serial (sorted again only when the
// user changes the sort or a new analysis arrives, not per frame).
struct SelectionPanelUi {
  std::vector<int> eq2_order;
  uint64_t eq2_sorted_for = 0;
};

struct SelectionView {
  engine::Workload workload;                                // batch, heads, d; seq_len = the mask's L
  const std::vector<engine::DeviceSpec>* devices = nullptr;  // the devices offered; never null
  int device_index = 0;                                     // the chosen one
  const engine::MaskAnalysis* analysis = nullptr;  // the latest analysis; null until the first
  uint64_t analysis_serial = 0;                     // bumped each time `analysis` is replaced
};

struct SelectionActions {
  std::optional<engine::Workload> workload;  // batch, heads or d edited
  std::optional<int> device;                 // an index into SelectionView::devices
};

SelectionActions DrawSelectionPanel(const SelectionView& view, SelectionPanelUi& ui);

}  // namespace stof::app
