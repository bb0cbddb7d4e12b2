// STOF's analytical kernel selection, Eq. 1 and Eq. 2 (see kernel_select.h and docs/references.md).
// Called by SelectKernel users: `stof select`, plans, the GUI's kernel-selection view.
// Invariants: every candidate of Eq. 2 is reported (64 of them, BM-major, then BN, then warps),
// feasible or not, with every intermediate value; `best` is the first feasible candidate with
// the highest score (-1 when none is feasible). Nothing here allocates more than those 64 rows,
// except SelectKernel, which builds one 16 x 16 BlockLayout of the mask.
#include "engine/select/kernel_select.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "engine/core/text_format.h"

namespace stof::engine {

namespace {

constexpr int64_t kBlockSizes[] = {16, 32, 64, 128};
constexpr int64_t kWarpCounts[] = {1, 2, 4, 8};
// The block-wise kernel stages Q, K/V and the score tile in 16-bit (fp16 wmma, as in the
// paper), so one element of Eq. 2's req_SMEM is two bytes whatever the workload's dtype.
constexpr int64_t kSmemElemBytes = 2;

}  // namespace

const char* MhaKernelName(MhaKernel k) {
  switch (k) {
    case MhaKernel::kRowWise: return "row_wise";
    case MhaKernel::kBlockWise: return "block_wise";
  }
  return "?";
}

Expected<MhaKernel> ParseMhaKernel(const std::string& s) {
  // The hyphenated spellings are the paper's ("row-wise"); accepting them costs nothing.
  if (s == "row_wise" || s == "row" || s == "row-wise") return MhaKernel::kRowWise;
  if (s == "block_wise" || s == "block" || s == "block-wise") return MhaKernel::kBlockWise;
  return MakeError("kernel: expected one of row_wise, block_wise (or row, block), got '" + s +
                   "'");
}

// ---- Eq. 1 -----------------------------------------------------------------------------------

Expected<Eq1Result> EvaluateEq1FromCounts(int64_t seq_len, int64_t valid_blocks) {
  if (seq_len < 1 || seq_len > Mask::kMaxLen) {
    return MakeError("eq1: seq_len: expected 1.." + Str(Mask::kMaxLen) + ", got " +
                     Str(seq_len));
  }
  Eq1Result r;
  r.n = (seq_len + Eq1Result::kBlock - 1) / Eq1Result::kBlock;
  const int64_t total = r.n * r.n;  // at most 2048^2: no overflow
  if (valid_blocks < 0 || valid_blocks > total) {
    return MakeError("eq1: valid_blocks: expected 0.." + Str(total) + " (n^2 with n = " +
                     Str(r.n) + "), got " + Str(valid_blocks));
  }
  r.valid_blocks = valid_blocks;
  r.valid_ratio = static_cast<double>(valid_blocks) / static_cast<double>(total);
  if (r.n == 1) {
    // log2(1) = 0: the paper's penalty tau / 0 is +infinity, so threshold = -infinity and the
    // row-wise kernel is chosen. A sequence of one 16-row block is as short as it gets, which
    // is exactly the case the row-wise kernel is for. Set explicitly rather than relying on
    // IEEE division by zero (which -ffast-math would not honour).
    r.penalty = std::numeric_limits<double>::infinity();
    r.threshold = -std::numeric_limits<double>::infinity();
  } else {
    const double lg = std::log2(static_cast<double>(r.n));
    r.penalty = Eq1Result::kTau / (lg * lg);
    r.threshold = r.valid_ratio - r.penalty;
  }
  r.kernel = r.threshold < 0 ? MhaKernel::kRowWise : MhaKernel::kBlockWise;
  return r;
}

Expected<Eq1Result> EvaluateEq1(const BlockLayout& layout16) {
  if (layout16.BlockM() != Eq1Result::kBlock || layout16.BlockN() != Eq1Result::kBlock) {
    return MakeError("eq1: layout: block size must be 16 x 16, got " + Str(layout16.BlockM()) +
                     " x " + Str(layout16.BlockN()));
  }
  if (layout16.LoadRowPtr().empty()) {
    return MakeError("eq1: layout: load_row_ptr is empty (layout was never built)");
  }
  return EvaluateEq1FromCounts(layout16.Rows(), layout16.LoadRowPtr().back());
}

// ---- Eq. 2 -----------------------------------------------------------------------------------

namespace {

Eq2Candidate EvaluateCandidate(int64_t bm, int64_t bn, int64_t warps, const Workload& w,
                               const DeviceSpec& dev) {
  Eq2Candidate c;
  c.block_m = bm;
  c.block_n = bn;
  c.num_warps = warps;
  const int64_t pad = Eq2Result::kPadding;
  // (2*BM + BN) rows of width w + pad (by our reading: the Q and O tiles and the one buffer
  // K and V alternate in) and the BM x (BN + pad) score tile; pad avoids bank conflicts.
  c.req_smem_elems = (2 * bm + bn) * (w.head_dim + pad) + bm * (bn + pad);
  c.req_smem_bytes = c.req_smem_elems * kSmemElemBytes;
  c.blocks_per_sm = dev.smem_per_sm_bytes / c.req_smem_bytes;

  // OCC = num_warps * min(SMEM_SIZE / req_SMEM, MAX_WARP / num_warps) / MAX_WARP.
  // Both terms of the min count thread blocks resident on one SM, and a fraction of a block
  // cannot be resident, so both are floored (integer division): SMEM_SIZE / req_SMEM is
  // blocks_per_sm above, MAX_WARP / num_warps the warp-limited block count. Taking the real
  // quotient would credit, say, 2.9 blocks of shared memory as 2.9 blocks' worth of warps when
  // only 2 fit. For the built-in devices (MAX_WARP 48 or 64) and warps in {1, 2, 4, 8} the
  // second quotient is exact anyway. Only the final ratio is real: OCC is a fraction of
  // MAX_WARP in [0, 1].
  const int64_t warp_limited_blocks = dev.max_warps_per_sm / warps;
  const int64_t resident = std::min(c.blocks_per_sm, warp_limited_blocks);
  c.occ = static_cast<double>(warps * resident) / static_cast<double>(dev.max_warps_per_sm);

  // score = OCC * sqrt(SM_NUM / (BM * BN) * (L * h * bs) / BM), in double throughout
  // (L * h * bs reaches 2^15 * 2^10 * 2^16, beyond int32 but far from double's 2^53).
  const double granularity =
      static_cast<double>(dev.sm_count) / static_cast<double>(bm * bn) *
      (static_cast<double>(w.seq_len) * static_cast<double>(w.heads) *
       static_cast<double>(w.batch)) /
      static_cast<double>(bm);
  // Scored even when infeasible so the views can show how close a candidate came; `best`
  // considers feasible candidates only.
  c.score = c.occ * std::sqrt(granularity);

  if (c.req_smem_bytes > dev.smem_per_block_bytes) {
    c.why_infeasible = "req_smem " + Str(c.req_smem_bytes) + " bytes (" +
                       Str(c.req_smem_elems) + " fp16 elements) > device.smem_per_block_bytes " +
                       Str(dev.smem_per_block_bytes);
  } else if (c.blocks_per_sm < 1) {
    c.why_infeasible = "blocks_per_sm = floor(device.smem_per_sm_bytes " +
                       Str(dev.smem_per_sm_bytes) + " / req_smem " + Str(c.req_smem_bytes) +
                       " bytes) = 0";
  } else {
    c.feasible = true;
  }
  return c;
}

}  // namespace

Expected<Eq2Result> EvaluateEq2(const Workload& workload, const DeviceSpec& device) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  Eq2Result r;
  r.candidates.reserve(std::size(kBlockSizes) * std::size(kBlockSizes) * std::size(kWarpCounts));
  for (int64_t bm : kBlockSizes) {
    for (int64_t bn : kBlockSizes) {
      for (int64_t warps : kWarpCounts) {
        r.candidates.push_back(EvaluateCandidate(bm, bn, warps, workload, device));
        const Eq2Candidate& c = r.candidates.back();
        // Strictly greater: ties keep the earlier candidate (smaller BM, BN, then warps).
        if (c.feasible && (r.best < 0 || c.score > r.candidates[r.best].score))
          r.best = static_cast<int64_t>(r.candidates.size()) - 1;
      }
    }
  }
  return r;
}

// ---- Both ------------------------------------------------------------------------------------

Expected<KernelSelection> SelectKernel(const Mask& mask, const Workload& workload,
                                       const DeviceSpec& device) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  if (mask.Rows() != workload.seq_len || mask.Cols() != workload.seq_len) {
    return MakeError("mask: size " + Str(mask.Rows()) + " x " + Str(mask.Cols()) +
                     " does not match workload.seq_len " + Str(workload.seq_len) +
                     " (expected " + Str(workload.seq_len) + " x " + Str(workload.seq_len) +
                     ")");
  }
  auto layout = BlockLayout::Build(mask, Eq1Result::kBlock, Eq1Result::kBlock);
  if (!layout.IsOk()) return MakeError("mask: 16 x 16 layout: " + layout.Message());
  auto eq1 = EvaluateEq1(*layout);
  if (!eq1.IsOk()) return eq1.ToStatus();
  return SelectKernelFromEq1(std::move(*eq1), workload, device);
}

Expected<KernelSelection> SelectKernelFromEq1(Eq1Result eq1, const Workload& workload,
                                              const DeviceSpec& device) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  STOF_RETURN_IF_ERROR(device.Validate("device"));
  auto eq2 = EvaluateEq2(workload, device);
  if (!eq2.IsOk()) return eq2.ToStatus();

  KernelSelection s;
  s.eq1 = std::move(eq1);
  s.eq2 = std::move(*eq2);
  s.kernel = s.eq1.kernel;
  if (s.eq2.best >= 0) {
    const Eq2Candidate& b = s.eq2.candidates[static_cast<size_t>(s.eq2.best)];
    s.block_m = b.block_m;
    s.block_n = b.block_n;
    s.num_warps = b.num_warps;
  } else if (s.kernel == MhaKernel::kBlockWise) {
    // The row-wise kernel does not use Eq. 2, so an all-infeasible table only matters when
    // Eq. 1 asks for the block-wise kernel: then nothing can run, and the caller must know.
    const Eq2Candidate& smallest = s.eq2.candidates.front();
    return MakeError("device: no block-wise setting fits in shared memory for head_dim " +
                     Str(workload.head_dim) + "; smallest (16 x 16, 1 warp): " +
                     smallest.why_infeasible);
  }
  return s;
}

}  // namespace stof::engine
