// Editing a fusion scheme one boundary at a time, as the studio's fusion view does when the
// user clicks between two ops: the boundary after op `after_op` is removed (the two segments
// around it join) or added (the segment holding both ops splits there). A join that would
// break the scheme's rule (at most two CI ops per segment, STOF 4.4) is refused with a
// message that says which ops and why, so the view can explain instead of allowing it.
// Invariants: the result is a valid FusionScheme of the same graph; its code keeps the
// original's first digit (digits after the edit flip, since segments alternate).
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"

namespace stof::engine {

// True when ops `after_op` and `after_op` + 1 are in different segments.
bool IsBoundary(const FusionScheme& scheme, int after_op);

// Splits or joins at the boundary after op `after_op` (1 <= after_op < op count). Errors:
// "fusion: boundary after op 14: the layer has ops 1..14", or for a join over the CI limit
// "fusion: joining [#1] and [#2-#6] would put 3 CI ops (#1 GEMM, #2 BatchGEMM, #6 BatchGEMM)
// in one segment; a fused segment holds at most 2 (STOF 4.4)".
Expected<FusionScheme> ToggleBoundary(const FusionScheme& scheme, const OpGraph& g, int after_op);

}  // namespace stof::engine
