// CPU reference implementations in fp32: masked multi-head attention and the single ops
// (GEMM, bias, GELU, LayerNorm, softmax) every GPU kernel is checked against. Simple loops,
// written for clarity; used by CpuBackend and by GPU tests. Row-major, contiguous.
#pragma once

#include <cstdint>

#include "engine/core/activation.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"

namespace stof::engine::cpu {

// O = softmax(Q K^T * scale, masked) V for q, o of shape [B, H, L_q, d] and k, v of shape
// [B, H_kv, L_k, d] (w.QLen(), w.KvHeads(), w.seq_len; query head h reads key/value head
// h / (H / H_kv)), one L_q x L_k mask shared by every (batch, head). scale 0 means 1/sqrt(d)
// (T5 layers pass 1: no scaling). Masked elements are excluded (not -inf added), so a fully
// masked row gives zeros, never NaN. Accumulates in double. Errors: mask size != L_q x L_k.
Status MaskedAttention(const float* q, const float* k, const float* v, float* o,
                       const Workload& w, const Mask& mask, float scale = 0.0f);

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

// --- The ops of a transformer layer (engine/graph), as the fused kernels compute them ---

// x[i] = Activate(act, x[i]) (engine/core/activation.h: GELU is the tanh form).
void ApplyActivation(float* x, int64_t n, Activation act);

// y = x / sqrt(mean(x^2) + eps) * gamma over each row (T5's RMSNorm: no mean, no beta).
void RmsNorm(const float* x, float* y, const float* gamma, int64_t rows, int64_t cols,
             float eps = 1e-6f);

// out[r,c] = act(sum_p a[r,p] w[p,c] + bias[c]) + residual[r,c]: a Linear layer with its
// epilogue (a [m,k], w [k,n], out [m,n], row-major). bias and residual may be null. Double
// accumulation.
void LinearEpilogue(const float* a, const float* w, const float* bias, Activation act,
                    const float* residual, float* out, int64_t m, int64_t n, int64_t k);

// y = Norm(x + bias + residual) with LayerNorm (beta != null) or RMSNorm (beta == null);
// bias [cols] and residual [rows, cols] may be null. y may alias x.
void BiasAddNorm(const float* x, const float* bias, const float* residual, const float* gamma,
                 const float* beta, float* y, int64_t rows, int64_t cols, float eps);

// Scale + mask + softmax of attention scores s [bh, L, L] in place, one L x L mask for every
// (batch, head): masked elements become 0 and a fully masked row becomes all zeros (never NaN).
// Errors: mask size != L.
Status ScaleMaskSoftmax(float* s, int64_t bh, int64_t seq_len, const Mask& mask, float scale);

// Head layout changes of the attention block. SplitHeads reads head h of row (b, l) from
// src[(b*L + l) * src_row_stride + col_offset + h*d + t] and writes dst [B, H, L, d];
// MergeHeads writes src [B, H, L, d] as dst [B, L, H*d].
void SplitHeads(const float* src, int64_t src_row_stride, int64_t col_offset, float* dst,
                int64_t batch, int64_t seq_len, int64_t heads, int64_t head_dim);
void MergeHeads(const float* src, float* dst, int64_t batch, int64_t seq_len, int64_t heads,
                int64_t head_dim);

}  // namespace stof::engine::cpu
