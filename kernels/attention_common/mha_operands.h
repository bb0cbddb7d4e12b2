// Host-side checks and resolution of a fused MHA launch, shared by the mma.sync block-wise
// kernel (block_sparse_attention.cpp) and the Hopper kernel (attention_hopper/): the workload,
// the launch device, strided views (engine::MhaStrides, packed when all zero) and the score
// scale in base-2 units. CUDA-free header.
#pragma once

#include <cstdint>
#include <string>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"

namespace stof::kernels {

// Element strides of one operand: a head's base is batch * batch_stride + head * head_stride,
// its row r at r * row_stride.
struct OperandStrides {
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
};

// Per batch row limits on the keys a launch attends beside its mask (the Hopper kernel only;
// device arrays, 8-byte aligned, or null): `ranges` int32 [batch][2], keys [first, end) (a
// left- or right-padded batch); `bits` uint64 [batch][words], bit j of word w = key 64 w + j
// kept (padding with holes), `words` >= L_k rounded up to 128, over 64. Keys outside are
// masked like keys past L_k; rows left with nothing give zeros.
struct MhaKeyLimits {
  const void* ranges = nullptr;
  const void* bits = nullptr;
  int64_t words = 0;
  bool Any() const { return ranges != nullptr || bits != nullptr; }
};

// Which operand a stride set describes: q and o are [B, H, L_q, d], k and v [B, H_kv, L_k, d]
// (engine::Workload's heads / KvHeads(), QLen() / seq_len).
enum class MhaOperand { kQuery, kKeyValue };

// Packed [B, heads, rows, d] of `operand` when `s` is all zero; otherwise `s` itself when
// every stride is a multiple of 8 elements (16-byte rows) with row >= head_dim and row <
// 2^31. Errors start with `what` and name `name`.
engine::Expected<OperandStrides> ResolveOperandStrides(const engine::MhaStrides& s,
                                                       const engine::Workload& w,
                                                       MhaOperand operand,
                                                       const std::string& what,
                                                       const char* name);

// The checks every fused launch starts with: a valid f16 workload (or bf16, where the kernel
// has it: `bf16_too`) and a layout built for its L. The mma.sync kernels take the square MHA
// shape only (Workload::IsSquareMha); `grouped_too` (the Hopper kernel) also takes grouped
// key/value heads and q_len != seq_len (layout_seq_len is then the query length).
engine::Status CheckFusedMhaWorkload(const engine::Workload& w, int64_t layout_seq_len,
                                     const std::string& what, bool bf16_too = false,
                                     bool grouped_too = false);

// The current device and its opt-in shared memory per block.
struct LaunchDevice {
  int device = 0;
  int smem_limit = 0;
};
engine::Expected<LaunchDevice> QueryLaunchDevice();

// log2(e) times the score scale (`scale`, or 1/sqrt(head_dim) when 0); an error for a negative
// or non-finite scale.
engine::Expected<float> ScoreScaleLog2(float scale, int64_t head_dim, const std::string& what);

}  // namespace stof::kernels
