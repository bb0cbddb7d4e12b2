// DType names and Workload validation (see workload.h).
#include "engine/core/workload.h"

namespace stof::engine {

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "f32";
  }
  return "?";
}

Expected<DType> ParseDType(const std::string& name) {
  if (name == "f16" || name == "fp16" || name == "float16" || name == "half") return DType::kF16;
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  if (name == "f32" || name == "fp32" || name == "float32" || name == "float") return DType::kF32;
  return MakeError("dtype: expected one of f16, bf16, f32, got '" + name + "'");
}

int DTypeBytes(DType t) { return t == DType::kF32 ? 4 : 2; }

Status Workload::Validate(const std::string& what) const {
  auto bad = [&](const char* field, int64_t v, const std::string& rule) {
    return MakeError(what + ": " + field + ": " + rule + ", got " + std::to_string(v));
  };
  if (batch < 1 || batch > kMaxBatch) return bad("batch", batch, "expected 1.." + std::to_string(kMaxBatch));
  if (heads < 1 || heads > kMaxHeads) return bad("heads", heads, "expected 1.." + std::to_string(kMaxHeads));
  if (seq_len < 1 || seq_len > kMaxKeyLen)
    return bad("seq_len", seq_len, "expected 1.." + std::to_string(kMaxKeyLen));
  if (head_dim < 1 || head_dim > kMaxHeadDim)
    return bad("head_dim", head_dim, "expected 1.." + std::to_string(kMaxHeadDim));
  if (q_len < 0 || q_len > kMaxKeyLen)
    return bad("q_len", q_len, "expected 1.." + std::to_string(kMaxKeyLen) + " (0: seq_len)");
  if (QLen() * seq_len > kMaxCells)
    return MakeError(what + ": q_len x seq_len: " + std::to_string(QLen()) + " x " +
                     std::to_string(seq_len) + " is more than " + std::to_string(kMaxSeqLen) +
                     " x " + std::to_string(kMaxSeqLen) + " mask cells (a square call stops at " +
                     std::to_string(kMaxSeqLen) + "; up to " + std::to_string(kMaxKeyLen) +
                     " keys with fewer query rows: set q_len)");
  if (kv_heads < 0 || kv_heads > heads || (kv_heads > 0 && heads % kv_heads != 0))
    return bad("kv_heads", kv_heads,
               "expected a divisor of heads = " + std::to_string(heads) +
                   " (each key/value head serves heads / kv_heads query heads; 0: heads)");
  return Status::Ok();
}

}  // namespace stof::engine
