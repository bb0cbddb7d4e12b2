// ChooseMhaConfig and PreparedMha (prepared_mha.h): Eq. 1 / Eq. 2 restricted to the supported
// set of the block-wise kernel (or the native baseline, SD or SDF on request), and a layout (or
// a NativeMha or RecomposedMha) built once for timed launches. Used by
// `stof bench mha` and the C API. Host code only; launches go through the kernels' own launch
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

std::string ConfigText(int64_t bm, int64_t bn, int64_t warps) {
  return Str(bm) + "x" + Str(bn) + " warps " + Str(warps);
}

// SDF works on the mask's valid BM x T tiles (SD, like native, on the dense L x L).
bool IsSdf(const RecomposedMha* r) {
  return r != nullptr && r->Variant() == RecomposeVariant::kRecomposed;
}

}  // namespace

const char* MhaKernelRequestName(MhaKernelRequest r) {
  switch (r) {
    case MhaKernelRequest::kAuto: return "auto";
    case MhaKernelRequest::kRowWise: return "row_wise";
    case MhaKernelRequest::kBlockWise: return "block_wise";
    case MhaKernelRequest::kNative: return "native";
    case MhaKernelRequest::kDecomposed: return "sd";
    case MhaKernelRequest::kRecomposed: return "sdf";
  }
  return "?";
}

engine::Expected<MhaKernelRequest> ParseMhaKernelRequest(const std::string& s) {
  if (s == "auto") return MhaKernelRequest::kAuto;
  if (s == "native") return MhaKernelRequest::kNative;
  if (s == "sd") return MhaKernelRequest::kDecomposed;
  if (s == "sdf") return MhaKernelRequest::kRecomposed;
  auto k = engine::ParseMhaKernel(s);
  if (!k.IsOk())
    return engine::MakeError("expected auto, row_wise, block_wise, native, sd or sdf, got '" + s +
                             "'");
  return *k == engine::MhaKernel::kRowWise ? MhaKernelRequest::kRowWise
                                           : MhaKernelRequest::kBlockWise;
}

const char* MhaChoiceKernelName(const MhaChoice& c) {
  if (c.recompose) return RecomposeVariantName(c.recompose_variant);
  return c.native ? "native" : engine::MhaKernelName(c.config.kernel);
}

namespace {

// On an sm_90 device the automatic block-wise choice becomes the Hopper kernel's
// configuration when engine::EstimateHopperTile estimates it faster on this mask; the note
// says so with the estimate, and params_source becomes "hopper tile model".
engine::Expected<MhaChoice> PreferHopperTile(const engine::Mask& mask,
                                             const engine::Workload& workload,
                                             const engine::DeviceSpec& device, MhaChoice c) {
  auto e = engine::EstimateHopperTile(mask, workload, device, c.config);
  if (!e.IsOk()) return e.ToStatus();
  if (!e->prefer_hopper) return c;
  const std::string portable =
      ConfigText(c.config.block_m, c.config.block_n, c.config.num_warps);
  c.config = e->hopper;
  c.params_source = "hopper tile model";
  c.score = 0;
  for (const engine::Eq2Candidate& x : c.selection.eq2.candidates)
    if (x.block_m == c.config.block_m && x.block_n == c.config.block_n &&
        x.num_warps == c.config.num_warps)
      c.score = x.score;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", e->ratio);
  c.note = "sm_90: the Hopper kernel " +
           ConfigText(c.config.block_m, c.config.block_n, c.config.num_warps) +
           " is estimated at " + ratio + " x the time of " + portable +
           " on this mask (valid-block elements over measured rates; docs/kernels-hopper.md)";
  return c;
}

}  // namespace

namespace {

// bf16 runs on the Hopper kernel only: the block-wise choice as for fp16 (the same element
// size, so the same Eq. 1 / Eq. 2 inputs), then the Hopper tile model's configuration where
// that choice is a portable one.
engine::Expected<MhaChoice> ChooseBf16Config(const engine::Mask& mask,
                                             const engine::Workload& workload,
                                             const engine::DeviceSpec& device,
                                             const MhaRequest& request) {
  if (request.kernel != MhaKernelRequest::kAuto &&
      request.kernel != MhaKernelRequest::kBlockWise)
    return engine::MakeError(std::string("workload.dtype: bf16 runs on the block-wise Hopper "
                                         "kernel only (sm_90); the ") +
                             MhaKernelRequestName(request.kernel) + " kernel takes f16");
  engine::Workload as_f16 = workload;
  as_f16.dtype = engine::DType::kF16;
  MhaRequest block_wise = request;
  block_wise.kernel = MhaKernelRequest::kBlockWise;
  STOF_ASSIGN_OR_RETURN(MhaChoice c, ChooseMhaConfig(mask, as_f16, device, block_wise));
  c.kernel_source = request.kernel == MhaKernelRequest::kAuto ? "bf16" : "user";
  if (engine::IsHopperMhaWarps(c.config.num_warps)) return c;
  if (request.block_m != 0 || request.num_warps != 0)
    return engine::MakeError("workload.dtype: bf16 runs on the Hopper kernel only: num_warps 5 "
                             "(BLOCK_M 64) or 12 (BLOCK_M 128), got " +
                             ConfigText(c.config.block_m, c.config.block_n, c.config.num_warps));
  STOF_ASSIGN_OR_RETURN(const engine::HopperTileEstimate e,
                        engine::EstimateHopperTile(mask, as_f16, device, c.config));
  if (!e.eligible)
    return engine::MakeError("workload.dtype: bf16 runs on the Hopper kernel only: " +
                             e.why_not);
  c.note = "bf16: the Hopper kernel " +
           ConfigText(e.hopper.block_m, e.hopper.block_n, e.hopper.num_warps) +
           " (the tile model's pick; only the Hopper kernel takes bf16) instead of " +
           ConfigText(c.config.block_m, c.config.block_n, c.config.num_warps);
  c.config = e.hopper;
  c.params_source = "hopper tile model";
  c.fell_back = false;
  return c;
}

// Grouped key/value heads (GQA, MQA) and query lengths other than the key length (a KV cache's
// prefill and decode steps, cross-attention) run on the Hopper kernel only: its tile model
// picks the tile and whether the group's heads share a tile (packed GQA); Eq. 1 and Eq. 2
// describe the square MHA of the STOF paper and are not evaluated. A request for another
// kernel, or for a configuration that is not a Hopper one, is refused with the reason.
engine::Expected<MhaChoice> ChooseGroupedConfig(const engine::Mask& mask,
                                                const engine::Workload& workload,
                                                const engine::DeviceSpec& device,
                                                const MhaRequest& request) {
  const bool portable_head = workload.head_dim == 64 || workload.head_dim == 128;
  const std::string shape =
      workload.IsSquareMha()
          ? "head_dim " + Str(workload.head_dim)
          : Str(workload.heads) + " query heads over " + Str(workload.KvHeads()) +
                " key/value heads, q_len " + Str(workload.QLen()) + " over seq_len " +
                Str(workload.seq_len) +
                (portable_head ? std::string() : ", head_dim " + Str(workload.head_dim));
  if (request.kernel != MhaKernelRequest::kAuto && request.kernel != MhaKernelRequest::kBlockWise)
    return engine::MakeError(
        std::string("request: the ") + MhaKernelRequestName(request.kernel) + " kernel takes " +
        (workload.IsSquareMha() ? "head_dim 64 or 128"
                                : "as many key/value heads as query heads and q_len = seq_len") +
        "; " + shape + " runs on the block-wise Hopper kernel only");
  if (workload.dtype != engine::DType::kF16 && workload.dtype != engine::DType::kBF16)
    return engine::MakeError(std::string("workload.dtype: f16 or bf16 expected, got ") +
                             engine::DTypeName(workload.dtype));
  if ((request.block_m == 0) != (request.block_n == 0))
    return engine::MakeError("request: block_m and block_n must be given together (got " +
                             Str(request.block_m) + " x " + Str(request.block_n) + ")");
  STOF_ASSIGN_OR_RETURN(const engine::HopperShapeChoice pick,
                        engine::ChooseHopperTileForShape(mask, workload, device));
  MhaChoice c;
  c.kernel_source = request.kernel == MhaKernelRequest::kAuto ? "shape" : "user";
  c.config = pick.config;
  c.packing = pick.packing;
  c.params_source = "hopper tile model";
  if (request.block_m != 0 || request.num_warps != 0) {
    const int64_t bm = request.block_m != 0 ? request.block_m : pick.config.block_m;
    const int64_t bn = request.block_n != 0 ? request.block_n : pick.config.block_n;
    const int64_t warps = request.num_warps != 0 ? request.num_warps
                          : bm == 64               ? kHopperAttentionWarps64
                                                   : kHopperAttentionWarps;
    STOF_RETURN_IF_ERROR(CheckHopperAttentionConfig(workload.head_dim, bm, bn, warps,
                                                    device.smem_per_block_bytes));
    c.config = engine::MhaConfig{engine::MhaKernel::kBlockWise, bm, bn, warps};
    c.packing = engine::ChooseGqaPacking(workload.heads, workload.KvHeads(), workload.QLen(), bm);
    c.params_source = request.block_m != 0 && request.num_warps != 0 ? "user" : "user + hopper tile model";
  }
  c.note = shape + ": the Hopper kernel " +
           ConfigText(c.config.block_m, c.config.block_n, c.config.num_warps) +
           (c.packing.Packed() ? ", " + Str(c.packing.group) + " query heads x " +
                                     Str(c.packing.rows) +
                                     (c.packing.rows == 1 ? " row" : " rows") +
                                     " per tile (packed GQA)"
                               : std::string()) +
           " (Eq. 1 / Eq. 2 describe square MHA and are not evaluated)";
  return c;
}

}  // namespace

engine::Expected<MhaChoice> ChooseMhaConfig(const engine::Mask& mask,
                                            const engine::Workload& workload,
                                            const engine::DeviceSpec& device,
                                            const MhaRequest& request) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  // Grouped heads, another query length or a head size the mma.sync kernels lack (not 64 or
  // 128): the Hopper kernel only.
  if (!workload.IsSquareMha() || (workload.head_dim != 64 && workload.head_dim != 128))
    return ChooseGroupedConfig(mask, workload, device, request);
  if (workload.dtype == engine::DType::kBF16)
    return ChooseBf16Config(mask, workload, device, request);
  if (workload.dtype != engine::DType::kF16)
    return engine::MakeError(std::string("workload.dtype: the sparse MHA kernels take f16 (and, "
                                         "on the Hopper kernel, bf16), got ") +
                             engine::DTypeName(workload.dtype));
  if ((request.block_m == 0) != (request.block_n == 0))
    return engine::MakeError("request: block_m and block_n must be given together (got " +
                             Str(request.block_m) + " x " + Str(request.block_n) + ")");
  auto sel = engine::SelectKernel(mask, workload, device);
  if (!sel.IsOk()) return sel.ToStatus();

  MhaChoice c;
  c.selection = std::move(*sel);
  const engine::KernelSelection& s = c.selection;
  c.eq2_pick_block_m = s.block_m;
  c.eq2_pick_block_n = s.block_n;
  c.eq2_pick_num_warps = s.num_warps;
  const bool block_given = request.block_m != 0;
  const bool warps_given = request.num_warps != 0;
  if (request.kernel == MhaKernelRequest::kNative) {
    c.native = true;
    c.config.kernel = s.kernel;
    c.config.block_m = c.config.block_n = c.config.num_warps = 0;
    c.kernel_source = "user";
    c.params_source = "-";
    if (block_given || warps_given)
      c.note = "native baseline: the block size and warp count options are ignored";
    return c;
  }
  if (request.kernel == MhaKernelRequest::kDecomposed ||
      request.kernel == MhaKernelRequest::kRecomposed) {
    c.recompose = true;
    c.recompose_variant = request.kernel == MhaKernelRequest::kDecomposed
                              ? RecomposeVariant::kDecomposed
                              : RecomposeVariant::kRecomposed;
    c.config.kernel = s.kernel;
    c.config.block_m = c.config.block_n = c.config.num_warps = 0;
    c.kernel_source = "user";
    c.params_source = block_given ? "user" : "default";
    if (block_given) {
      // Checked as int64 first: RecomposeParams holds ints.
      if (request.block_m > 1024 || request.block_n > 1024 || request.block_m < 0 ||
          request.block_n < 0)
        return engine::MakeError(std::string("request: ") +
                                 RecomposeVariantName(c.recompose_variant) +
                                 ": block_m x block_n is BM x T, each 64 or 128, got " +
                                 Str(request.block_m) + " x " + Str(request.block_n));
      c.recompose_params.block_m = static_cast<int>(request.block_m);
      c.recompose_params.sub_len = static_cast<int>(request.block_n);
    }
    STOF_RETURN_IF_ERROR(CheckRecomposeParams(c.recompose_params, workload.head_dim,
                                              c.recompose_variant, device.smem_per_block_bytes));
    if (warps_given)
      c.note = std::string(RecomposeVariantName(c.recompose_variant)) +
               ": the warp count option is ignored (one warp per 16 rows of BM)";
    return c;
  }
  if (request.kernel == MhaKernelRequest::kAuto) {
    c.config.kernel = s.kernel;
    c.kernel_source = "eq1";
  } else {
    c.config.kernel = request.kernel == MhaKernelRequest::kRowWise ? engine::MhaKernel::kRowWise
                                                                   : engine::MhaKernel::kBlockWise;
    c.kernel_source = "user";
  }

  if (c.config.kernel == engine::MhaKernel::kRowWise) {
    c.config.block_m = c.config.block_n = c.config.num_warps = 0;
    c.params_source = "-";
    if (block_given || warps_given)
      c.note = "row-wise kernel: the block size and warp count options are ignored";
    return c;
  }

  const int64_t d = workload.head_dim;
  const int64_t smem = device.smem_per_block_bytes;
  if (block_given && warps_given) {
    engine::Status ok =
        CheckBlockSparseConfig(d, request.block_m, request.block_n, request.num_warps, smem);
    if (!ok.IsOk()) return ok;
    c.config.block_m = request.block_m;
    c.config.block_n = request.block_n;
    c.config.num_warps = request.num_warps;
    c.params_source = "user";
    for (const engine::Eq2Candidate& e : s.eq2.candidates)
      if (e.block_m == request.block_m && e.block_n == request.block_n &&
          e.num_warps == request.num_warps)
        c.score = e.score;
    return c;
  }

  // Candidates matching the fixed fields, best score first (stable: ties keep Eq. 2's order,
  // which is how Eq. 2 itself breaks ties). Eq. 2-feasible ones first, then the rest: Eq. 2's
  // shared-memory model is not our kernel's, so a candidate it calls infeasible may still run.
  std::vector<size_t> order(s.eq2.candidates.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const engine::Eq2Candidate& x = s.eq2.candidates[a];
    const engine::Eq2Candidate& y = s.eq2.candidates[b];
    if (x.feasible != y.feasible) return x.feasible;
    return x.score > y.score;
  });
  // Without overrides the first pass takes only the kernel's preferred set
  // (IsPreferredBlockSparseConfig); with a fixed field, or when nothing preferred matches, any
  // supported candidate.
  const bool restrict = !block_given && !warps_given;
  const engine::Eq2Candidate* used = nullptr;
  for (int pass = restrict ? 0 : 1; pass < 2 && used == nullptr; ++pass) {
    for (size_t i : order) {
      const engine::Eq2Candidate& e = s.eq2.candidates[i];
      if (block_given && (e.block_m != request.block_m || e.block_n != request.block_n)) continue;
      if (warps_given && e.num_warps != request.num_warps) continue;
      const bool ok =
          pass == 0 ? IsPreferredBlockSparseConfig(d, e.block_m, e.block_n, e.num_warps, smem)
                    : CheckBlockSparseConfig(d, e.block_m, e.block_n, e.num_warps, smem).IsOk();
      if (!ok) continue;
      used = &e;
      break;
    }
  }
  if (used == nullptr) {
    std::string fixed = block_given ? "BLOCK " + Str(request.block_m) + "x" + Str(request.block_n)
                                    : "num_warps " + Str(request.num_warps);
    return engine::MakeError("no supported block-wise configuration with " + fixed +
                             " at head_dim " + Str(d) + " (supported: " +
                             DescribeSupportedBlockSparseConfigs(d, smem) + ")");
  }
  c.config.block_m = used->block_m;
  c.config.block_n = used->block_n;
  c.config.num_warps = used->num_warps;
  c.score = used->score;
  if (block_given || warps_given) {
    c.params_source = "user + eq2";
    return c;
  }
  c.params_source = "eq2";
  if (used->block_m != s.block_m || used->block_n != s.block_n || used->num_warps != s.num_warps) {
    c.fell_back = true;
    const std::string pick = ConfigText(s.block_m, s.block_n, s.num_warps);
    const std::string chosen = ConfigText(used->block_m, used->block_n, used->num_warps);
    engine::Status why = CheckBlockSparseConfig(d, s.block_m, s.block_n, s.num_warps, smem);
    if (why.IsOk()) {
      c.params_source = "eq2 (preferred set)";
      c.note = "Eq. 2 picked " + pick +
               "; automatic choices use BLOCK_M, BLOCK_N >= 64 with one warp per 16 rows, "
               "which ran fastest on an H100 (docs/kernels.md), so the best-scoring of those "
               "is used: " + chosen;
    } else {
      c.params_source = "eq2 (supported fallback)";
      // Only the rule, not the supported list that follows it in parentheses.
      std::string rule = why.Message();
      if (size_t p = rule.find(" (supported at"); p != std::string::npos) rule.resize(p);
      c.note = "Eq. 2 picked " + pick + ", which the block-wise kernel does not support (" + rule +
               "); using the best-scoring supported candidate " + chosen;
    }
  }
  return PreferHopperTile(mask, workload, device, std::move(c));
}

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

engine::Status PreparedMha::CheckWorkload(const engine::Workload& w) const {
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
                                        const void* key_ranges) const {
  if (m_block) {
    STOF_RETURN_IF_ERROR(CheckWorkload(w));
    return LaunchBlockSparseAttention(w, *m_block, m_choice.config.num_warps, q, k, v, o, stream,
                                      q_strides, kv_strides, o_strides, scale, key_ranges);
  }
  const char* name = MhaChoiceKernelName(m_choice);
  if (key_ranges != nullptr)
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
  // A packed layout's blocks hold the rows of a key/value head's whole group.
  const double item_heads =
      static_cast<double>(m_block->Packing().Packed() ? w.KvHeads() : w.heads);
  return 4.0 * static_cast<double>(w.batch) * item_heads * static_cast<double>(w.head_dim) *
         static_cast<double>(m_block->ValidBlocks()) *
         static_cast<double>(m_block->BlockM() * m_block->BlockN());
}

}  // namespace stof::kernels
