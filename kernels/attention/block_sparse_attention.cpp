// Host side of the block-wise sparse MHA kernel (block_sparse_attention.h): the check and the
// supported list over the engine's rules (engine/select/block_sparse_rules.h), validation of a
// launch, and the dispatch of run-time (head_dim, BLOCK_N, rows per warp) to
// the 11 explicit instantiations (block_sparse_attention_d64.cu, _d64_rows32.cu, _d128.cu).
// BLOCK_M and num_warps stay run-time values of the kernel, which keeps the instantiations few.
#include "kernels/attention/block_sparse_attention.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/text_format.h"
#include "kernels/attention/block_sparse_variant.h"
#include "kernels/attention_common/device_layout.h"
#include "kernels/attention_common/mha_operands.h"
#include "kernels/attention_hopper/hopper_attention.h"
#include "kernels/cuda_check.h"

namespace stof::kernels {

namespace {

using engine::Str;

std::string ConfigName(int64_t head_dim, int64_t bm, int64_t bn, int64_t warps) {
  return "BLOCK_M " + Str(bm) + ", BLOCK_N " + Str(bn) + ", num_warps " + Str(warps) +
         ", head_dim " + Str(head_dim);
}

bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Launches the instantiation of head size kD and kRows rows per warp for BLOCK_N `block_n`
// (16, 32, 64, or 128 where kMaxN allows it); nothing for any other BLOCK_N.
template <int kD, int kRows, int kMaxN>
std::optional<engine::Status> LaunchForBlockN(int64_t block_n, const detail::BlockSparseParams& p,
                                              size_t smem, int device, int smem_limit,
                                              void* stream) {
  using detail::LaunchBlockSparseVariant;
  switch (block_n) {
    case 16: return LaunchBlockSparseVariant<kD, 16, kRows>(p, smem, device, smem_limit, stream);
    case 32: return LaunchBlockSparseVariant<kD, 32, kRows>(p, smem, device, smem_limit, stream);
    case 64: return LaunchBlockSparseVariant<kD, 64, kRows>(p, smem, device, smem_limit, stream);
    case 128:
      if constexpr (kMaxN >= 128)
        return LaunchBlockSparseVariant<kD, 128, kRows>(p, smem, device, smem_limit, stream);
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

std::vector<BlockSparseConfig> SupportedBlockSparseConfigs(int64_t head_dim,
                                                           int64_t smem_limit_bytes) {
  std::vector<BlockSparseConfig> out;
  for (const engine::MhaConfig& c :
       engine::PortableBlockSparseConfigs(head_dim, smem_limit_bytes))
    out.push_back({c.block_m, c.block_n, c.num_warps});
  return out;
}

engine::Status CheckBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                      int64_t num_warps, int64_t smem_limit_bytes) {
  if (IsHopperAttentionRequest(num_warps))
    return CheckHopperAttentionConfig(head_dim, block_m, block_n, num_warps, smem_limit_bytes);
  return engine::CheckPortableBlockSparseConfig(head_dim, block_m, block_n, num_warps,
                                                smem_limit_bytes);
}

engine::Status LaunchBlockSparseAttention(const engine::Workload& w,
                                          const DeviceBlockLayout& layout, int64_t num_warps,
                                          const void* q, const void* k, const void* v, void* o,
                                          void* stream, const engine::MhaStrides& q_strides,
                                          const engine::MhaStrides& kv_strides,
                                          const engine::MhaStrides& o_strides, float scale,
                                          const MhaKeyLimits& keys) {
  if (IsHopperAttentionRequest(num_warps))
    return LaunchHopperAttention(w, layout, q, k, v, o, stream, q_strides, kv_strides, o_strides,
                                 scale, keys);
  const std::string what = "block-wise MHA: ";
  if (keys.Any())
    return engine::MakeError(what + "key_ranges / key bits: per batch row key limits run on "
                                    "the Hopper kernel only (sm_90, num_warps 5 or 12)");
  if (layout.Patterns() > 1 || layout.PatternItems() != 0)
    return engine::MakeError(what + "layout: masks per batch row / head run on the Hopper "
                                    "kernel only (sm_90, num_warps 5 or 12)");
  STOF_RETURN_IF_ERROR(CheckFusedMhaWorkload(w, layout.SeqLen(), what));
  auto dev = QueryLaunchDevice();
  if (!dev.IsOk()) return dev.ToStatus();
  const int device = dev->device, smem_limit = dev->smem_limit;
  STOF_RETURN_IF_ERROR(
      CheckBlockSparseConfig(w.head_dim, layout.BlockM(), layout.BlockN(), num_warps, smem_limit));
  if (q == nullptr || k == nullptr || v == nullptr || o == nullptr)
    return engine::MakeError(what + "q, k, v and o must not be null");
  if (!Aligned16(q) || !Aligned16(k) || !Aligned16(v) || !Aligned16(o))
    return engine::MakeError(what + "q, k, v and o must be 16-byte aligned (cp.async, uint4)");
  const int64_t grid = layout.BlockRows() * w.batch * w.heads;
  if (grid > int64_t{0x7fffffff}) {
    return engine::MakeError(what + "block_rows * batch * heads = " + Str(grid) +
                             " exceeds the grid limit 2^31 - 1");
  }

  detail::BlockSparseParams p;
  p.q = q;
  p.k = k;
  p.v = v;
  p.o = o;
  p.load_row_ptr = layout.LoadRowPtr();
  p.load_col_idx = layout.LoadColIdx();
  p.load_part_idx = layout.LoadPartIdx();
  p.part_bitmaps = layout.PartBitmaps();
  p.seq_len = static_cast<int>(w.seq_len);
  p.block_m = static_cast<int>(layout.BlockM());
  p.block_rows = static_cast<int>(layout.BlockRows());
  p.bitmap_words = static_cast<int>(layout.BitmapWords());
  const int64_t rows_per_warp =
      BlockSparseRowsPerWarp(w.head_dim, layout.BlockM(), layout.BlockN(), num_warps);
  p.warps_per_group = static_cast<int>(layout.BlockM() / rows_per_warp);
  p.split = static_cast<int>(num_warps / p.warps_per_group);
  auto scale_log2 = ScoreScaleLog2(scale, w.head_dim, what);
  if (!scale_log2.IsOk()) return scale_log2.ToStatus();
  p.scale_log2 = *scale_log2;
  p.grid_blocks = grid;
  // Operand layouts: packed unless the caller gave strides (checked there: 16-byte rows).
  const auto resolve = [&](const engine::MhaStrides& s, const char* name, int64_t& sb,
                           int64_t& sh, int& ld) -> engine::Status {
    auto r = ResolveOperandStrides(s, w, MhaOperand::kQuery, what, name);
    if (!r.IsOk()) return r.ToStatus();
    sb = r->batch_stride, sh = r->head_stride, ld = static_cast<int>(r->row_stride);
    return engine::Status::Ok();
  };
  STOF_RETURN_IF_ERROR(resolve(q_strides, "q_strides", p.q_sb, p.q_sh, p.q_ld));
  STOF_RETURN_IF_ERROR(resolve(kv_strides, "kv_strides", p.kv_sb, p.kv_sh, p.kv_ld));
  STOF_RETURN_IF_ERROR(resolve(o_strides, "o_strides", p.o_sb, p.o_sh, p.o_ld));
  p.heads = static_cast<int>(w.heads);
  const size_t smem = BlockSparseSmemBytes(w.head_dim, layout.BlockM(), layout.BlockN(), num_warps);

  const int64_t bn = layout.BlockN();
  std::optional<engine::Status> launched;
  if (rows_per_warp == 32) {  // head_dim 64, BLOCK_N <= 64 (BlockSparseRowsPerWarp)
    launched = LaunchForBlockN<64, 2, 64>(bn, p, smem, device, smem_limit, stream);
  } else if (w.head_dim == 64) {
    launched = LaunchForBlockN<64, 1, 128>(bn, p, smem, device, smem_limit, stream);
  } else {
    launched = LaunchForBlockN<128, 1, 128>(bn, p, smem, device, smem_limit, stream);
  }
  if (launched) return *launched;
  // Unreachable: CheckBlockSparseConfig accepted head_dim and BLOCK_N above.
  return engine::MakeError(what + "no variant for " +
                           ConfigName(w.head_dim, layout.BlockM(), layout.BlockN(), num_warps));
}

}  // namespace stof::kernels
