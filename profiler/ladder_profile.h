// Measuring the fusion ladder (engine/tune/ladder.h) on a backend: the attention call alone,
// packed q, k, v, o of random fp16-representable values, once per variant (unfused, sd, sdf,
// fully fused), each measured by a Profiler. Used by `stof profile ladder` on a GPU machine and
// the studio's ladder view; PredictLadder is the fallback without one.
// Invariants: the buffers are allocated once, freed on every return; every returned rung has
// measured == true and a basis saying where its latency, bytes and kernel count came from; the
// fused rung runs Backend::MhaConfigChoices' first (the backend's own pick), SD/SDF
// engine::kLadderSubLen. CUDA-free: only engine::Backend and Profiler are used.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "engine/tune/ladder.h"
#include "profiler/profiler.h"

namespace stof::profiler {

// `progress(rung name, fraction done)` is called before each rung (may be empty); returning
// false stops and returns the rungs measured so far. `options` sets the passes (runs,
// metrics...); its label, flop_count, min_bytes and peaks are set per rung (flop_count: 4 d
// per attended (row, key) per head, the work every variant must do; min_bytes: q, k, v read and
// o written once; peaks: the backend's DeviceSpec). dram_bytes is NaN and kernels 0 when the
// counters / the activity trace were unavailable (the basis says why). Errors: an invalid
// workload, a mask that is not seq_len x seq_len, an allocation or a run that fails (named by
// its rung), a rung whose latency could not be measured (the profiler's reason).
engine::Expected<std::vector<engine::LadderRung>> MeasureLadder(
    engine::Backend& b, Profiler& p, const engine::Workload& w, const engine::Mask& mask,
    const std::function<bool(const std::string&, double)>& progress,
    const MeasureOptions& options = MeasureOptions{});

}  // namespace stof::profiler
