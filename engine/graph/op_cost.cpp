// Op FLOPs and bytes (see op_cost.h).
#include "engine/graph/op_cost.h"

namespace stof::engine {

int64_t FlopsPerElement(OpKind k) {
  switch (k) {
    case OpKind::kGemm:
    case OpKind::kBatchGemm: return 0;
    case OpKind::kBias:
    case OpKind::kAdd:
    case OpKind::kScale:
    case OpKind::kMask:
    case OpKind::kRelu: return 1;
    case OpKind::kSoftmax: return 5;    // max, subtract, exp, sum, divide
    case OpKind::kLayerNorm: return 8;  // mean 1, centre 1, square + sum 2, normalise 2, affine 2
    case OpKind::kRmsNorm: return 4;    // square + sum 2, normalise 1, scale 1
    case OpKind::kGelu: return 8;       // tanh form: cube, 2 mul-add, tanh, add, 2 mul
  }
  return 0;
}

int64_t OpFlops(const Op& op) {
  const int64_t out = op.output.Elements();
  if (op.kind == OpKind::kGemm) {
    // inputs[0]: activation [..., K]; inputs[1]: weight [K, N]; output [..., N].
    const int64_t k = op.inputs.at(1).dims.at(0);
    return 2 * out * k + (op.has_bias ? out : 0);
  }
  if (op.kind == OpKind::kBatchGemm) {
    // inputs[0]: [..., M, K] (Q for QK^T, probabilities for PV).
    return 2 * out * op.inputs.at(0).dims.back();
  }
  return FlopsPerElement(op.kind) * out;
}

int64_t OpBytes(const Op& op, DType dtype) {
  int64_t elements = op.output.Elements();
  for (const TensorRef& t : op.inputs) elements += t.Elements();
  return elements * DTypeBytes(dtype);
}

}  // namespace stof::engine
