// Workload: the shape of one attention problem (batch, heads, sequence length, head size,
// dtype). Shared by kernel selection, the CPU reference, backends and plans.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"

namespace stof::engine {

enum class DType { kF16, kBF16, kF32 };

const char* DTypeName(DType t);                      // "f16", "bf16", "f32"
Expected<DType> ParseDType(const std::string& name);  // accepts the names above (+ "fp16" etc.)
int DTypeBytes(DType t);

struct Workload {
  // The accepted ranges (Validate, the op graphs, and the command-line checks of app/).
  static constexpr int64_t kMaxBatch = 65536, kMaxHeads = 1024, kMaxHeadDim = 256;
  // Also the mask's limit (Mask::kMaxLen is this value): an L x L mask at this L is 128 MiB.
  static constexpr int64_t kMaxSeqLen = 32768;

  int64_t batch = 8;
  int64_t seq_len = 1024;
  int64_t heads = 12;
  int64_t head_dim = 64;
  DType dtype = DType::kF16;

  // Each field in range (batch, heads >= 1; 1 <= seq_len <= 32768; 1 <= head_dim <= 256);
  // the message names `what` and the field.
  Status Validate(const std::string& what = "workload") const;
  bool operator==(const Workload&) const = default;
};

}  // namespace stof::engine
