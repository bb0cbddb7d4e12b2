// FLOPs and minimum DRAM bytes of one op, from its kind and tensor shapes (formulas and the
// per-element conventions in docs/fusion.md). Used by graph_build.cpp; the tuner and the
// studio read the numbers from the built Op.
// Invariants: bytes = dtype size x (every input's elements + the output's elements), each
// tensor counted once (weights, biases, norm scales and the L x L mask included); GEMM flops =
// 2 M N K (+ M N with a bias); BatchGEMM = 2 x output elements x K; others = a fixed count per
// output element (FlopsPerElement).
#pragma once

#include <cstdint>

#include "engine/core/workload.h"
#include "engine/graph/op.h"

namespace stof::engine {

// Element-wise and reduction ops: FLOPs per output element (a convention: MI ops are bound by
// bytes, the count only orders them). 0 for GEMM and BatchGEMM.
int64_t FlopsPerElement(OpKind k);
int64_t OpFlops(const Op& op);
int64_t OpBytes(const Op& op, DType dtype);

}  // namespace stof::engine
