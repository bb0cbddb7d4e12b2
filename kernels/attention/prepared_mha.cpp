// PreparedMha (prepared_mha.h): the layout (or the NativeMha or RecomposedMha) of a choice
// (mha_choice.h) built once for timed launches. Used by `stof bench mha` and the C API. Host code only; launches go through the kernels' own launch
// functions, which validate their arguments on the host.
#include "kernels/attention/prepared_mha.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "engine/core/text_format.h"
#include "engine/select/hopper_select.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention/row_sparse_attention.h"
#include "kernels/attention_hopper/hopper_attention.h"

namespace stof::kernels {

namespace {

using engine::Str;

// SDF works on the mask's valid BM x T tiles (SD, like native, on the dense L x L).
bool IsSdf(const RecomposedMha* r) {
  return r != nullptr && r->Variant() == RecomposeVariant::kRecomposed;
}

}  // namespace

// ---- PreparedMha ------------------------------------------------------------------------------

engine::Expected<std::unique_ptr<PreparedMha>> PreparedMha::Create(const engine::Mask& mask,
                                                                   const engine::Workload& workload,
                                                                   const MhaChoice& choice) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  if (mask.Rows() != workload.QLen() || mask.Cols() != workload.seq_len)
    return engine::MakeError("mask: size " + Str(mask.Rows()) + " x " + Str(mask.Cols()) +
                             " does not match the workload's q_len x seq_len " +
                             Str(workload.QLen()) + " x " + Str(workload.seq_len));
  if (!workload.IsSquareMha() && !IsHopperAttentionRequest(choice.config.num_warps))
    return engine::MakeError("prepared MHA: choice: " + Str(workload.heads) +
                             " query heads over " + Str(workload.KvHeads()) +
                             " key/value heads, q_len " + Str(workload.QLen()) +
                             " over seq_len " + Str(workload.seq_len) +
                             " run on the Hopper kernel only (num_warps 5 or 12)");
  std::unique_ptr<PreparedMha> p(new PreparedMha());
  p->m_workload = workload;
  p->m_choice = choice;
  p->m_nnz = mask.Count();
  if (choice.recompose) {
    auto rec = RecomposedMha::Create(mask, workload, choice.recompose_variant,
                                     choice.recompose_params);
    if (!rec.IsOk()) return rec.ToStatus();
    p->m_recomposed = std::shared_ptr<const RecomposedMha>(std::move(*rec));
  } else if (choice.native) {
    auto native = NativeMha::Create(mask, workload);
    if (!native.IsOk()) return native.ToStatus();
    p->m_native = std::shared_ptr<const NativeMha>(std::move(*native));
  } else if (choice.config.kernel == engine::MhaKernel::kRowWise) {
    auto row = DeviceRowLayout::Create(mask);
    if (!row.IsOk()) return row.ToStatus();
    p->m_row = std::shared_ptr<const DeviceRowLayout>(std::move(*row));
  } else {
    auto block = IsHopperAttentionRequest(choice.config.num_warps)
                     ? PrepareHopperLayout(mask, workload, choice.config.block_m,
                                           choice.config.block_n)
                     : DeviceBlockLayout::Create(mask, choice.config.block_m,
                                                 choice.config.block_n);
    if (!block.IsOk()) return block.ToStatus();
    p->m_block = std::shared_ptr<const DeviceBlockLayout>(std::move(*block));
  }
  return p;
}

engine::Expected<std::unique_ptr<PreparedMha>> PreparedMha::Create(const engine::MaskSet& set,
                                                                   const engine::Workload& workload,
                                                                   const MhaChoice& choice) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  if (set.Batch() != workload.batch || set.Heads() != workload.heads ||
      set.Rows() != workload.QLen() || set.Cols() != workload.seq_len)
    return engine::MakeError("masks: " + Str(set.Batch()) + " x " + Str(set.Heads()) +
                             " patterns of " + Str(set.Rows()) + " x " + Str(set.Cols()) +
                             " do not match the workload's batch x heads and q_len x seq_len");
  if (!IsHopperAttentionRequest(choice.config.num_warps) || choice.native || choice.recompose)
    return engine::MakeError("prepared MHA: choice: masks per batch row / head run on the "
                             "Hopper kernel only (num_warps 5 or 12)");
  std::unique_ptr<PreparedMha> p(new PreparedMha());
  p->m_workload = workload;
  p->m_choice = choice;
  p->m_nnz = set.TotalCount();
  p->m_patterns = set.Patterns();
  STOF_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBlockLayout> block,
                        DeviceBlockLayout::CreatePatterns(set, choice.config.block_m,
                                                          choice.config.block_n, choice.packing));
  p->m_block = std::shared_ptr<const DeviceBlockLayout>(std::move(block));
  return p;
}

engine::Status PreparedMha::CheckWorkload(const engine::Workload& w) const {
  // Masks per (batch row, head) are for the prepared batch and heads.
  if (m_patterns > 0 && (w.batch != m_workload.batch || w.heads != m_workload.heads))
    return engine::MakeError("prepared MHA: workload: masks per batch row / head prepared for "
                             "batch " + Str(m_workload.batch) + " x " + Str(m_workload.heads) +
                             " heads, got " + Str(w.batch) + " x " + Str(w.heads));
  // A Hopper plan of a query shorter than its keys launches with fewer keys too (a KV cache
  // prepared for its capacity): the keys past the launch's L_k are not attended.
  const bool fewer_keys = m_block && IsHopperAttentionRequest(m_choice.config.num_warps) &&
                          !m_workload.IsSquareMha() && w.seq_len < m_workload.seq_len &&
                          w.seq_len >= w.QLen() && w.q_len == m_workload.q_len;
  if ((w.seq_len != m_workload.seq_len && !fewer_keys) || w.QLen() != m_workload.QLen() ||
      w.head_dim != m_workload.head_dim || w.dtype != m_workload.dtype ||
      w.GroupSize() != m_workload.GroupSize()) {
    return engine::MakeError(
        "prepared MHA: workload: prepared for L_q = " + Str(m_workload.QLen()) + ", L_k = " +
        Str(m_workload.seq_len) + ", d = " + Str(m_workload.head_dim) + ", " +
        Str(m_workload.GroupSize()) + " query heads per key/value head, got L_q = " +
        Str(w.QLen()) + ", L_k = " + Str(w.seq_len) + ", d = " + Str(w.head_dim) + ", " +
        Str(w.GroupSize()));
  }
  return engine::Status::Ok();
}

engine::Status PreparedMha::Launch(const engine::Workload& w, const void* q, const void* k,
                                   const void* v, void* o, void* stream) const {
  STOF_RETURN_IF_ERROR(CheckWorkload(w));
  if (m_recomposed) return m_recomposed->Launch(w, q, k, v, o, stream);
  if (m_native) return m_native->Launch(w, q, k, v, o, stream);
  if (m_row) return LaunchRowSparseAttention(w, *m_row, q, k, v, o, stream);
  return LaunchBlockSparseAttention(w, *m_block, m_choice.config.num_warps, q, k, v, o, stream);
}

engine::Status PreparedMha::LaunchViews(const engine::Workload& w, const void* q, const void* k,
                                        const void* v, void* o, void* stream,
                                        const engine::MhaStrides& q_strides,
                                        const engine::MhaStrides& kv_strides,
                                        const engine::MhaStrides& o_strides, float scale,
                                        const MhaKeyLimits& keys) const {
  if (m_block) {
    STOF_RETURN_IF_ERROR(CheckWorkload(w));
    return LaunchBlockSparseAttention(w, *m_block, m_choice.config.num_warps, q, k, v, o, stream,
                                      q_strides, kv_strides, o_strides, scale, keys);
  }
  const char* name = MhaChoiceKernelName(m_choice);
  if (keys.Any())
    return engine::MakeError(std::string("prepared MHA: key_ranges: the ") + name +
                             " kernel takes one mask for every batch row (key ranges: the "
                             "block-wise Hopper kernel)");
  if (!q_strides.Packed() || !kv_strides.Packed() || !o_strides.Packed())
    return engine::MakeError(std::string("prepared MHA: strides: the ") + name +
                             " kernel takes packed [B, H, L, d] operands only (strided views: "
                             "the block-wise kernel)");
  const double default_scale = 1.0 / std::sqrt(static_cast<double>(w.head_dim));
  if (scale != 0.0f &&
      std::fabs(static_cast<double>(scale) - default_scale) > 1e-6 * default_scale)
    return engine::MakeError(std::string("prepared MHA: scale: the ") + name +
                             " kernel uses 1/sqrt(head_dim) only, got " + std::to_string(scale));
  return Launch(w, q, k, v, o, stream);
}

const LayoutPrepTiming& PreparedMha::Timing() const {
  if (m_recomposed) return m_recomposed->Timing();
  if (m_native) return m_native->Timing();
  return m_row ? m_row->Timing() : m_block->Timing();
}

int64_t PreparedMha::DeviceBytes() const {
  if (m_recomposed) return m_recomposed->DeviceBytes();
  if (m_native) return m_native->DeviceBytes();
  return m_row ? m_row->DeviceBytes() : m_block->DeviceBytes();
}

int64_t PreparedMha::ValidBlocks() const {
  if (IsSdf(m_recomposed.get())) return m_recomposed->TilesPerHead();
  return m_block ? m_block->ValidBlocks() : 0;
}
int64_t PreparedMha::PartBlocks() const {
  if (IsSdf(m_recomposed.get())) return m_recomposed->PartTilesPerHead();
  return m_block ? m_block->PartBlocks() : 0;
}

double PreparedMha::UsefulFlops(const engine::Workload& w) const {
  if (m_patterns > 0)  // m_nnz already sums every (batch, head)
    return 4.0 * static_cast<double>(w.head_dim) * static_cast<double>(m_nnz);
  return 4.0 * static_cast<double>(w.batch) * static_cast<double>(w.heads) *
         static_cast<double>(w.head_dim) * static_cast<double>(m_nnz);
}

double PreparedMha::MinimumBytes(const engine::Workload& w) const {
  const double elem = static_cast<double>(engine::DTypeBytes(w.dtype));
  const double q_and_o = 2.0 * static_cast<double>(w.batch * w.heads * w.QLen() * w.head_dim);
  const double k_and_v =
      2.0 * static_cast<double>(w.batch * w.KvHeads() * w.seq_len * w.head_dim);
  return elem * (q_and_o + k_and_v);
}

double PreparedMha::KernelFlops(const engine::Workload& w) const {
  if (IsSdf(m_recomposed.get()))  // both GEMMs over the valid BM x T tiles
    return 4.0 * static_cast<double>(w.batch) * static_cast<double>(w.heads) *
           static_cast<double>(w.head_dim) * static_cast<double>(m_recomposed->TilesPerHead()) *
           static_cast<double>(m_recomposed->Params().block_m) *
           static_cast<double>(m_recomposed->Params().sub_len);
  if (m_native || m_recomposed)  // both GEMMs are dense (cuBLAS)
    return 4.0 * static_cast<double>(w.batch) * static_cast<double>(w.heads) *
           static_cast<double>(w.head_dim) * static_cast<double>(w.seq_len) *
           static_cast<double>(w.seq_len);
  if (!m_block) return UsefulFlops(w);
  if (m_block->PatternItems() > 0)  // each item's own pattern's blocks
    return 4.0 * static_cast<double>(w.head_dim) *
           static_cast<double>(m_block->ItemValidBlocks()) *
           static_cast<double>(m_block->BlockM() * m_block->BlockN());
  // A packed layout's blocks hold the rows of a key/value head's whole group.
  const double item_heads =
      static_cast<double>(m_block->Packing().Packed() ? w.KvHeads() : w.heads);
  return 4.0 * static_cast<double>(w.batch) * item_heads * static_cast<double>(w.head_dim) *
         static_cast<double>(m_block->ValidBlocks()) *
         static_cast<double>(m_block->BlockM() * m_block->BlockN());
}

}  // namespace stof::kernels
