// The calls a backend runs for one transformer layer (engine/run/ drives them): a Linear with
// its epilogue, batched attention GEMMs, element-wise epilogues, normalisation (optionally
// fused with bias and residual), the fused GEMM+norm and GEMM-chain templates, the attention
// score ops and head layout changes. Every struct is plain data with opaque buffer pointers in
// the backend's memory space (fp32 on the CPU backend, fp16 on CUDA) and an opaque stream.
// Tunable parameters travel as a ParamMap (name -> integer) that each backend maps onto its
// kernel's parameter struct; an unknown name is an error there, so a plan cannot carry junk.
// Used by engine/backend.h (the virtual Run* functions), engine/cpu/ and kernels/cuda_backend.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "engine/core/activation.h"
#include "engine/core/status.h"
#include "engine/mask/mask.h"

namespace stof::engine {

using ParamMap = std::map<std::string, int64_t>;
// "bm=32 bk=32 stages=2" (sorted by name); "" when empty.
std::string ParamMapText(const ParamMap& p);

// out[m, n] = act(a[m, k] w[k, n] + bias[n]) + residual[m, n]. bias, residual optional;
// act together with residual is refused (no template needs it; cuBLASLt cannot do it).
struct GemmCall {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* w = nullptr;
  const void* bias = nullptr;
  Activation act = Activation::kNone;
  const void* residual = nullptr;
  void* out = nullptr;
  ParamMap params;  // CUDA: "algo" (cuBLASLt heuristic index)
  void* stream = nullptr;
};

// c[i] = alpha * a[i] (m x k) * (trans_b ? b[i]^T : b[i]) for i < batch, packed strides.
struct BatchedGemmCall {
  int64_t batch = 0, m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  bool trans_b = false;
  float alpha = 1.0f;
  void* stream = nullptr;
};

// out[r, c] = act(x[r, c] + bias[c]) + residual[r, c]: the Bias, GELU, ReLU and Add ops alone
// or fused (MI+MI). bias, residual optional.
struct EpilogueCall {
  int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  const void* bias = nullptr;
  Activation act = Activation::kNone;
  const void* residual = nullptr;
  void* out = nullptr;
  void* stream = nullptr;
};

// out = Norm(x + bias + residual): LayerNorm when beta is set, RMSNorm when beta is null.
// bias, residual optional. sum_out (optional) also receives x + bias + residual, for layers
// whose residual stream is read again later (GPT-2's add -> LayerNorm).
struct NormCall {
  int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  const void* bias = nullptr;
  const void* residual = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  float eps = 1e-5f;
  void* out = nullptr;
  void* sum_out = nullptr;
  ParamMap params;
  void* stream = nullptr;
};

// out = Norm(a w + bias + residual) in one kernel (CI+MI): the gemm_norm template.
struct GemmNormCall {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* w = nullptr;
  const void* bias = nullptr;
  const void* residual = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;  // null: RMSNorm
  float eps = 1e-5f;
  void* out = nullptr;
  ParamMap params;  // CUDA: bm, bk, warps, stages
  void* stream = nullptr;
};

// e = (act(a b + bias1)) d + bias2 with the intermediate on chip (CI+CI, MCFuser). Shapes as
// MCFuser's (batch, M, N, K, H): a [batch, m, k], b [k, n], d [n, h], e [batch, m, h]; strides
// in elements between batches (-1 packed, 0 shared).
struct GemmChainCall {
  int64_t batch = 1, m = 0, n = 0, k = 0, h = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* d = nullptr;
  int64_t stride_a = -1, stride_b = -1, stride_d = -1, stride_e = -1;
  const void* bias1 = nullptr;
  Activation act = Activation::kNone;
  const void* bias2 = nullptr;
  void* e = nullptr;
  ParamMap params;  // CUDA: bm, bn, bk, bh, warps (mhnk) or cluster, reduce, splits (Hopper)
  void* stream = nullptr;
};

// The attention score ops on s [bh, L, L] (one L x L mask for every (batch, head)):
// kScale: out = x * scale; kMask: masked -> -inf; kSoftmax: row softmax (an all -inf row gives
// zeros); kScaleMaskSoftmax: the three in one pass (masked -> 0).
enum class ScoreOp { kScale, kMask, kSoftmax, kScaleMaskSoftmax };
const char* ScoreOpName(ScoreOp op);
struct ScoresCall {
  ScoreOp op = ScoreOp::kScaleMaskSoftmax;
  int64_t bh = 0, seq_len = 0;
  const void* x = nullptr;
  void* out = nullptr;
  float scale = 1.0f;
  const Mask* mask = nullptr;  // kMask, kScaleMaskSoftmax
  void* stream = nullptr;
};

// Head layout changes around attention (cpu::SplitHeads / MergeHeads semantics): split reads
// head h of row (b, l) at src[(b L + l) src_row_stride + col_offset + h d] into dst [B, H, L, d];
// merge writes src [B, H, L, d] as dst [B, L, H d].
struct HeadsCall {
  bool split = true;
  int64_t batch = 0, seq_len = 0, heads = 0, head_dim = 0;
  const void* src = nullptr;
  int64_t src_row_stride = 0, col_offset = 0;  // split only
  void* dst = nullptr;
  void* stream = nullptr;
};

// What every backend checks first (dims >= 1, required pointers set, the act + residual rule);
// messages start with the call's name ("gemm call: k: must be at least 1, got 0").
Status ValidateGemmCall(const GemmCall& c);
Status ValidateBatchedGemmCall(const BatchedGemmCall& c);
Status ValidateEpilogueCall(const EpilogueCall& c);
Status ValidateNormCall(const NormCall& c);
Status ValidateGemmNormCall(const GemmNormCall& c);
Status ValidateGemmChainCall(const GemmChainCall& c);
Status ValidateScoresCall(const ScoresCall& c);
Status ValidateHeadsCall(const HeadsCall& c);

}  // namespace stof::engine
