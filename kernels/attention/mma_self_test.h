// A debug check of the tensor-core fragment helpers (kernels/common/mma_sync.cuh) on one
// 16 x 16 x 16 product, so a fragment-layout error shows up directly instead of as a wrong
// attention output.
// CUDA-free header; called by tests/gpu/mma_fragment_test.cpp.
#pragma once

#include "engine/core/status.h"

namespace stof::kernels {

// One warp computes, with exactly the helpers the block-wise kernel uses:
//   c_nk  = A * B with B given as B^T stored row-major [n][k] (the K-tile path: LoadBFromNK),
//   c_kn  = A * B with B stored row-major [k][n]               (the V-tile path: LoadBFromKN),
//   c_pv  = fp16(A * B) * B, the first product's accumulators turned into the A operand in
//           registers (AccumToA), the second through the V-tile path.
// a and b are host 16 x 16 row-major fp32 matrices (rounded to fp16 on upload); outputs are
// host 16 x 16 row-major fp32. Synchronous.
engine::Status RunMmaSelfTest(const float* a, const float* b, float* c_nk, float* c_kn,
                              float* c_pv);

}  // namespace stof::kernels
