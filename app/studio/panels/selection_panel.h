// Kernel-selection panel (tab "Kernel selection"): the workload and the device (built-ins and
// the local GPU), STOF Eq. 1 with its inputs and threshold, the chosen kernel, and Eq. 2 as a
// sortable table of all 64 (BM, BN, num_warps) candidates.
#pragma once

namespace stof::app {
class Studio;
void DrawSelectionPanel(Studio& studio);
}  // namespace stof::app
