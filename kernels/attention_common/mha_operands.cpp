// ResolveOperandStrides and ScoreScaleLog2 (mha_operands.h).
#include "kernels/attention_common/mha_operands.h"

#include <cuda_runtime.h>

#include <cmath>

#include "kernels/cuda_check.h"

namespace stof::kernels {

engine::Expected<OperandStrides> ResolveOperandStrides(const engine::MhaStrides& s,
                                                       const engine::Workload& w,
                                                       MhaOperand operand,
                                                       const std::string& what,
                                                       const char* name) {
  if (s.Packed()) {
    const bool q = operand == MhaOperand::kQuery;
    const int64_t heads = q ? w.heads : w.KvHeads(), rows = q ? w.QLen() : w.seq_len;
    return OperandStrides{heads * rows * w.head_dim, rows * w.head_dim, w.head_dim};
  }
  if (s.batch < 0 || s.head < 0 || s.row < w.head_dim || s.batch % 8 || s.head % 8 ||
      s.row % 8 || s.row > int64_t{0x7fffffff})
    return engine::Error{what + name +
                         ": strides must be multiples of 8 elements with row >= head_dim, got "
                         "batch " + std::to_string(s.batch) + ", head " + std::to_string(s.head) +
                         ", row " + std::to_string(s.row)};
  return OperandStrides{s.batch, s.head, s.row};
}

engine::Status CheckFusedMhaWorkload(const engine::Workload& w, int64_t layout_seq_len,
                                     const std::string& what, bool bf16_too,
                                     bool grouped_too) {
  STOF_RETURN_IF_ERROR(w.Validate(what + "workload"));
  if (!grouped_too && !w.IsSquareMha())
    return engine::MakeError(
        what + "workload: " + std::to_string(w.heads) + " query heads over " +
        std::to_string(w.KvHeads()) + " key/value heads, q_len " + std::to_string(w.QLen()) +
        " over seq_len " + std::to_string(w.seq_len) +
        ": this kernel takes as many key/value heads as query heads and q_len = seq_len; "
        "grouped heads and other query lengths run on the Hopper kernel (sm_90, num_warps 5 "
        "or 12)");
  if (w.dtype == engine::DType::kBF16 && !bf16_too)
    return engine::MakeError(what + "workload.dtype: bf16 runs on the Hopper kernel only (sm_90, "
                                    "num_warps 5 or 12), this kernel takes f16");
  if (w.dtype != engine::DType::kF16 && w.dtype != engine::DType::kBF16)
    return engine::MakeError(what + "workload.dtype: f16 or bf16 expected, got " +
                             engine::DTypeName(w.dtype));
  if (layout_seq_len != w.QLen())
    return engine::MakeError(what + "layout: built for L_q = " + std::to_string(layout_seq_len) +
                             ", the workload's query length is " + std::to_string(w.QLen()));
  return engine::Status::Ok();
}

engine::Expected<LaunchDevice> QueryLaunchDevice() {
  LaunchDevice d;
  STOF_CUDA_TRY(cudaGetDevice(&d.device));
  STOF_CUDA_TRY(
      cudaDeviceGetAttribute(&d.smem_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, d.device));
  return d;
}

engine::Expected<float> ScoreScaleLog2(float scale, int64_t head_dim, const std::string& what) {
  if (!std::isfinite(scale) || scale < 0.0f)
    return engine::Error{what + "scale: expected a finite value >= 0 (0 = 1/sqrt(d))"};
  const double score_scale = scale != 0.0f ? static_cast<double>(scale)
                                           : 1.0 / std::sqrt(static_cast<double>(head_dim));
  return static_cast<float>(1.4426950408889634 * score_scale);
}

}  // namespace stof::kernels
