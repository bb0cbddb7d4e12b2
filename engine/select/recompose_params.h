// The softmax recomposition rungs (SD: softmax decomposition, SDF: decomposition + fusion;
// docs/kernels.md): their names, tunable parameters and the rules of what the kernels run, as
// host arithmetic: the one copy, shared by the MHA choice (engine/select/mha_choice.h, through
// the kernels' capabilities and the engine's model of them, model_capabilities.h) and the
// kernels that run them (kernels/recomposition/recomposed_attention.h, whose SDF GEMM kernels
// size their shared memory by the formulas below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/core/status.h"

namespace stof::engine {

enum class RecomposeVariant { kDecomposed, kRecomposed };  // SD, SDF
const char* RecomposeVariantName(RecomposeVariant v);      // "sd", "sdf"

// The tunable parameters. sub_len (T) is the sub-vector length of the decomposition, which is
// also the N tile of the SDF Q K^T kernel and the K tile of its P V kernel; block_m (BM) is
// the query rows of one tile (SDF: one warp per 16 rows; SD: rows per LS/GS thread block).
struct RecomposeParams {
  int sub_len = 64;   // T: 64 or 128
  int block_m = 64;   // BM: 64 or 128
  bool operator==(const RecomposeParams&) const = default;
};

// Opt-in shared memory per block of H100 / H200 (227 KiB), the default for host-only checks.
inline constexpr int64_t kRecomposeDefaultSmemLimit = 232448;

// The SDF GEMM kernels' shared memory. Rows are padded by 8 halves so ldmatrix rows fall on
// distinct banks.
inline constexpr int kRecomposeSmemPad = 8;
// Q K^T + LS: the Q tile and the K tile (the x' staging tile reuses them afterwards).
constexpr size_t RecomposeQkSmemBytes(int head_dim, int sub_len, int block_m) {
  const size_t qk = static_cast<size_t>(block_m + sub_len) *
                    static_cast<size_t>(head_dim + kRecomposeSmemPad) * 2;
  const size_t stage = static_cast<size_t>(block_m) *
                       static_cast<size_t>(sub_len + kRecomposeSmemPad) * 2;
  return qk > stage ? qk : stage;
}
// GS + P V: two stages of (x' tile, V tile, BM factors r'); the O staging reuses them
// afterwards. Every part is a multiple of 16 bytes (cp.async destinations stay aligned).
constexpr size_t RecomposePvSmemBytes(int head_dim, int sub_len, int block_m) {
  const size_t stage = static_cast<size_t>(block_m) *
                           static_cast<size_t>(sub_len + kRecomposeSmemPad) * 2 +
                       static_cast<size_t>(sub_len) *
                           static_cast<size_t>(head_dim + kRecomposeSmemPad) * 2 +
                       static_cast<size_t>(block_m) * 4;
  const size_t out = static_cast<size_t>(block_m) *
                     static_cast<size_t>(head_dim + kRecomposeSmemPad) * 2;
  return 2 * stage > out ? 2 * stage : out;
}

// Dynamic shared memory of the SDF GEMM kernels (the larger of Q K^T and P V), in bytes; 0
// for SD (its kernels use a few hundred bytes of static shared memory) or unsupported values.
int64_t RecomposeSmemBytes(const RecomposeParams& p, int64_t head_dim, RecomposeVariant v);

// Ok when `p` is supported for head_dim (64 or 128) and the variant within
// `smem_limit_bytes` per block; otherwise an error naming the field ("recomposed MHA (sdf):
// params.sub_len: expected 64 or 128 (T, whole 64-bit mask words), got 32").
Status CheckRecomposeParams(const RecomposeParams& p, int64_t head_dim, RecomposeVariant v,
                            int64_t smem_limit_bytes = kRecomposeDefaultSmemLimit);

// Every supported setting for head_dim and the variant, sub_len-major then block_m (empty for
// an unsupported head_dim).
std::vector<RecomposeParams> SupportedRecomposeParams(
    int64_t head_dim, RecomposeVariant v, int64_t smem_limit_bytes = kRecomposeDefaultSmemLimit);

}  // namespace stof::engine
