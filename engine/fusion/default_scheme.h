// DefaultScheme: the fusion scheme `stof run` uses without a plan, and the tuner's starting
// point for CI+MI and MI+MI fusions: walking the ops left to right, take the longest segment
// that matches a template, except (a) CI+CI GEMM chains, which only pay at small batch x
// length and are the tuner's call (STOF's initial rules), and (b) segments whose inner output
// is read later (it would have to reach memory anyway), unless the fused kernel writes it
// (Add -> Norm). Used by app/cli/cmd_run.cpp and tests.
#pragma once

#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"

namespace stof::engine {

// include_chains: also take GEMM chains (small shapes).
FusionScheme DefaultScheme(const OpGraph& g, bool include_chains = false);

// True when op `op` of segment `s` (not its last) is read by an op outside `s`.
bool OutputEscapes(const OpGraph& g, const Segment& s, int op);

}  // namespace stof::engine
