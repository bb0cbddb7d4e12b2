// Host side of TMA: encodes the 128-byte CUtensorMap of a 4-D fp16 tensor view [B][H][L][d]
// (any element strides between rows, heads and batches), through the driver's
// cuTensorMapEncodeTiled, fetched once from the runtime (no link against libcuda). Used by
// the Hopper attention launch (kernels/attention_hopper/hopper_attention.cpp) for Q, K, V and O.
// Internal to kernels/ (it names the driver's CUtensorMap type).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "engine/core/status.h"

namespace stof::kernels::hopper {

// A 2-byte tensor (fp16, or bf16 when `bf16`) addressed as base + b * batch + h * head +
// r * row + c (strides in elements).
struct TensorView4d {
  const void* base = nullptr;
  bool bf16 = false;
  int64_t cols = 0, rows = 0, heads = 0, batch = 0;
  int64_t row_stride = 0, head_stride = 0, batch_stride = 0;
};

// The tiled map of `view` with boxes of box_cols x box_rows elements (one head of one batch)
// and the 128-byte swizzle (box_cols * 2 <= 128). Rows past `rows` read as zeros and are not
// written. Errors name `what` and the broken rule (alignment, stride multiple of 16 bytes, box
// limits) or the driver's code.
// The map is written to `*out` (CUtensorMap is 64-byte aligned: not returned by value).
engine::Status EncodeTensorMap4d(const TensorView4d& view, int box_cols, int box_rows,
                                 const char* what, CUtensorMap* out);

}  // namespace stof::kernels::hopper
