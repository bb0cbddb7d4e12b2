// MakeRunBackend, LocalGpuAvailable, ResolveMaskName and SchemeFromText (run_common.h).
#include "app/cli/run_common.h"

#include <filesystem>

#include "app/cli/graph_args.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/fusion/default_scheme.h"
#include "engine/mask/mask_spec.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/cuda_backend.h"
#endif

namespace stof::app {

std::unique_ptr<engine::Backend> MakeRunBackend(const std::string& device, std::string* error) {
  if (device == "cpu") return std::make_unique<engine::CpuBackend>();
#ifdef STOF_WITH_KERNELS
  if (device == "local") {
    auto b = kernels::CudaBackend::Create(0);
    if (b.IsOk()) return std::move(*b);
    *error = b.Message() + " (use --device cpu for the reference backend)";
    return nullptr;
  }
#else
  if (device == "local") {
    *error = "--device local: this build has no CUDA (STOF_CUDA=OFF); use --device cpu";
    return nullptr;
  }
#endif
  *error = "--device: expected local or cpu, got '" + device + "'";
  return nullptr;
}

bool LocalGpuAvailable() {
#ifdef STOF_WITH_KERNELS
  return kernels::CudaBackend::Create(0).IsOk();
#else
  return false;
#endif
}

void ResolveMaskName(MaskSourceOptions* mask) {
  if (!mask->mask_file.empty() && mask->pattern.empty() &&
      !std::filesystem::exists(mask->mask_file)) {
    for (const auto& n : engine::MaskPatternNames())
      if (n == mask->mask_file) {
        mask->pattern = n;
        mask->mask_file.clear();
      }
  }
}

engine::Expected<engine::FusionScheme> SchemeFromText(const std::string& sch,
                                                      const engine::OpGraph& g) {
  if (sch.empty() || sch == "default") return engine::DefaultScheme(g);
  if (sch == "unfused") return engine::FusionScheme::OpByOp(g);
  if (sch == "chains") return engine::DefaultScheme(g, {true, false});
  if (sch == "all") return engine::DefaultScheme(g, {true, true});
  return ParseScheme(sch, g);
}

}  // namespace stof::app
