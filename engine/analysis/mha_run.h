// What the engine runs for a mask, workload and device: the one answer every view and command
// shows (`stof select`, `stof run`, `stof tune`'s default, `stof profile ladder`, the studio's
// Kernel selection, Fusion and ladder views, and a plan's `mha.runs`). STOF's Eq. 1 / Eq. 2
// pick (engine/select/kernel_select.h) is what the paper's models say; what runs is that pick
// restricted to what the kernels support and prefer and, on sm_90, the Hopper kernel where
// its tile model says faster: ChooseMhaConfig (engine/select/mha_choice.h), one function
// whatever the build. ChooseMhaRun asks it with a capabilities object: a CUDA build passes the
// kernels' own (kernels::MhaCapabilities) in a chooser (app/common/run_choice.h); a build
// without kernels uses ModelMhaRun, the same choice with the engine's model of those rules
// (ModelMhaCapabilities, engine/select/model_capabilities.h), and says so. Tested in
// tests/engine/mha_run_test.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "engine/select/mha_choice.h"

namespace stof::engine {

struct MhaRunChoice {
  std::string kernel;  // "block_wise", "row_wise"
  int64_t block_m = 0, block_n = 0, num_warps = 0;  // 0 for row-wise
  std::string family;  // "hopper" (wgmma, TMA, warp-specialized: sm_90), "portable" (mma.sync)
  std::string kernel_source, params_source;  // "eq1" / "eq2 (preferred set)" / "hopper tile model" ...
  std::string note;                          // why it differs from Eq. 2's pick, when it does
  // "kernels": the kernels' own rules (a CUDA build); "engine model": ModelMhaRun (a build
  // without kernels: the same choice over the engine's model of the kernels' rules); "tuned": a
  // tuner measured it faster.
  std::string decided_by = "kernels";
  bool operator==(const MhaRunChoice&) const = default;
};
using MhaRunChooser =
    std::function<Expected<MhaRunChoice>(const Mask&, const Workload&, const DeviceSpec&)>;

// What runs by `caps`' rules: ChooseMhaConfig without overrides (MhaRequest{}) on the workload
// as the kernels take it (f16 and bf16 as given, f32 asked about as f16), as a run choice
// (RunChoiceOf) with `decided_by`. Errors: ChooseMhaConfig's (a bad workload or mask size, a
// shape or dtype nothing runs on this device, with the reason).
Expected<MhaRunChoice> ChooseMhaRun(const Mask& mask, const Workload& workload,
                                    const DeviceSpec& device, const MhaKernelCapabilities& caps,
                                    const std::string& decided_by);

// What a build without kernels runs: ChooseMhaRun with ModelMhaCapabilities() and decided_by
// "engine model". The same function as the kernels' chooser over the same rules (the Hopper
// kernel's check modelled; engine/select/model_capabilities.h), so the same answer: Eq. 1's
// kernel; block-wise the best-scoring Eq. 2 candidate in the preferred set (else the best
// supported); on sm_90 the Hopper configuration where EstimateHopperTile says faster; bf16 the
// Hopper kernel only; grouped key/value heads, q_len != seq_len or a head size other than 64
// and 128 the Hopper tile model's tile and packing (an error off sm_90).
Expected<MhaRunChoice> ModelMhaRun(const Mask& mask, const Workload& workload,
                                   const DeviceSpec& device);

// What runs: `chooser`'s answer (the kernels' rules), or ModelMhaRun's without one. Errors:
// the chooser's (a head_dim the kernels do not support) or the model's (a bad mask size).
Expected<MhaRunChoice> ChooseRun(const MhaRunChooser& chooser, const Mask& mask,
                                 const Workload& workload, const DeviceSpec& device);

// The choice as the backend's MhaConfig (row-wise gets the legal block fields 64 x 64 x 4
// that the call's validation wants).
MhaConfig RunConfig(const MhaRunChoice& c);
// A tuner's or a plan's configuration as a choice (family from the warp count).
MhaRunChoice RunChoiceOf(const MhaConfig& c, const std::string& decided_by);
// An MHA choice as a run choice: the kernel it runs (MhaChoiceKernelName), its block fields
// and family, kernel_source, params_source and note, with `decided_by`.
MhaRunChoice RunChoiceOf(const MhaChoice& c, const std::string& decided_by);

// {"kernel", "block_m", "block_n", "num_warps", "family", "kernel_source", "params_source",
//  "decided_by", "note" (when set)}: the JSON of `stof select`, the studio's state and plans.
nlohmann::json MhaRunChoiceJson(const MhaRunChoice& c);
// "block_wise 64x128, 5 warps: Hopper kernel (wgmma, TMA, warp-specialized); kernel from eq1,
// parameters from hopper tile model"; "(the engine's model ...)" appended for ModelMhaRun's.
std::string MhaRunChoiceText(const MhaRunChoice& c);
// "block_wise 64x64 w5 (Hopper)": the short form of tables and bars.
std::string MhaRunChoiceShort(const MhaRunChoice& c);

}  // namespace stof::engine
