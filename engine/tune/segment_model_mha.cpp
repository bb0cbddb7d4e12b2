// The segment model's attention (segment_model.h): the kernels of one MhaCall for each variant
// (row-wise, block-wise and its Hopper form, unfused, SD, SDF), with their bytes, FLOPs and
// rates. Used by the fused sparse_mha segment (segment_model_segments.cpp) and PredictMhaCall.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/core/text_format.h"
#include "engine/layout/block_layout.h"
#include "engine/select/hopper_select.h"
#include "engine/select/kernel_select.h"
#include "engine/tune/segment_model_internal.h"

namespace stof::engine::segment_model_detail {

namespace {

// Fraction of (row, aligned chunk of `width` columns) pairs with something attended; `width`
// a multiple of 8 up to 64 or a multiple of 64 (rows are padded with zero bits).
double ChunkFraction(const Mask& m, int64_t width) {
  const int64_t chunks = (m.Cols() + width - 1) / width;
  if (m.Rows() == 0 || chunks == 0) return 0;
  int64_t hit = 0;
  for (int64_t r = 0; r < m.Rows(); ++r) {
    const uint64_t* w = m.RowWords(r);
    if (width >= 64) {
      const int64_t per = width / 64;
      for (int64_t c = 0; c < chunks; ++c) {
        bool any = false;
        for (int64_t i = c * per; i < std::min((c + 1) * per, m.WordsPerRow()); ++i) any |= w[i] != 0;
        hit += any;
      }
    } else {
      const int bits = static_cast<int>(width);
      const uint64_t lane = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t bit = c * width;
        hit += ((w[bit >> 6] >> (bit & 63)) & lane) != 0;
      }
    }
  }
  return static_cast<double>(hit) / static_cast<double>(m.Rows() * chunks);
}

double MaxRowBlocks(const BlockLayout& layout) {
  const std::vector<int32_t>& ptr = layout.LoadRowPtr();
  int32_t most = 0;
  for (size_t r = 0; r + 1 < ptr.size(); ++r) most = std::max(most, ptr[r + 1] - ptr[r]);
  return most;
}

// The serial steps of the busiest block row: one thread block on one SM at mha_row_step_eff
// of the SM's share of the tensor peak, `step_flops` per valid block.
double RowSeconds(double steps, double step_flops, const DeviceSpec& dev,
                  const SegmentModelConstants& k) {
  return steps * step_flops /
         (k.mha_row_step_eff * dev.fp16_tensor_flops / static_cast<double>(dev.sm_count));
}

// The sizes every MHA plan below counts with.
struct MhaDims {
  double es = 0;     // bytes per element
  double bh = 0;     // batch x heads
  double L = 0, d = 0;
  double cells = 0;  // elements of the dense B H L L score tensor
  double mask_bytes = 0;
  // cuBLAS S = Q K^T and P V, dense.
  Kernel DenseQk(const SegmentModelConstants& k) const {
    return Kernel{es * bh * (2 * L * d + L * L), 2 * cells * d, k.bw_eff, k.tc_eff, 0, k.l2_speedup};
  }
  Kernel DensePv(const SegmentModelConstants& k) const {
    return Kernel{es * bh * (L * L + 2 * L * d), 2 * cells * d, k.bw_eff, k.tc_eff, 0, k.l2_speedup};
  }
};

// The row-wise kernel: one warp per query row; per 32-column chunk of the row's CSR the lanes
// score one key each from K rows read through L2, then V rows: K and V bytes per attended key.
void RowWisePlan(const MhaDims& m, const Mask& mask, const SegmentModelConstants& k, Plan& p) {
  double lanes = 0, nnz = 0;
  for (int64_t r = 0; r < mask.Rows(); ++r) {
    const int64_t c = mask.CountRow(r);
    nnz += static_cast<double>(c);
    lanes += static_cast<double>((c + 31) / 32 * 32);
  }
  const double bytes = m.es * m.bh * (2 * m.L * m.d + 2 * nnz * m.d) + 4 * (m.L + 1 + nnz);
  p.Add({bytes, 4 * m.bh * lanes * m.d, k.mha_bw_eff, k.row_wise_flops_frac, 0});
  p.label = "sparse_mha row_wise";
  p.note = Fmt(nnz) + " attended keys/head";
}

// The portable block-wise kernel at `config`: its valid blocks' K and V traffic and FLOPs at
// rates scaled by Eq. 2's occupancy, and the busiest block row as a floor.
Status BlockWisePlan(const MhaDims& m, const Workload& w, const Mask& mask,
                     const MhaConfig& config, const DeviceSpec& dev,
                     const SegmentModelConstants& k, Plan& p) {
  const int64_t bm = config.block_m, bn = config.block_n;
  STOF_RETURN_IF_ERROR(BlockLayout::CheckBlockSize(bm, bn));
  STOF_ASSIGN_OR_RETURN(auto eq2, EvaluateEq2(w, dev));
  const Eq2Candidate* cand = nullptr;
  for (const Eq2Candidate& c : eq2.candidates)
    if (c.block_m == bm && c.block_n == bn && c.num_warps == config.num_warps) cand = &c;
  if (cand == nullptr)
    return MakeError("mha_config: " + Str(bm) + "x" + Str(bn) + " with " +
                     Str(config.num_warps) +
                     " warps is not a block-wise setting (BLOCK_M, BLOCK_N in 16..128, "
                     "num_warps in 1, 2, 4, 8; or 128x64, 128x128 with 12)");
  if (!(cand->occ > 0))
    return MakeError("mha_config: " + Str(bm) + "x" + Str(bn) + ": " + cand->why_infeasible);
  STOF_ASSIGN_OR_RETURN(auto layout, BlockLayout::Build(mask, bm, bn));
  const LayoutStats st = layout.Stats();
  const double valid = static_cast<double>(st.full_blocks + st.part_blocks);
  // q read and o written once per head; each valid block loads its K and V tiles.
  const double bytes = m.es * m.bh * (2 * m.L * m.d + valid * static_cast<double>(bn) * m.d * 2) +
                       static_cast<double>(st.index_bytes + st.bitmap_bytes);
  const double flops = 4 * m.bh * valid * static_cast<double>(bm * bn) * m.d;
  // Eq. 2's occupancy scales both rates (more resident warps hide more latency).
  const double occ = std::pow(cand->occ, k.mha_occ_exp);
  // With 16 rows per warp, num_warps / (BM / 16) groups split a block row's valid blocks;
  // with fewer warps each owns 32 rows. The warps of a block work in parallel, so a step
  // costs what one warp's rows cost, expressed as a 4-warp block of such warps.
  const int64_t groups = std::max<int64_t>(1, config.num_warps / std::max<int64_t>(1, bm / 16));
  const int64_t rows_per_warp = config.num_warps >= bm / 16 ? 16 : bm / config.num_warps;
  const double row_blocks = std::ceil(MaxRowBlocks(layout) / static_cast<double>(groups));
  const double step = 4.0 * static_cast<double>(4 * rows_per_warp * bn) * m.d;
  p.Add({bytes, flops, k.mha_bw_eff * occ, k.mha_tc_eff * occ,
         RowSeconds(row_blocks, step, dev, k)});
  p.label = "sparse_mha block_wise " + Str(bm) + "x" + Str(bn) + "x" + Str(config.num_warps);
  p.note = Fmt(valid) + " valid blocks/head (busiest row " + Fmt(MaxRowBlocks(layout)) +
           "), Eq. 2 OCC " + Fmt(cand->occ);
  return Status::Ok();
}

// SD (decomposed): cuBLAS S; LS over the attended T-chunks; IR; GS; cuBLAS P V.
Status DecomposedPlan(const MhaDims& m, const Mask& mask, int64_t sub_len,
                      const SegmentModelConstants& k, Plan& p) {
  if (sub_len != 64 && sub_len != 128)
    return MakeError("sub_len: expected 64 or 128, got " + Str(sub_len));
  const double sv = ChunkFraction(mask, sub_len);
  const double stats = m.bh * m.L * std::ceil(m.L / static_cast<double>(sub_len));  // (row, sub-vector)
  p.Add(m.DenseQk(k));
  p.Add({m.es * m.cells * 2 * sv + 8 * stats + m.mask_bytes, 4 * m.cells * sv, k.bw_eff, k.tc_eff, 0, k.l2_speedup});  // LS
  p.Add({12 * stats, 4 * stats, k.bw_eff, k.tc_eff, 0, k.l2_speedup});                                  // IR
  p.Add({m.es * m.cells * (sv + 1) + 4 * stats, m.cells, k.bw_eff, k.tc_eff, 0, k.l2_speedup});         // GS
  p.Add(m.DensePv(k));
  p.label = "sparse_mha sd T=" + Str(sub_len);
  return Status::Ok();
}

// SDF (decomposed + fused) on the valid 64 x T tiles.
Status RecomposedPlan(const MhaDims& m, const Mask& mask, int64_t sub_len, const DeviceSpec& dev,
                      const SegmentModelConstants& k, Plan& p) {
  if (sub_len != 64 && sub_len != 128)
    return MakeError("sub_len: expected 64 or 128, got " + Str(sub_len));
  constexpr int64_t kBm = 64;  // RecomposeParams::block_m (MhaCall carries only T)
  STOF_ASSIGN_OR_RETURN(auto layout, BlockLayout::Build(mask, kBm, sub_len));
  const LayoutStats st = layout.Stats();
  const double tiles = m.bh * static_cast<double>(st.full_blocks + st.part_blocks);
  const double x = tiles * kBm * static_cast<double>(sub_len);  // x' elements
  const double rows = tiles * kBm;                                // (row, tile) statistics
  const double qkvo = m.es * m.bh * 2 * m.L * m.d;
  // Q K^T + LS: q, k read, x' and (m', d') written; IR; GS + P V: x', r', v read, o written.
  p.Add({qkvo + m.es * x + 8 * rows, 2 * x * m.d, k.bw_eff, k.mha_tc_eff, 0, k.l2_speedup});
  p.Add({12 * rows, 4 * rows, k.bw_eff, k.tc_eff, 0, k.l2_speedup});
  p.Add({m.es * x + 4 * rows + qkvo, 2 * x * m.d, k.bw_eff, k.mha_tc_eff,
         RowSeconds(MaxRowBlocks(layout), 2.0 * kBm * static_cast<double>(sub_len) * m.d, dev, k),
         k.l2_speedup});
  p.label = "sparse_mha sdf T=" + Str(sub_len);
  p.note = Fmt(st.full_blocks + st.part_blocks) + " valid 64x" + Str(sub_len) + " tiles/head";
  return Status::Ok();
}

}  // namespace

// The kernels of one MhaCall (packed operands, or the block-wise kernel's strided views,
// which move the same bytes).
Expected<Plan> MhaPlan(const Workload& w, const Mask& mask, MhaVariant variant,
                       const MhaConfig& config, int64_t sub_len, const DeviceSpec& dev,
                       const SegmentModelConstants& k, bool scale_q) {
  STOF_RETURN_IF_ERROR(w.Validate("workload"));
  if (mask.Rows() != w.seq_len || mask.Cols() != w.seq_len)
    return MakeError("mask: size " + Str(mask.Rows()) + " x " + Str(mask.Cols()) +
                     " does not match seq_len " + Str(w.seq_len));
  MhaDims m;
  m.es = DTypeBytes(w.dtype);
  m.bh = static_cast<double>(w.batch * w.heads);
  m.L = static_cast<double>(w.seq_len), m.d = static_cast<double>(w.head_dim);
  m.cells = m.bh * m.L * m.L;
  m.mask_bytes = static_cast<double>(mask.Words().size()) * 8;
  Plan p;
  const bool block_wise = variant == MhaVariant::kFused && config.kernel == MhaKernel::kBlockWise;
  if (scale_q && !block_wise)  // CudaBackend::ScaledQ: q * scale * sqrt(d) into a scratch q
    p.Add({2 * m.es * m.bh * m.L * m.d, m.bh * m.L * m.d, k.bw_eff, k.tc_eff, 0, k.l2_speedup});
  switch (variant) {
    case MhaVariant::kFused:
      if (config.kernel == MhaKernel::kRowWise) {
        RowWisePlan(m, mask, k, p);
        return p;
      }
      if (IsHopperMhaWarps(config.num_warps)) {
        // The Hopper form (docs/kernels-hopper.md): the portable 64 x 64, 4-warp prediction
        // scaled by the tile model's time ratio (engine/select/hopper_select.h).
        const MhaConfig portable{MhaKernel::kBlockWise, 64, 64, 4};
        auto base = MhaPlan(w, mask, variant, portable, sub_len, dev, k, scale_q);
        if (!base.IsOk()) return base;
        auto ratio = HopperTimeRatio(mask, w, config.block_m, config.block_n, portable);
        if (!ratio.IsOk()) return Error{"mha_config: " + ratio.Message()};
        for (Kernel& kn : base->kernels) {
          kn.bw_eff /= *ratio;
          kn.tc_eff /= *ratio;
          kn.floor_s *= *ratio;
        }
        base->label = "sparse_mha block_wise " + Str(config.block_m) + "x" + Str(config.block_n) +
                      "x" + Str(config.num_warps) + " (Hopper)";
        base->note = "the 64x64x4 estimate x " + Fmt(*ratio) + " (Hopper tile model)";
        return base;
      }
      STOF_RETURN_IF_ERROR(BlockWisePlan(m, w, mask, config, dev, k, p));
      return p;
    case MhaVariant::kUnfused: {
      // cuBLAS S; one scale+mask+softmax kernel reading the attended 8-element chunks of S and
      // writing P densely; cuBLAS P V (docs/kernels-softmax-recomposition.md, "U").
      const double s8 = ChunkFraction(mask, 8);
      p.Add(m.DenseQk(k));
      p.Add({m.es * m.cells * (1 + s8) + m.mask_bytes, 5 * m.cells, k.bw_eff, k.tc_eff, 0,
             k.l2_speedup});
      p.Add(m.DensePv(k));
      p.label = "sparse_mha unfused";
      return p;
    }
    case MhaVariant::kDecomposed:
      STOF_RETURN_IF_ERROR(DecomposedPlan(m, mask, sub_len, k, p));
      return p;
    case MhaVariant::kRecomposed:
      STOF_RETURN_IF_ERROR(RecomposedPlan(m, mask, sub_len, dev, k, p));
      return p;
  }
  return MakeError("mha: unknown variant");
}

}  // namespace stof::engine::segment_model_detail
