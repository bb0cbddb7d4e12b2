// The activations of engine::Activate (engine/core/activation.h, defined there in double) in
// fp32 on the device, for every kernel family's epilogue: the fused norm / elementwise kernels
// (kernels/norm/, compile-time choice), the mma.sync GEMM chain and the Hopper GEMM chain
// (run-time choice, one branch per element outside the GEMM loop).
// GELU is the tanh form with tanhf (CUDA: at most 2 ulp), so the result differs from the
// double host definition by ~1e-7 relative, far below fp16's 4.9e-4. ReLU maps NaN to 0, as
// the host does. Device-only.
#pragma once

#include "engine/core/activation.h"

namespace stof::kernels::common {

template <engine::Activation A>
__device__ __forceinline__ float Activate(float x) {
  if constexpr (A == engine::Activation::kGelu) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  } else if constexpr (A == engine::Activation::kRelu) {
    return x > 0.f ? x : 0.f;
  } else {
    return x;
  }
}

__device__ __forceinline__ float Activate(engine::Activation act, float x) {
  if (act == engine::Activation::kGelu) return Activate<engine::Activation::kGelu>(x);
  if (act == engine::Activation::kRelu) return Activate<engine::Activation::kRelu>(x);
  return x;
}

}  // namespace stof::kernels::common
