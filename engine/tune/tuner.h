// Tune: one entry point for the four search methods, so they can be compared on the same
// workload (docs/tuner.md):
//   stof        STOF's two-stage search: rules give the initial scheme (CI+CI chains fused at
//               small batch x length, attention on Eq. 1 / Eq. 2's kernel); stage 1 expands
//               fusion depth first with expand / seize / compete, sampling `samples` parameter
//               settings before and after each move and keeping it only when faster; stage 2
//               samples parameters with a fixed budget per iteration, more for the segment
//               that gained most.
//   gtco        dynamic programming over contiguous segmentations with measured segment costs
//               (each the best of `samples` settings): optimal for the chain given the costs.
//   mcfuser     the default scheme with GEMM chains fused, each chain tuned by MCFuser's
//               population search over its pruned tiling-expression space.
//   exhaustive  every segment under every setting, then every segmentation: the ground truth
//               for small spaces (refused above exhaustive_max_schemes).
// Costs come from a CostSource (measured on a Backend, or predicted) through a TuneContext
// (memo, cache file, budget, events). Used by `stof tune`, the studio and the tests.
#pragma once

#include "engine/tune/cost_source.h"
#include "engine/tune/tune_types.h"

namespace stof::engine {

class TuneCache;

// `cache` (may be null) is consulted and filled only when `source` measures.
Expected<TuneResult> Tune(CostSource& source, const TuneOptions& options,
                          TuneObserver* observer = nullptr, TuneCache* cache = nullptr);

}  // namespace stof::engine
