// `stof device`: the built-in device table the analytical models use, and this machine's GPU
// (queried through kernels/ on a CUDA build) or the reason there is none. scripts/test prints
// it so a run without a GPU says why its gpu tests are skipped.
#include <cstdio>
#include <memory>

#include "app/cli/cli_common.h"
#include "app/cli/device_choice.h"

namespace stof::app {

namespace {
nlohmann::json DeviceJson(const engine::DeviceSpec& d) {
  return {{"name", d.name},
          {"sm_count", d.sm_count},
          {"smem_per_sm_bytes", d.smem_per_sm_bytes},
          {"smem_per_block_bytes", d.smem_per_block_bytes},
          {"max_warps_per_sm", d.max_warps_per_sm},
          {"l2_bytes", d.l2_bytes},
          {"dram_bytes_per_s", d.dram_bytes_per_s},
          {"fp16_tensor_flops", d.fp16_tensor_flops},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"source", d.source}};
}

void PrintRow(const engine::DeviceSpec& d) {
  std::printf("  %-26s %4d SMs  %4lld KiB smem/SM  %3d warps/SM  %4lld MiB L2  %6.0f GB/s  %6.1f TFLOP/s  (%s)\n",
              d.name.c_str(), d.sm_count, static_cast<long long>(d.smem_per_sm_bytes / 1024),
              d.max_warps_per_sm, static_cast<long long>(d.l2_bytes >> 20), d.dram_bytes_per_s / 1e9,
              d.fp16_tensor_flops / 1e12, d.source.c_str());
}

int RunDevice(bool json) {
  auto local = ResolveDevice("local");
  if (json) {
    nlohmann::json builtins = nlohmann::json::array();
    for (const auto& d : engine::BuiltinDevices()) builtins.push_back(DeviceJson(d));
    nlohmann::json j = {{"builtin", builtins}};
    if (local.IsOk()) j["local"] = DeviceJson(*local);
    else j["local_unavailable"] = local.Message();
    PrintJson("device", j);
    return kExitOk;
  }
  std::printf("this machine:\n");
  if (local.IsOk()) PrintRow(*local);
  else std::printf("  no GPU: %s\n", local.Message().c_str());
  std::printf("built-in (for prediction without a GPU; --device NAME):\n");
  for (const auto& d : engine::BuiltinDevices()) PrintRow(d);
  return kExitOk;
}
}  // namespace

void RegisterDeviceCommand(CLI::App& app, int* exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("device", "This machine's GPU and the built-in device specs");
  cmd->add_flag("--json", *json, "Print machine-readable JSON");
  cmd->callback([json, exit_code] { *exit_code = RunDevice(*json); });
}

}  // namespace stof::app
