// CPU reference implementations in fp32: masked multi-head attention and the single ops
// (GEMM, bias, GELU, LayerNorm, softmax) every GPU kernel is checked against. Simple loops,
// written for clarity; used by CpuBackend and by GPU tests. Row-major, contiguous.
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"

namespace stof::engine::cpu {

// O = softmax(Q K^T * scale, masked) V for q, k, v, o of shape [B, H, L, d], one mask shared
// by every (batch, head). scale = 1/sqrt(d). Masked elements are excluded (not -inf added), so
// a fully masked row gives zeros, never NaN. Accumulates in double. Errors: mask size != L.
Status MaskedAttention(const float* q, const float* k, const float* v, float* o,
                       const Workload& w, const Mask& mask);

// C[M,N] = alpha * op(A) op(B) + beta * C; op(A) is [M,K] (A stored [K,M] when trans_a),
// op(B) is [K,N] (B stored [N,K] when trans_b). Accumulates in double.
void Gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
          bool trans_a = false, bool trans_b = false, float alpha = 1.0f, float beta = 0.0f);

// x[rows, cols] += bias[cols].
void BiasAdd(float* x, const float* bias, int64_t rows, int64_t cols);

// GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)) (what torch.nn.GELU() computes by default).
void Gelu(float* x, int64_t n);

// y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of length cols (biased var).
void LayerNorm(const float* x, float* y, const float* gamma, const float* beta, int64_t rows,
               int64_t cols, float eps = 1e-5f);

// Row-wise softmax in place over rows of length cols (max-subtracted).
void Softmax(float* x, int64_t rows, int64_t cols);

}  // namespace stof::engine::cpu
