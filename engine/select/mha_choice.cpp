// ChooseMhaConfig (mha_choice.h): which sparse MHA kernel and parameters run. The square MHA
// of the STOF paper goes through Eq. 1 / Eq. 2 (SelectKernel) restricted to what the kernels
// report they run (MhaKernelCapabilities), then the Hopper tile model; the shapes only the
// Hopper kernel serves (grouped heads, other query lengths, head sizes other than 64 and 128)
// and bf16 go to it directly; the baselines run only on request.
#include "engine/select/mha_choice.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "engine/core/text_format.h"
#include "engine/select/hopper_select.h"

namespace stof::engine {

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

Expected<MhaKernelRequest> ParseMhaKernelRequest(const std::string& s) {
  if (s == "auto") return MhaKernelRequest::kAuto;
  if (s == "native") return MhaKernelRequest::kNative;
  if (s == "sd") return MhaKernelRequest::kDecomposed;
  if (s == "sdf") return MhaKernelRequest::kRecomposed;
  auto k = ParseMhaKernel(s);
  if (!k.IsOk())
    return MakeError("expected auto, row_wise, block_wise, native, sd or sdf, got '" + s +
                             "'");
  return *k == MhaKernel::kRowWise ? MhaKernelRequest::kRowWise
                                           : MhaKernelRequest::kBlockWise;
}

const char* MhaChoiceKernelName(const MhaChoice& c) {
  if (c.recompose) return RecomposeVariantName(c.recompose_variant);
  return c.native ? "native" : MhaKernelName(c.config.kernel);
}

namespace {

// On an sm_90 device the automatic block-wise choice becomes the Hopper kernel's
// configuration when EstimateHopperTile estimates it faster on this mask; the note
// says so with the estimate, and params_source becomes "hopper tile model".
Expected<MhaChoice> PreferHopperTile(const Mask& mask,
                                             const Workload& workload,
                                             const DeviceSpec& device, MhaChoice c) {
  auto e = EstimateHopperTile(mask, workload, device, c.config);
  if (!e.IsOk()) return e.ToStatus();
  if (!e->prefer_hopper) return c;
  const std::string portable =
      MhaConfigText(c.config.block_m, c.config.block_n, c.config.num_warps);
  c.config = e->hopper;
  c.params_source = "hopper tile model";
  c.score = 0;
  for (const Eq2Candidate& x : c.selection.eq2.candidates)
    if (x.block_m == c.config.block_m && x.block_n == c.config.block_n &&
        x.num_warps == c.config.num_warps)
      c.score = x.score;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", e->ratio);
  c.note = "sm_90: the Hopper kernel " +
           MhaConfigText(c.config.block_m, c.config.block_n, c.config.num_warps) +
           " is estimated at " + ratio + " x the time of " + portable +
           " on this mask (valid-block elements over measured rates; docs/kernels-hopper.md)";
  return c;
}

}  // namespace

namespace {

// bf16 runs on the Hopper kernel only: the block-wise choice as for fp16 (the same element
// size, so the same Eq. 1 / Eq. 2 inputs), then the Hopper tile model's configuration where
// that choice is a portable one.
Expected<MhaChoice> ChooseBf16Config(const Mask& mask, const Workload& workload,
                                     const DeviceSpec& device, const MhaRequest& request,
                                     const MhaKernelCapabilities& caps) {
  if (request.kernel != MhaKernelRequest::kAuto &&
      request.kernel != MhaKernelRequest::kBlockWise)
    return MakeError(std::string("workload.dtype: bf16 runs on the block-wise Hopper "
                                         "kernel only (sm_90); the ") +
                             MhaKernelRequestName(request.kernel) + " kernel takes f16");
  Workload as_f16 = workload;
  as_f16.dtype = DType::kF16;
  MhaRequest block_wise = request;
  block_wise.kernel = MhaKernelRequest::kBlockWise;
  STOF_ASSIGN_OR_RETURN(MhaChoice c, ChooseMhaConfig(mask, as_f16, device, block_wise, caps));
  c.kernel_source = request.kernel == MhaKernelRequest::kAuto ? "bf16" : "user";
  if (IsHopperMhaWarps(c.config.num_warps)) return c;
  if (request.block_m != 0 || request.num_warps != 0)
    return MakeError("workload.dtype: bf16 runs on the Hopper kernel only: num_warps 5 "
                             "(BLOCK_M 64) or 12 (BLOCK_M 128), got " +
                             MhaConfigText(c.config.block_m, c.config.block_n, c.config.num_warps));
  STOF_ASSIGN_OR_RETURN(const HopperTileEstimate e,
                        EstimateHopperTile(mask, as_f16, device, c.config));
  if (!e.eligible)
    return MakeError("workload.dtype: bf16 runs on the Hopper kernel only: " +
                             e.why_not);
  c.note = "bf16: the Hopper kernel " +
           MhaConfigText(e.hopper.block_m, e.hopper.block_n, e.hopper.num_warps) +
           " (the tile model's pick; only the Hopper kernel takes bf16) instead of " +
           MhaConfigText(c.config.block_m, c.config.block_n, c.config.num_warps);
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
Expected<MhaChoice> ChooseGroupedConfig(const Mask& mask, const Workload& workload,
                                        const DeviceSpec& device, const MhaRequest& request,
                                        const MhaKernelCapabilities& caps) {
  const std::string shape = HopperOnlyShape(workload);
  if (request.kernel != MhaKernelRequest::kAuto && request.kernel != MhaKernelRequest::kBlockWise)
    return MakeError(
        std::string("request: the ") + MhaKernelRequestName(request.kernel) + " kernel takes " +
        (workload.IsSquareMha() ? "head_dim 64 or 128"
                                : "as many key/value heads as query heads and q_len = seq_len") +
        "; " + shape + " runs on the block-wise Hopper kernel only");
  if (workload.dtype != DType::kF16 && workload.dtype != DType::kBF16)
    return MakeError(std::string("workload.dtype: f16 or bf16 expected, got ") +
                             DTypeName(workload.dtype));
  if ((request.block_m == 0) != (request.block_n == 0))
    return MakeError("request: block_m and block_n must be given together (got " +
                             Str(request.block_m) + " x " + Str(request.block_n) + ")");
  STOF_ASSIGN_OR_RETURN(const HopperShapeChoice pick,
                        ChooseHopperTileForShape(mask, workload, device));
  MhaChoice c;
  c.kernel_source = request.kernel == MhaKernelRequest::kAuto ? "shape" : "user";
  c.config = pick.config;
  c.packing = pick.packing;
  c.params_source = "hopper tile model";
  if (request.block_m != 0 || request.num_warps != 0) {
    // num_warps alone says the tile's rows (5: 64, 12: 128); BLOCK_N stays the model's where
    // that tile has it, else 64.
    const int64_t bm = request.block_m != 0                           ? request.block_m
                       : request.num_warps == kHopperMhaWarps64 ? 64
                       : request.num_warps == kHopperMhaWarps   ? 128
                                                                      : pick.config.block_m;
    int64_t bn = request.block_n != 0 ? request.block_n : pick.config.block_n;
    if (request.block_n == 0 && bm == 64 && bn == 128 &&
        !caps.CheckHopper(workload.head_dim, 64, 128, kHopperMhaWarps64,
                                    device.smem_per_block_bytes)
             .IsOk())
      bn = 64;
    const int64_t warps = request.num_warps != 0 ? request.num_warps
                          : bm == 64               ? kHopperMhaWarps64
                                                   : kHopperMhaWarps;
    STOF_RETURN_IF_ERROR(caps.CheckHopper(workload.head_dim, bm, bn, warps,
                                                    device.smem_per_block_bytes));
    c.config = MhaConfig{MhaKernel::kBlockWise, bm, bn, warps};
    c.packing = ChooseGqaPacking(workload.heads, workload.KvHeads(), workload.QLen(), bm);
    c.params_source =
        request.block_m != 0 && request.num_warps != 0 ? "user" : "user + hopper tile model";
  }
  c.note = HopperShapeNote(workload, c.config, c.packing);
  return c;
}


// The kernels that run only on request (`c` holds Eq. 1 / Eq. 2's selection): the unfused
// native baseline (Eq. 2 for information), SD and SDF with BM x T = block_m x block_n.
Expected<MhaChoice> ChooseBaseline(const Workload& workload, const DeviceSpec& device,
                                   const MhaRequest& request,
                                   const MhaKernelCapabilities& caps, MhaChoice c) {
  const KernelSelection& s = c.selection;
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
      return MakeError(std::string("request: ") +
                               RecomposeVariantName(c.recompose_variant) +
                               ": block_m x block_n is BM x T, each 64 or 128, got " +
                               Str(request.block_m) + " x " + Str(request.block_n));
    c.recompose_params.block_m = static_cast<int>(request.block_m);
    c.recompose_params.sub_len = static_cast<int>(request.block_n);
  }
  STOF_RETURN_IF_ERROR(caps.CheckRecompose(c.recompose_params, workload.head_dim,
                                            c.recompose_variant, device.smem_per_block_bytes));
  if (warps_given)
    c.note = std::string(RecomposeVariantName(c.recompose_variant)) +
             ": the warp count option is ignored (one warp per 16 rows of BM)";
  return c;
}

// Eq. 2's candidates that match the request's fixed fields, best score first (stable: ties
// keep Eq. 2's order, which is how Eq. 2 itself breaks ties). Eq. 2-feasible ones first, then
// the rest: Eq. 2's shared-memory model is not our kernel's, so a candidate it calls infeasible
// may still run. Without overrides the first pass takes only the kernel's preferred set
// (caps.PreferredBlockWise); with a fixed field, or when nothing preferred matches, any
// supported candidate.
Expected<const Eq2Candidate*> PickBlockWiseCandidate(const KernelSelection& s,
                                                     const MhaRequest& request, int64_t d,
                                                     int64_t smem,
                                                     const MhaKernelCapabilities& caps) {
  const bool block_given = request.block_m != 0;
  const bool warps_given = request.num_warps != 0;
  std::vector<size_t> order(s.eq2.candidates.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Eq2Candidate& x = s.eq2.candidates[a];
    const Eq2Candidate& y = s.eq2.candidates[b];
    if (x.feasible != y.feasible) return x.feasible;
    return x.score > y.score;
  });
  const bool restrict = !block_given && !warps_given;
  for (int pass = restrict ? 0 : 1; pass < 2; ++pass) {
    for (size_t i : order) {
      const Eq2Candidate& e = s.eq2.candidates[i];
      if (block_given && (e.block_m != request.block_m || e.block_n != request.block_n)) continue;
      if (warps_given && e.num_warps != request.num_warps) continue;
      const bool ok =
          pass == 0 ? caps.PreferredBlockWise(d, e.block_m, e.block_n, e.num_warps, smem)
                    : caps.CheckBlockWise(d, e.block_m, e.block_n, e.num_warps, smem).IsOk();
      if (ok) return &e;
    }
  }
  const std::string fixed = block_given
                                ? "BLOCK " + Str(request.block_m) + "x" + Str(request.block_n)
                                : "num_warps " + Str(request.num_warps);
  return MakeError("no supported block-wise configuration with " + fixed +
                           " at head_dim " + Str(d) + " (supported: " +
                           caps.DescribeBlockWise(d, smem) + ")");
}

// Why Eq. 2's own pick (the selection's) was not used for `c`'s configuration: outside the
// preferred set, or not supported at all.
void NoteEq2Fallback(MhaChoice& c, int64_t d, int64_t smem, const MhaKernelCapabilities& caps) {
  const KernelSelection& s = c.selection;
  c.fell_back = true;
  const std::string pick = MhaConfigText(s.block_m, s.block_n, s.num_warps);
  const std::string chosen = MhaConfigText(c.config.block_m, c.config.block_n, c.config.num_warps);
  Status why = caps.CheckBlockWise(d, s.block_m, s.block_n, s.num_warps, smem);
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

}  // namespace

Expected<MhaChoice> ChooseMhaConfig(const Mask& mask, const Workload& workload,
                                    const DeviceSpec& device, const MhaRequest& request,
                                    const MhaKernelCapabilities& caps) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  // Grouped heads, another query length or a head size the mma.sync kernels lack (not 64 or
  // 128): the Hopper kernel only.
  if (!workload.IsSquareMha() || (workload.head_dim != 64 && workload.head_dim != 128))
    return ChooseGroupedConfig(mask, workload, device, request, caps);
  if (workload.dtype == DType::kBF16)
    return ChooseBf16Config(mask, workload, device, request, caps);
  if (workload.dtype != DType::kF16)
    return MakeError(std::string("workload.dtype: the sparse MHA kernels take f16 (and, "
                                         "on the Hopper kernel, bf16), got ") +
                             DTypeName(workload.dtype));
  if ((request.block_m == 0) != (request.block_n == 0))
    return MakeError("request: block_m and block_n must be given together (got " +
                             Str(request.block_m) + " x " + Str(request.block_n) + ")");
  auto sel = SelectKernel(mask, workload, device);
  if (!sel.IsOk()) return sel.ToStatus();

  MhaChoice c;
  c.selection = std::move(*sel);
  const KernelSelection& s = c.selection;
  c.eq2_pick_block_m = s.block_m;
  c.eq2_pick_block_n = s.block_n;
  c.eq2_pick_num_warps = s.num_warps;
  const bool block_given = request.block_m != 0;
  const bool warps_given = request.num_warps != 0;
  if (request.kernel == MhaKernelRequest::kNative ||
      request.kernel == MhaKernelRequest::kDecomposed ||
      request.kernel == MhaKernelRequest::kRecomposed)
    return ChooseBaseline(workload, device, request, caps, std::move(c));
  if (request.kernel == MhaKernelRequest::kAuto) {
    c.config.kernel = s.kernel;
    c.kernel_source = "eq1";
  } else {
    c.config.kernel = request.kernel == MhaKernelRequest::kRowWise ? MhaKernel::kRowWise
                                                                   : MhaKernel::kBlockWise;
    c.kernel_source = "user";
  }

  if (c.config.kernel == MhaKernel::kRowWise) {
    c.config.block_m = c.config.block_n = c.config.num_warps = 0;
    c.portable = c.config;
    c.params_source = "-";
    if (block_given || warps_given)
      c.note = "row-wise kernel: the block size and warp count options are ignored";
    return c;
  }

  const int64_t d = workload.head_dim;
  const int64_t smem = device.smem_per_block_bytes;
  if (block_given && warps_given) {
    Status ok =
        caps.CheckBlockWise(d, request.block_m, request.block_n, request.num_warps, smem);
    if (!ok.IsOk()) return ok;
    c.config.block_m = request.block_m;
    c.config.block_n = request.block_n;
    c.config.num_warps = request.num_warps;
    if (!IsHopperMhaWarps(request.num_warps)) c.portable = c.config;
    c.params_source = "user";
    for (const Eq2Candidate& e : s.eq2.candidates)
      if (e.block_m == request.block_m && e.block_n == request.block_n &&
          e.num_warps == request.num_warps)
        c.score = e.score;
    return c;
  }
  STOF_ASSIGN_OR_RETURN(const Eq2Candidate* used,
                        PickBlockWiseCandidate(s, request, d, smem, caps));
  c.config.block_m = used->block_m;
  c.config.block_n = used->block_n;
  c.config.num_warps = used->num_warps;
  c.portable = c.config;
  c.score = used->score;
  if (block_given || warps_given) {
    c.params_source = "user + eq2";
    return c;
  }
  c.params_source = "eq2";
  if (used->block_m != s.block_m || used->block_n != s.block_n || used->num_warps != s.num_warps)
    NoteEq2Fallback(c, d, smem, caps);
  return PreferHopperTile(mask, workload, device, std::move(c));
}

Expected<MhaChoice> ChooseMhaConfigForPatterns(const MaskSet& set, const Workload& workload,
                                               const DeviceSpec& device,
                                               const MhaRequest& request,
                                               const MhaKernelCapabilities& caps) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  if (set.Batch() != workload.batch || set.Heads() != workload.heads ||
      set.Rows() != workload.QLen() || set.Cols() != workload.seq_len)
    return MakeError("masks: " + Str(set.Batch()) + " x " + Str(set.Heads()) +
                             " (batch, head) patterns of " + Str(set.Rows()) + " x " +
                             Str(set.Cols()) + ", the workload has batch " +
                             Str(workload.batch) + ", " + Str(workload.heads) + " heads, " +
                             Str(workload.QLen()) + " x " + Str(workload.seq_len));
  if (request.kernel != MhaKernelRequest::kAuto && request.kernel != MhaKernelRequest::kBlockWise)
    return MakeError(std::string("request: the ") + MhaKernelRequestName(request.kernel) +
                             " kernel takes one mask for every batch row and head; masks per "
                             "batch row / head run on the block-wise Hopper kernel only");
  STOF_ASSIGN_OR_RETURN(MhaChoice c,
                        ChooseGroupedConfig(set.Union(), workload, device, request, caps));
  if (!set.GroupsShareAPattern(workload.GroupSize())) c.packing = {};
  const std::string tile = MhaConfigText(c.config.block_m, c.config.block_n, c.config.num_warps);
  c.note = Str(set.Patterns()) + (set.Patterns() == 1 ? " mask pattern" : " mask patterns") +
           " over " + Str(set.Batch()) + " x " + Str(set.Heads()) +
           " (batch, head): the Hopper kernel " + tile +
           (c.packing.Packed() ? ", packed GQA" : "") +
           " (the tile model on their union; masks per batch row / head run there only)";
  return c;
}

}  // namespace stof::engine
