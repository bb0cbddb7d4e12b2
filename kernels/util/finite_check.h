// Device-side output checks used by every kernel's reference test: poison a buffer (all bits
// set: NaN in fp16, bf16 and fp32) before a run, then count non-finite values after it, so an
// element a kernel forgot to write or computed as NaN/inf is caught. CUDA-free header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/status.h"
#include "engine/core/workload.h"

namespace stof::kernels {

// Sets every byte of [ptr, ptr + bytes) to 0xFF on `stream` (opaque cudaStream_t).
engine::Status PoisonBuffer(void* ptr, size_t bytes, void* stream = nullptr);

// Number of NaN or inf values among `count` elements of `dtype` at device pointer `ptr`
// (synchronises the stream).
engine::Expected<int64_t> CountNonFinite(const void* ptr, int64_t count, engine::DType dtype,
                                         void* stream = nullptr);

}  // namespace stof::kernels
