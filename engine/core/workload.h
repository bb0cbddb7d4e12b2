// Workload: the shape of one attention problem (batch, query and key/value heads, query and key
// lengths, head size, dtype). Shared by kernel selection, the CPU reference, backends and plans.
// seq_len is the key length L_k (and the query length unless q_len says otherwise); kv_heads
// and q_len are 0 for "the same as heads / seq_len", so every workload written before grouped
// heads and query lengths existed means what it meant.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"

namespace stof::engine {

enum class DType { kF16, kBF16, kF32 };

const char* DTypeName(DType t);                      // "f16", "bf16", "f32"
Expected<DType> ParseDType(const std::string& name);  // accepts the names above (+ "fp16" etc.)
int DTypeBytes(DType t);

struct Workload {
  // The accepted ranges (Validate, the op graphs, and the command-line checks of app/).
  static constexpr int64_t kMaxBatch = 65536, kMaxHeads = 1024, kMaxHeadDim = 256;
  // The longest square call (L_q = L_k), also the square mask's limit (Mask::kMaxLen is this
  // value): an L x L mask at this L is 128 MiB.
  static constexpr int64_t kMaxSeqLen = 32768;
  // A call with fewer query rows than keys (a KV cache's decode or prefill step,
  // cross-attention) may have up to kMaxKeyLen keys (or query rows) as long as its mask's
  // L_q x L_k cells stay within a square mask's kMaxCells: a decode step over 262144 keys is
  // a 1 x 262144 mask (32 KiB).
  static constexpr int64_t kMaxKeyLen = int64_t{1} << 18;  // 262144
  static constexpr int64_t kMaxCells = kMaxSeqLen * kMaxSeqLen;

  int64_t batch = 8;
  int64_t seq_len = 1024;
  int64_t heads = 12;
  int64_t head_dim = 64;
  DType dtype = DType::kF16;
  // Key/value heads (GQA / MQA: each serves heads / kv_heads query heads); 0 = heads.
  int64_t kv_heads = 0;
  // Query rows L_q (a KV-cache prefill or a decode step: L_q < L_k; cross-attention); 0 =
  // seq_len.
  int64_t q_len = 0;

  int64_t KvHeads() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t QLen() const { return q_len > 0 ? q_len : seq_len; }
  int64_t GroupSize() const { return heads / KvHeads(); }  // query heads per key/value head
  // True when the call is the plain shape: as many key heads as query heads, L_q = L_k.
  bool IsSquareMha() const { return KvHeads() == heads && QLen() == seq_len; }

  // Each field in range (batch, heads >= 1; 1 <= seq_len <= 262144; 1 <= head_dim <= 256;
  // 0 <= q_len <= 262144, QLen() x seq_len <= kMaxCells, so a square call stops at 32768;
  // kv_heads 0 or a divisor of heads); the message names `what` and the field.
  Status Validate(const std::string& what = "workload") const;
  bool operator==(const Workload&) const = default;
};

}  // namespace stof::engine
