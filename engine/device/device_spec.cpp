// Built-in device table and lookup. Figures are the vendors' data-sheet peaks (dense fp16
// tensor rate with fp32 accumulation, peak DRAM bandwidth); shared-memory and warp limits are
// the CUDA programming guide's per compute capability. The H200's L2 (60 MiB) is what
// PyTorch reported for a lent H200; the H100's (50 MiB) is its data sheet's.
#include "engine/device/device_spec.h"

#include <algorithm>
#include <cctype>

namespace stof::engine {

namespace {
constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

Status DeviceSpec::Validate(const std::string& what) const {
  auto bad = [&](const char* field) {
    return MakeError(what + ": " + field + ": must be positive");
  };
  if (name.empty()) return MakeError(what + ": name: must not be empty");
  if (sm_count <= 0) return bad("sm_count");
  if (smem_per_sm_bytes <= 0) return bad("smem_per_sm_bytes");
  if (smem_per_block_bytes <= 0) return bad("smem_per_block_bytes");
  if (max_warps_per_sm <= 0) return bad("max_warps_per_sm");
  if (l2_bytes <= 0) return bad("l2_bytes");
  if (!(dram_bytes_per_s > 0)) return bad("dram_bytes_per_s");
  if (!(fp16_tensor_flops > 0)) return bad("fp16_tensor_flops");
  return Status::Ok();
}

const std::vector<DeviceSpec>& BuiltinDevices() {
  static const std::vector<DeviceSpec> kDevices = {
      {"A100-PCIe-40GB", 108, 164 * kKiB, 163 * kKiB, 64, 40 * kMiB, 1555e9, 312e12, 8, 0,
       "built-in"},
      {"RTX-4090", 128, 100 * kKiB, 99 * kKiB, 48, 72 * kMiB, 1008e9, 165.2e12, 8, 9,
       "built-in"},
      {"H100-SXM-80GB", 132, 228 * kKiB, 227 * kKiB, 64, 50 * kMiB, 3.35e12, 989.4e12, 9, 0,
       "built-in"},
      {"H200", 132, 228 * kKiB, 227 * kKiB, 64, 60 * kMiB, 4.8e12, 989.4e12, 9, 0, "built-in"},
  };
  return kDevices;
}

Expected<DeviceSpec> FindBuiltinDevice(const std::string& name) {
  const std::string want = Lower(name);
  const auto& all = BuiltinDevices();
  for (const DeviceSpec& d : all)
    if (Lower(d.name) == want) return d;
  // Short aliases: a unique built-in whose lower-case name contains the query.
  const DeviceSpec* hit = nullptr;
  int hits = 0;
  if (!want.empty()) {
    for (const DeviceSpec& d : all) {
      if (Lower(d.name).find(want) != std::string::npos) {
        hit = &d;
        ++hits;
      }
    }
  }
  if (hits == 1) return *hit;
  std::string known;
  for (const DeviceSpec& d : all) known += (known.empty() ? "" : ", ") + d.name;
  return MakeError("device: unknown device '" + name + "'; known: " + known);
}

}  // namespace stof::engine
