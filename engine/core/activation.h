// Activation: the element-wise nonlinearity a GEMM epilogue or an op applies, shared by the op
// graphs, the CPU reference, the CUDA kernels (kernels/gemm, kernels/norm, kernels/gemm_chain)
// and plans. GELU is the tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): what
// cuBLASLt's GELU epilogue computes and GPT-2 uses ("gelu_new"); BERT's erf form differs from
// it by at most about 1e-3 (docs/fusion.md), and the model comparisons use the tanh form on
// both sides.
#pragma once

#include <cmath>
#include <string>

#include "engine/core/status.h"

namespace stof::engine {

enum class Activation { kNone, kGelu, kRelu };

inline const char* ActivationName(Activation a) {
  switch (a) {
    case Activation::kGelu: return "gelu";
    case Activation::kRelu: return "relu";
    default: return "none";
  }
}

// "none", "gelu", "relu"; the message names `what`.
inline Expected<Activation> ParseActivation(const std::string& s, const std::string& what) {
  if (s == "none") return Activation::kNone;
  if (s == "gelu") return Activation::kGelu;
  if (s == "relu") return Activation::kRelu;
  return MakeError(what + ": expected none, gelu or relu, got '" + s + "'");
}

// The host definition every kernel is checked against (double math).
inline double Activate(Activation a, double x) {
  switch (a) {
    case Activation::kGelu: {
      constexpr double kSqrt2OverPi = 0.7978845608028654;
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    }
    case Activation::kRelu: return x > 0 ? x : 0.0;
    default: return x;
  }
}

}  // namespace stof::engine
