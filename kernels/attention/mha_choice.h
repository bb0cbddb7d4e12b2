// The kernels' side of the MHA choice (engine/select/mha_choice.h, where the logic lives): what
// this build's attention kernels can run (MhaCapabilities: the mma.sync block-wise kernel's
// configurations, the Hopper kernel's, SD / SDF's), and ChooseMhaConfig /
// ChooseMhaConfigForPatterns bound to them, under the names the kernels and their callers use.
// A build without kernels runs the same choice with engine::ModelMhaCapabilities
// (engine/select/model_capabilities.h; tests/gpu/mha_capabilities_test.cpp ties the two).
// CUDA-free header. Used by PreparedMha (prepared_mha.h), `stof select` (through
// app/common/run_choice.h), `stof bench mha`, the C API and the studio's selection view.
#pragma once

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_set.h"
#include "engine/select/mha_choice.h"

namespace stof::kernels {

using engine::MhaChoice;
using engine::MhaChoiceKernelName;
using engine::MhaKernelRequest;
using engine::MhaKernelRequestName;
using engine::MhaRequest;
using engine::ParseMhaKernelRequest;

// What this build's attention kernels run (their own Check* rules; one instance).
const engine::MhaKernelCapabilities& MhaCapabilities();

// engine::ChooseMhaConfig with MhaCapabilities().
engine::Expected<MhaChoice> ChooseMhaConfig(const engine::Mask& mask,
                                            const engine::Workload& workload,
                                            const engine::DeviceSpec& device,
                                            const MhaRequest& request);

// engine::ChooseMhaConfigForPatterns with MhaCapabilities().
engine::Expected<MhaChoice> ChooseMhaConfigForPatterns(const engine::MaskSet& set,
                                                       const engine::Workload& workload,
                                                       const engine::DeviceSpec& device,
                                                       const MhaRequest& request);

}  // namespace stof::kernels
