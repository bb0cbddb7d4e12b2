// --device for the CLI: a built-in device name (or alias), or "local" for the GPU of this
// machine when the build has CUDA (kernels/device_query.h).
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"

namespace stof::app {

engine::Expected<engine::DeviceSpec> ResolveDevice(const std::string& name);
std::string DeviceOptionHelp();

}  // namespace stof::app
