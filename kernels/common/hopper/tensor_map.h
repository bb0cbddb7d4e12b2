// Host side of TMA: encodes the 128-byte CUtensorMap of a 2- to 5-D view of a 2-byte tensor
// (fp16 or bf16; any element strides above the contiguous columns), through the driver's
// cuTensorMapEncodeTiled, fetched once from the runtime (no link against libcuda). Used by
// the Hopper attention launch (kernels/attention_hopper/hopper_attention.cpp): K and V as 4-D
// [B][H_kv][L_k][d], Q and O as 5-D [B][H_kv][group][L_q][d], so one box can hold the rows of
// several query heads that share a key/value head (packed GQA).
// Internal to kernels/ (it names the driver's CUtensorMap type).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "engine/core/status.h"

namespace stof::kernels::hopper {

constexpr int kMaxTensorRank = 5;

// A 2-byte tensor (fp16, or bf16 when `bf16`) of `rank` dimensions, innermost first:
// element (i0, i1, ...) at base + i0 + i1 * stride[1] + i2 * stride[2] + ... (strides in
// elements; stride[0] is 1 and not read).
struct TensorView {
  const void* base = nullptr;
  bool bf16 = false;
  int rank = 4;
  int64_t extent[kMaxTensorRank] = {};
  int64_t stride[kMaxTensorRank] = {};
};

// The tiled map of `view` with boxes of box[0] x box[1] x ... elements and the 128-byte
// swizzle (box[0] * 2 <= 128; each box extent at most 256). Elements outside the tensor read
// as zeros and are not written. Errors name `what` and the broken rule (alignment, stride
// multiple of 16 bytes, box limits) or the driver's code.
// The map is written to `*out` (CUtensorMap is 64-byte aligned: not returned by value).
engine::Status EncodeTensorMap(const TensorView& view, const int (&box)[kMaxTensorRank],
                               const char* what, CUtensorMap* out);

}  // namespace stof::kernels::hopper
