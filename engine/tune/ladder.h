// The fusion ladder: the attention block's four exact variants (engine::MhaVariant, backend.h)
// side by side, from least to most fused: unfused (GEMM, scale+mask+softmax, GEMM), decomposed
// softmax (sd), decomposed + fused (sdf) and the fully fused sparse kernel. PredictLadder gives
// each rung from the analytical model (segment_model.h PredictMhaCall); the profiler's
// MeasureLadder (profiler/ladder_profile.h) measures them on a backend. Used by
// `stof profile ladder` and the studio's ladder view.
// Invariants: rungs come in LadderVariants() order; a predicted rung has measured == false and
// a basis starting "predicted"; the fused rung runs the caller's configuration (what runs) or
// DefaultFusedMhaConfig, SD/SDF sub_len 64.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"

namespace stof::engine {

struct LadderRung {
  MhaVariant variant = MhaVariant::kUnfused;
  std::string name;        // LadderRungName(variant)
  double us = 0;           // latency of the attention call alone
  double dram_bytes = 0;   // DRAM bytes moved; NaN when not known (counters unavailable)
  int kernels = 0;         // kernel launches per call (0 when not known)
  bool measured = false;   // false = predicted by the analytical model
  std::string basis;       // how the numbers were obtained, one line
  bool operator==(const LadderRung&) const = default;
};

// The softmax sub-vector length the ladder uses for SD and SDF.
inline constexpr int64_t kLadderSubLen = 64;

// unfused, sd, sdf, fused: least to most fused.
const std::vector<MhaVariant>& LadderVariants();
// "unfused", "decomposed (sd)", "decomposed + fused (sdf)", "fully fused".
const char* LadderRungName(MhaVariant v);

// The fully fused rung's kernel by default: the mma.sync configuration the MHA choice makes
// before the Hopper tile model (MhaChoice::portable of ChooseMhaConfig without overrides, asked
// in f16, the mma.sync kernels' type, with ModelMhaCapabilities: the kernels' own rules for
// that kernel; engine/select/mha_choice.h): Eq. 1 chooses row-wise or block-wise; block-wise
// takes Eq. 2's best candidate (feasible first, by score) in the kernel's preferred set
// (BLOCK_M, BLOCK_N >= 64, num_warps = BLOCK_M / 16), else its best supported one. Row-wise
// comes with the legal block fields 64 x 64 x 4. A shape only the Hopper kernel serves (grouped
// heads, q_len != seq_len, a head size other than 64 and 128): the choice's Hopper
// configuration. Errors: the choice's (a bad workload or mask size; a shape nothing runs on
// this device).
Expected<MhaConfig> DefaultFusedMhaConfig(const Workload& w, const Mask& mask,
                                          const DeviceSpec& device);

// The four rungs predicted for `w` with `mask` (seq_len x seq_len) on `device` (the H100 fit of
// the segment model, scaled by the device's peaks). The fused rung runs `fused` (what runs,
// engine/analysis/mha_run.h; null: DefaultFusedMhaConfig). Errors name the field: an invalid
// workload, a mask of the wrong size, an invalid device.
Expected<std::vector<LadderRung>> PredictLadder(const Workload& w, const Mask& mask,
                                                const DeviceSpec& device,
                                                const MhaConfig* fused = nullptr);

// [{"variant": "unfused", "name": ..., "us", "dram_bytes" (null when NaN), "kernels",
//   "measured", "basis"}, ...]: what `stof profile ladder --json` prints under "rungs".
nlohmann::json LadderToJson(const std::vector<LadderRung>& rungs);

}  // namespace stof::engine
