// Validation shared by every backend's layer ops (layer_ops.h) and the small helpers there.
// Used by engine/cpu/cpu_layer_ops.cpp and kernels/cuda_backend.cpp.
#include "engine/layer_ops.h"

#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>

namespace stof::engine {

namespace {

// The first of `fields` (in order) that is < 1, null, or not a valid stride, named.
Status Positive(const std::string& what,
                std::initializer_list<std::pair<const char*, int64_t>> fields) {
  for (const auto& [field, v] : fields)
    if (v < 1)
      return MakeError(what + ": " + field + ": must be at least 1, got " + std::to_string(v));
  return Status::Ok();
}

Status Set(const std::string& what,
           std::initializer_list<std::pair<const char*, const void*>> fields) {
  for (const auto& [field, p] : fields)
    if (p == nullptr) return MakeError(what + ": " + field + ": must not be null");
  return Status::Ok();
}

Status StrideOk(const std::string& what,
                std::initializer_list<std::pair<const char*, int64_t>> fields) {
  for (const auto& [field, v] : fields)
    if (v < -1)
      return MakeError(what + ": " + field + ": expected -1 (packed), 0 (shared) or a "
                       "positive element count, got " + std::to_string(v));
  return Status::Ok();
}

}  // namespace

std::string ParamMapText(const ParamMap& p) {
  std::ostringstream o;
  bool first = true;
  for (const auto& [name, value] : p) {
    o << (first ? "" : " ") << name << "=" << value;
    first = false;
  }
  return o.str();
}

const char* ScoreOpName(ScoreOp op) {
  switch (op) {
    case ScoreOp::kScale: return "scale";
    case ScoreOp::kMask: return "mask";
    case ScoreOp::kSoftmax: return "softmax";
    default: return "scale_mask_softmax";
  }
}

Status ValidateGemmCall(const GemmCall& c) {
  const std::string w = "gemm call";
  STOF_RETURN_IF_ERROR(Positive(w, {{"m", c.m}, {"n", c.n}, {"k", c.k}}));
  STOF_RETURN_IF_ERROR(Set(w, {{"a", c.a}, {"w", c.w}, {"out", c.out}}));
  if (c.act != Activation::kNone && c.residual != nullptr)
    return MakeError(w + ": act: an activation together with a residual is not supported "
                     "(the residual would be added before the activation)");
  return Status::Ok();
}

Status ValidateBatchedGemmCall(const BatchedGemmCall& c) {
  const std::string w = "batched gemm call";
  STOF_RETURN_IF_ERROR(Positive(w, {{"batch", c.batch}, {"m", c.m}, {"n", c.n}, {"k", c.k}}));
  return Set(w, {{"a", c.a}, {"b", c.b}, {"c", c.c}});
}

Status ValidateEpilogueCall(const EpilogueCall& c) {
  const std::string w = "epilogue call";
  STOF_RETURN_IF_ERROR(Positive(w, {{"rows", c.rows}, {"cols", c.cols}}));
  return Set(w, {{"x", c.x}, {"out", c.out}});
}

Status ValidateNormCall(const NormCall& c) {
  const std::string w = "norm call";
  STOF_RETURN_IF_ERROR(Positive(w, {{"rows", c.rows}, {"cols", c.cols}}));
  STOF_RETURN_IF_ERROR(Set(w, {{"x", c.x}, {"gamma", c.gamma}}));
  if (!(c.eps >= 0.0f)) return MakeError(w + ": eps: must be >= 0");
  return Set(w, {{"out", c.out}});
}

Status ValidateGemmNormCall(const GemmNormCall& c) {
  const std::string w = "gemm_norm call";
  STOF_RETURN_IF_ERROR(Positive(w, {{"m", c.m}, {"n", c.n}, {"k", c.k}}));
  STOF_RETURN_IF_ERROR(Set(w, {{"a", c.a}, {"w", c.w}, {"gamma", c.gamma}}));
  if (!(c.eps >= 0.0f)) return MakeError(w + ": eps: must be >= 0");
  return Set(w, {{"out", c.out}});
}

Status ValidateGemmChainCall(const GemmChainCall& c) {
  const std::string w = "gemm_chain call";
  STOF_RETURN_IF_ERROR(
      Positive(w, {{"batch", c.batch}, {"m", c.m}, {"n", c.n}, {"k", c.k}, {"h", c.h}}));
  STOF_RETURN_IF_ERROR(Set(w, {{"a", c.a}, {"b", c.b}, {"d", c.d}}));
  STOF_RETURN_IF_ERROR(StrideOk(w, {{"stride_a", c.stride_a},
                                    {"stride_b", c.stride_b},
                                    {"stride_d", c.stride_d},
                                    {"stride_e", c.stride_e}}));
  if (c.stride_e == 0 && c.batch > 1)
    return MakeError(w + ": stride_e: batches cannot share the output");
  return Set(w, {{"e", c.e}});
}

Status ValidateScoresCall(const ScoresCall& c) {
  const std::string w = std::string("scores call (") + ScoreOpName(c.op) + ")";
  STOF_RETURN_IF_ERROR(Positive(w, {{"bh", c.bh}, {"seq_len", c.seq_len}}));
  STOF_RETURN_IF_ERROR(Set(w, {{"x", c.x}, {"out", c.out}}));
  if (c.op == ScoreOp::kMask || c.op == ScoreOp::kScaleMaskSoftmax) {
    if (c.mask == nullptr) return MakeError(w + ": mask: must not be null");
    if (c.mask->Rows() != c.seq_len || c.mask->Cols() != c.seq_len)
      return MakeError(w + ": mask: size " + std::to_string(c.mask->Rows()) + " x " +
                       std::to_string(c.mask->Cols()) + " does not match seq_len " +
                       std::to_string(c.seq_len));
  }
  return Status::Ok();
}

Status ValidateHeadsCall(const HeadsCall& c) {
  const std::string w = c.split ? "split heads call" : "merge heads call";
  STOF_RETURN_IF_ERROR(Positive(w, {{"batch", c.batch},
                                    {"seq_len", c.seq_len},
                                    {"heads", c.heads},
                                    {"head_dim", c.head_dim}}));
  STOF_RETURN_IF_ERROR(Set(w, {{"src", c.src}, {"dst", c.dst}}));
  if (c.split) {
    if (c.col_offset < 0)
      return MakeError(w + ": col_offset: must be >= 0, got " + std::to_string(c.col_offset));
    if (c.src_row_stride < c.col_offset + c.heads * c.head_dim)
      return MakeError(w + ": src_row_stride: " + std::to_string(c.src_row_stride) +
                       " is shorter than col_offset + heads * head_dim = " +
                       std::to_string(c.col_offset + c.heads * c.head_dim));
  }
  return Status::Ok();
}

}  // namespace stof::engine
