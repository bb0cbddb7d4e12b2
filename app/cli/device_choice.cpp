// ResolveDevice: built-ins from the engine; "local" queries GPU 0 through kernels/ when built
// with CUDA and says why not otherwise.
#include "app/cli/device_choice.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/device_query.h"
#endif

namespace stof::app {

engine::Expected<engine::DeviceSpec> ResolveDevice(const std::string& name) {
  if (name == "local") {
#ifdef STOF_WITH_KERNELS
    auto spec = kernels::QueryDeviceSpec(0);
    if (!spec.IsOk()) return engine::Error{"--device local: " + spec.Message()};
    return spec;
#else
    return engine::Error{"--device local: this build has no CUDA (STOF_CUDA=OFF); name a "
                         "built-in device instead"};
#endif
  }
  auto spec = engine::FindBuiltinDevice(name);
  if (!spec.IsOk()) return engine::Error{"--" + spec.Message()};
  return spec;
}

std::string DeviceOptionHelp() {
  std::string names;
  for (const auto& d : engine::BuiltinDevices()) names += (names.empty() ? "" : ", ") + d.name;
  return "Device: a built-in (" + names + "; short names like h100 work) or 'local' (this GPU)";
}

}  // namespace stof::app
