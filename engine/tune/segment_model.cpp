// The analytical segment cost model (segment_model.h): the kernels LayerRunner would launch for
// a segment, each with its bytes, FLOPs and rates, summed into one prediction.
#include "engine/tune/segment_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/core/text_format.h"
#include "engine/fusion/default_scheme.h"
#include "engine/fusion/template_match.h"
#include "engine/layout/block_layout.h"
#include "engine/mcfuser/chain_kernel_map.h"
#include "engine/mcfuser/chain_model.h"
#include "engine/select/hopper_select.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

namespace {

// One kernel launch: its traffic, work and the rates it gets. `floor_s` is a kernel-specific
// lower bound (MCFuser's estimate, gemm_norm's W streaming, a block row's serial steps), 0
// when there is none. `l2` is the L2 speed-up its bytes get when they fit (1: none).
struct Kernel {
  double bytes = 0, flops = 0;
  double bw_eff = 0, tc_eff = 0;
  double floor_s = 0;
  double l2 = 1;
};

double MemorySeconds(const Kernel& kn, const DeviceSpec& dev) {
  if (kn.bytes <= 0) return 0;
  // All of it from L2 up to half of L2, none of it from L2 at L2 or beyond, linear between.
  const double l2 = static_cast<double>(dev.l2_bytes);
  const double h = std::clamp(2 * (l2 - kn.bytes) / l2, 0.0, 1.0);
  return kn.bytes * (h / kn.l2 + (1 - h)) / (kn.bw_eff * dev.dram_bytes_per_s);
}

double KernelSeconds(const Kernel& kn, const DeviceSpec& dev) {
  const double comp = kn.flops / (kn.tc_eff * dev.fp16_tensor_flops);
  return std::max({MemorySeconds(kn, dev), comp, kn.floor_s});
}

// "12.6", "0.42", "1260": three significant digits, no exponent.
std::string Fmt(double v) {
  char buf[32];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f",
                v);
  return buf;
}

// The kernels of one timed unit and how to describe them.
struct Plan {
  std::string label;  // "gemm_act", "op by op", "sparse_mha block_wise 64x64x4"
  std::string note;   // extra clause for the basis line ("256 valid 64x64 blocks/head"), or ""
  std::vector<Kernel> kernels;
  void Add(const Kernel& k) { kernels.push_back(k); }
  void Append(const Plan& p) { kernels.insert(kernels.end(), p.kernels.begin(), p.kernels.end()); }
};

SegmentPrediction Finish(const Plan& p, const DeviceSpec& dev, const SegmentModelConstants& k) {
  SegmentPrediction r;
  double mem_s = 0, comp_s = 0, t_s = 0, floor_s = 0;
  int floor_bound = 0;
  for (const Kernel& kn : p.kernels) {
    r.bytes += kn.bytes;
    r.flops += kn.flops;
    mem_s += MemorySeconds(kn, dev);
    comp_s += kn.flops / (kn.tc_eff * dev.fp16_tensor_flops);
    const double t = KernelSeconds(kn, dev);
    t_s += t;
    if (kn.floor_s > 0 && kn.floor_s >= t) floor_s += kn.floor_s, ++floor_bound;
  }
  r.kernels = static_cast<int>(p.kernels.size());
  r.us = t_s * 1e6 + r.kernels * k.launch_us + k.segment_us;
  std::string b = p.label + ": " + Str(r.kernels) + (r.kernels == 1 ? " kernel; " : " kernels; ");
  b += Fmt(r.bytes / 1e6) + " MB at " + Fmt(mem_s > 0 ? r.bytes / mem_s / 1e12 : 0) + " TB/s; ";
  b += Fmt(r.flops / 1e9) + " GFLOP at " + Fmt(comp_s > 0 ? r.flops / comp_s / 1e12 : 0) +
       " TFLOP/s";
  if (floor_bound > 0) b += "; " + Fmt(floor_s * 1e6) + " us by the kernel model";
  if (!p.note.empty()) b += "; " + p.note;
  b += "; +" + Str(r.kernels) + "x" + Fmt(k.launch_us) + " us launch +" + Fmt(k.segment_us) +
       " us";
  r.basis = std::move(b);
  return r;
}

// ---- Attention ---------------------------------------------------------------------------

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

// ---- Segments ----------------------------------------------------------------------------

// Bytes of a fused segment: every op's minimum bytes, less each inner output kept on chip
// (its write and its reads inside the segment); an inner output read after the segment (the
// Add before bias_add_norm's norm, written as sum_out) keeps its write.
double FusedBytes(const OpGraph& g, const Segment& s) {
  const double es = DTypeBytes(g.dtype);
  double total = 0;
  for (int n = s.first; n <= s.last; ++n) total += static_cast<double>(g.At(n).bytes);
  for (int n = s.first; n < s.last; ++n) {
    const double out = es * static_cast<double>(g.At(n).output.Elements());
    int reads = 0;
    for (int r = n + 1; r <= s.last; ++r)
      for (const TensorRef& t : g.At(r).inputs) reads += t.source == TensorSource::kOp && t.op == n;
    total -= reads * out;
    if (!OutputEscapes(g, s, n)) total -= out;
  }
  return total;
}

double FusedFlops(const OpGraph& g, const Segment& s) {
  double f = 0;
  for (int n = s.first; n <= s.last; ++n) f += static_cast<double>(g.At(n).flops);
  return f;
}

int64_t Rows(const Op& op) { return op.output.Elements() / op.output.dims.back(); }

// Head split or merge of one of q, k, v, o: read and write B L H d elements.
Kernel HeadsKernel(const OpGraph& g, const SegmentModelConstants& k) {
  const double n = static_cast<double>(g.batch * g.seq_len * g.heads * g.head_dim);
  return {2 * DTypeBytes(g.dtype) * n, 0, k.bw_eff, k.tc_eff, 0, k.l2_speedup};
}

Plan OpByOpPlan(const OpGraph& g, const Segment& s, const SegmentModelConstants& k) {
  Plan p;
  p.label = "op by op (";
  for (int n = s.first; n <= s.last; ++n)
    p.label += std::string(n > s.first ? "+" : "") + OpKindName(g.At(n).kind);
  p.label += ")";
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = g.At(n);
    const Kernel own{static_cast<double>(op.bytes), static_cast<double>(op.flops), k.bw_eff,
                     k.tc_eff, 0, k.l2_speedup};
    if (op.kind == OpKind::kBatchGemm) {
      // Scores: split q and k first; context: split v, then merge the heads (layer_runner).
      const bool scores = op.inputs.at(0).name == "q";
      p.Add(HeadsKernel(g, k));
      if (scores) p.Add(HeadsKernel(g, k));
      p.Add(own);
      if (!scores) p.Add(HeadsKernel(g, k));
    } else {
      p.Add(own);
    }
  }
  return p;
}

// The segment's effective mask: the user's, AND causal when its Mask op says so.
Mask SegmentMask(const OpGraph& g, const Segment& s, const Mask& mask) {
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = g.At(n);
    if (op.kind != OpKind::kMask || !op.causal) continue;
    Mask c = mask;
    for (int64_t i = 0; i < c.Rows(); ++i) c.SetRange(i, i + 1, c.Cols(), false);
    return c;
  }
  return mask;
}

// The tiles of a chain: choice.params where given. Without params the CUDA backend takes the
// first of SupportedGemmChainParams (its instantiated table ordered by a rough cost), which
// lives in kernels/, out of the engine's reach; the model takes instead the setting it predicts
// fastest over the table's ranges (bn 64; bm 16..128, bk 32..128, bh 64..256, powers of two,
// clipped to the shape, within the device's shared memory per block by MCFuser's equation 1).
Expected<ChainTiles> ChainTilesFrom(const ParamMap& params, const GemmChainShape& shape,
                                    const DeviceSpec& dev) {
  const bool given = params.count("bm") || params.count("bn") || params.count("bk") ||
                     params.count("bh");
  if (!given) {
    ChainTiles best;
    double best_s = -1;
    for (int64_t bm : {16, 32, 64, 128})
      for (int64_t bk : {32, 64, 128})
        for (int64_t bh : {64, 128, 256}) {
          const ChainTiles t{std::min(bm, RoundUp16(shape.m)), std::min<int64_t>(64, RoundUp16(shape.n)),
                             std::min(bk, RoundUp16(shape.k)), std::min(bh, RoundUp16(shape.h))};
          const Candidate c{shape, ChainKernelExpr(), t};
          if (!ValidateCandidate(c).IsOk()) continue;
          const ChainEstimate e = EstimateChainUnchecked(c, dev);
          if (e.smem_bytes > dev.smem_per_block_bytes) continue;
          if (best_s < 0 || e.seconds < best_s) best = t, best_s = e.seconds;
        }
    if (best_s < 0) return MakeError("params: no chain tiles fit this shape and device");
    return best;
  }
  ChainTiles t{64, 64, 32, 64};  // GemmChainParams' defaults for the fields not given
  const auto take = [&](const char* name, int64_t& field, int64_t dim) {
    auto it = params.find(name);
    field = it != params.end() ? it->second : std::min(field, RoundUp16(dim));
  };
  take("bm", t.bm, shape.m);
  take("bn", t.bn, shape.n);
  take("bk", t.bk, shape.k);
  take("bh", t.bh, shape.h);
  STOF_RETURN_IF_ERROR(ValidateTiles(shape, t, "params"));
  return t;
}

// MCFuser's shapes cap m at kMaxDim; longer token counts become batches of equal rows (the
// mhnk kernel's grid is linear in both, so the trip counts are the same).
GemmChainShape ChainShape(int64_t m, int64_t n, int64_t kk, int64_t h) {
  GemmChainShape s;
  s.batch = (m + GemmChainShape::kMaxDim - 1) / GemmChainShape::kMaxDim;
  s.m = (m + s.batch - 1) / s.batch;
  s.n = n, s.k = kk, s.h = h;
  return s;
}

Expected<Kernel> ChainKernel(const GemmChainShape& shape, const ChainTiles& tiles,
                             const DeviceSpec& dev, const SegmentModelConstants& k,
                             double min_bytes) {
  Candidate c{shape, ChainKernelExpr(), tiles};
  STOF_ASSIGN_OR_RETURN(auto est, EstimateChain(c, dev));
  return Kernel{min_bytes, est.flops, k.bw_eff, k.tc_eff, k.chain_scale * est.seconds, k.l2_speedup};
}

Expected<Plan> FusedPlan(const OpGraph& g, const Segment& s, TemplateKind kind,
                         const SegmentChoice& choice, const Mask& mask, const DeviceSpec& dev,
                         const SegmentModelConstants& k) {
  const Op* gemm1 = nullptr;
  const Op* gemm2 = nullptr;
  bool has_scale = false;
  for (int n = s.first; n <= s.last; ++n) {
    const Op& op = g.At(n);
    if (op.kind == OpKind::kGemm) (gemm1 ? gemm2 : gemm1) = &op;
    if (op.kind == OpKind::kScale) has_scale = true;
  }
  const double es = DTypeBytes(g.dtype);
  Plan p;
  p.label = TemplateName(kind);
  const Kernel roofline{FusedBytes(g, s), FusedFlops(g, s), k.bw_eff, k.tc_eff, 0, k.l2_speedup};
  switch (kind) {
    case TemplateKind::kSparseMha: {
      const Workload w{g.batch, g.seq_len, g.heads, g.head_dim, g.dtype};
      const Mask eff = SegmentMask(g, s, mask);
      auto mha = MhaPlan(w, eff, choice.mha_variant, choice.mha_config, choice.sub_len, dev, k,
                         !has_scale);
      if (!mha.IsOk()) return mha.ToStatus();
      // Only the fused block-wise kernel reads the projections through strides; the others
      // split q, k, v first and merge o after (layer_runner.cpp).
      const bool strided = choice.mha_variant == MhaVariant::kFused &&
                           choice.mha_config.kernel == MhaKernel::kBlockWise;
      if (!strided)
        for (int i = 0; i < 3; ++i) p.Add(HeadsKernel(g, k));
      p.Append(*mha);
      if (!strided) p.Add(HeadsKernel(g, k));
      p.label = mha->label;
      p.note = mha->note;
      return p;
    }
    case TemplateKind::kGemmChain: {
      const GemmChainShape shape = ChainShape(Rows(*gemm1), gemm1->output.dims.back(),
                                              gemm1->inputs.at(0).dims.back(),
                                              gemm2->output.dims.back());
      STOF_ASSIGN_OR_RETURN(auto tiles, ChainTilesFrom(choice.params, shape, dev));
      STOF_ASSIGN_OR_RETURN(auto kn, ChainKernel(shape, tiles, dev, k, roofline.bytes));
      p.Add(kn);
      p.note = "MCFuser mhnk " + Str(tiles.bm) + "x" + Str(tiles.bn) + "x" + Str(tiles.bk) +
               "x" + Str(tiles.bh) + (choice.params.empty() ? " (model's pick)" : "");
      return p;
    }
    case TemplateKind::kGemmNorm: {
      // Each thread block owns bm full rows and streams all of W (k x n) through L2, one block
      // per SM at the default settings: waves x W bytes at the fitted per-block rate.
      const int64_t n = gemm1->output.dims.back(), kk = gemm1->inputs.at(0).dims.back();
      // Without params the backend takes SupportedGemmNormParams' first setting: the most rows
      // per block that fit, bm 64 up to n = 512, else 32 (docs/kernels-gemm-norm.md).
      auto it = choice.params.find("bm");
      const int64_t bm = it != choice.params.end() ? it->second : (n <= 512 ? 64 : 32);
      if (bm < 1) return MakeError("params.bm: must be positive, got " + Str(bm));
      const int64_t blocks = (Rows(*gemm1) + bm - 1) / bm;
      const int64_t waves = (blocks + dev.sm_count - 1) / dev.sm_count;
      Kernel kn = roofline;
      kn.floor_s = static_cast<double>(waves) * es * static_cast<double>(kk * n) /
                   k.gemm_norm_block_bytes_per_s;
      p.Add(kn);
      p.note = Str(blocks) + " row blocks of " + Str(bm);
      return p;
    }
    case TemplateKind::kScaleMaskSoftmax:
    case TemplateKind::kGemmAct:
    case TemplateKind::kGemmAdd:
    case TemplateKind::kGemmBias:
    case TemplateKind::kBiasAddNorm:
      p.Add(roofline);
      return p;
    case TemplateKind::kNone: break;
  }
  return MakeError("template " + std::string(TemplateName(kind)) + " has no model");
}

}  // namespace

// ---- The H100 fit -------------------------------------------------------------------------
// Fitted to the H100-SXM-80GB measurements in the repository (the segments of `stof run`, the
// fusion-ladder rungs, the GEMM-chain tile settings, the block-wise / native MHA sweep and the
// gemm_norm figures) against the built-in "H100-SXM-80GB" spec, by Nelder-Mead on the log
// constants minimising the mean squared ln(predicted / measured) over all samples
// (tests/bench/segment_model_refit.cpp re-runs it). The data, what each constant saw
// and the accuracy per set: docs/tuner-model.md, "The constants and how they were fitted" and
// "Measured accuracy".
constexpr double kH100BwEff = 0.695;    // 2.33 TB/s: cuBLAS and element-wise streams beyond L2
constexpr double kH100TcEff = 0.691;    // 684 TFLOP/s: cuBLASLt
constexpr double kH100L2Speedup = 2.35; // 5.5 TB/s for working sets under 25 MiB
constexpr double kH100LaunchUs = 1.45;  // each kernel of a CUDA graph after the first
constexpr double kH100SegmentUs = 4.23; // a timed segment's fixed cost: graph launch + events
constexpr double kH100MhaBwEff = 1.28;  // x OCC^0.25: K/V reloads mostly hit L2 (> DRAM peak)
constexpr double kH100MhaTcEff = 0.262; // x OCC^0.25 = 0.196 at 64x64x4 (194 TFLOP/s)
// Held, not fitted: the data's best exponent is about 0, and 0.25 gives Eq. 2's direction
// (more resident warps, faster) at a small loss of fit (docs/tuner-model.md, "The constants
// and how they were fitted").
constexpr double kH100MhaOccExp = 0.25;
constexpr double kH100MhaRowStepEff = 0.0687;  // a lone block row: 7 % of its SM's peak
constexpr double kH100ChainScale = 0.599;      // MCFuser's model over-counts L2-served tiles
constexpr double kH100GemmNormBlockBytesPerS = 27.2e9;  // W through one row block
// Not fitted (no H100 row-wise measurement): the H100 SXM's 67 TFLOP/s fp32 (non-tensor) over
// its 989.4 TFLOP/s fp16 tensor peak (NVIDIA data sheet).
constexpr double kH100RowWiseFlopsFrac = 67.0 / 989.4;

const SegmentModelConstants& H100SegmentConstants() {
  static const SegmentModelConstants kH100 = [] {
    SegmentModelConstants c;
    c.bw_eff = kH100BwEff;
    c.tc_eff = kH100TcEff;
    c.l2_speedup = kH100L2Speedup;
    c.launch_us = kH100LaunchUs;
    c.segment_us = kH100SegmentUs;
    c.mha_bw_eff = kH100MhaBwEff;
    c.mha_tc_eff = kH100MhaTcEff;
    c.mha_occ_exp = kH100MhaOccExp;
    c.mha_row_step_eff = kH100MhaRowStepEff;
    c.chain_scale = kH100ChainScale;
    c.gemm_norm_block_bytes_per_s = kH100GemmNormBlockBytesPerS;
    c.row_wise_flops_frac = kH100RowWiseFlopsFrac;
    return c;
  }();
  return kH100;
}

Expected<SegmentPrediction> PredictSegment(const OpGraph& g, const Segment& s,
                                           const SegmentChoice& choice, const Mask& mask,
                                           const DeviceSpec& device) {
  return PredictSegment(g, s, choice, mask, device, H100SegmentConstants());
}

Expected<SegmentPrediction> PredictSegment(const OpGraph& g, const Segment& s,
                                           const SegmentChoice& choice, const Mask& mask,
                                           const DeviceSpec& device,
                                           const SegmentModelConstants& k) {
  const std::string what = "segment model: ";
  if (auto st = device.Validate("device"); !st.IsOk()) return MakeError(what + st.Message());
  if (s.first < 1 || s.last > g.Size() || s.first > s.last)
    return MakeError(what + "segment " + SegmentLabel(s) + ": outside ops 1.." + Str(g.Size()));
  if (mask.Rows() != g.seq_len || mask.Cols() != g.seq_len)
    return MakeError(what + "mask: size " + Str(mask.Rows()) + " x " + Str(mask.Cols()) +
                     " does not match the graph's seq_len " + Str(g.seq_len));
  const TemplateMatch m = MatchTemplate(g, s);
  const bool fused = m.kind != TemplateKind::kNone && !choice.force_op_by_op &&
                     EscapingInnerOutput(g, s, m.kind) == 0;
  Plan p;
  if (fused) {
    auto f = FusedPlan(g, s, m.kind, choice, mask, device, k);
    if (!f.IsOk()) return MakeError(what + SegmentLabel(s) + ": " + f.Message());
    p = std::move(*f);
  } else {
    p = OpByOpPlan(g, s, k);
  }
  return Finish(p, device, k);
}

Expected<SegmentPrediction> PredictMhaCall(const Workload& w, const Mask& mask, MhaVariant variant,
                                           const MhaConfig& config, int64_t sub_len,
                                           const DeviceSpec& device,
                                           const SegmentModelConstants& k, bool scale_q) {
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  auto p = MhaPlan(w, mask, variant, config, sub_len, device, k, scale_q);
  if (!p.IsOk()) return MakeError("mha model: " + p.Message());
  return Finish(*p, device, k);
}

Expected<SegmentPrediction> PredictGemmChain(const GemmChainShape& shape, const ChainTiles& tiles,
                                             const DeviceSpec& device,
                                             const SegmentModelConstants& k) {
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  STOF_RETURN_IF_ERROR(shape.Validate());
  STOF_RETURN_IF_ERROR(ValidateTiles(shape, tiles, "tiles"));
  const double es = kChainElemBytes;
  const double b = static_cast<double>(shape.batch);
  const double min_bytes = es * b * static_cast<double>(shape.m * shape.k + shape.m * shape.h) +
                           es * static_cast<double>(shape.k * shape.n + shape.n * shape.h);
  STOF_ASSIGN_OR_RETURN(auto kn, ChainKernel(shape, tiles, device, k, min_bytes));
  Plan p;
  p.label = "gemm_chain";
  p.note = "MCFuser mhnk " + Str(tiles.bm) + "x" + Str(tiles.bn) + "x" + Str(tiles.bk) + "x" +
           Str(tiles.bh);
  p.Add(kn);
  return Finish(p, device, k);
}

}  // namespace stof::engine
