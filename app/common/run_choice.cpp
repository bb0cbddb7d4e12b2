// MakeMhaRunChooser (run_choice.h).
#include "app/common/run_choice.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/attention/prepared_mha.h"
#endif

namespace stof::app {

engine::MhaRunChooser MakeMhaRunChooser() {
#ifdef STOF_WITH_KERNELS
  // The engine's one choice (ChooseMhaRun) over the kernels' own rules; ModelMhaRun runs the
  // same with the engine's model of them.
  return [](const engine::Mask& mask, const engine::Workload& workload,
            const engine::DeviceSpec& device) -> engine::Expected<engine::MhaRunChoice> {
    return engine::ChooseMhaRun(mask, workload, device, kernels::MhaCapabilities(), "kernels");
  };
#else
  return nullptr;
#endif
}

}  // namespace stof::app
