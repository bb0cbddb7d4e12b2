// ResolveDevice: built-ins from the engine; "local" queries GPU 0 through kernels/ when built
// with CUDA and says why not otherwise.
#include "app/cli/device_choice.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/device_query.h"
#endif

namespace stof::app {

bool LocalGpuPresent() {
#ifdef STOF_WITH_KERNELS
  return kernels::CudaDeviceCount().IsOk();
#else
  return false;
#endif
}

std::optional<engine::DeviceSpec> PredictedDevice(const std::string& word) {
  if (word == "local" || word == "cpu" || word == "auto") return std::nullopt;
  auto spec = engine::FindBuiltinDevice(word == "predict" ? "H100-SXM-80GB" : word);
  if (!spec.IsOk()) return std::nullopt;
  return *spec;
}

engine::Expected<engine::DeviceSpec> ResolveDevice(const std::string& word) {
  const std::string name = word == "auto" ? (LocalGpuPresent() ? "local" : "H100-SXM-80GB") : word;
  if (name == "cpu")
    return engine::Error{"--device cpu: the CPU reference has no GPU to model here; name local, "
                         "auto or a built-in device"};
  if (name == "predict") return *PredictedDevice("predict");
  if (name == "local") {
#ifdef STOF_WITH_KERNELS
    auto spec = kernels::QueryDeviceSpec(0);
    // Not a usage error: the command line is right, this machine has no usable GPU.
    if (!spec.IsOk()) return engine::Error{"this GPU (--device local): " + spec.Message()};
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

std::string DeviceOptionHelp(const std::string& accepted) {
  std::string names;
  for (const auto& d : engine::BuiltinDevices()) names += (names.empty() ? "" : ", ") + d.name;
  return "The device this command runs on or predicts for: local (this GPU), cpu (the fp32 CPU "
         "reference), a built-in (" + names + "; h100 works; predicted), auto (local with a GPU, "
         "else the H100 built-in), predict (the H100 built-in). Here: " + accepted;
}

}  // namespace stof::app
