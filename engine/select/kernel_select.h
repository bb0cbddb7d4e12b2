// STOF's analytical MHA kernel selection (docs/references.md, STOF section 4.2):
//   Eq. 1 picks the row-wise or block-wise kernel from the valid-block ratio at 16 x 16;
//   Eq. 2 ranks every (BLOCK_M, BLOCK_N, num_warps) by SMEM-limited occupancy and granularity.
// Every intermediate value is returned so the CLI and the GUI can show why a choice was made.
// Used by `stof select`, plans, the GUI's kernel-selection view and (later) the tuner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/layout/block_layout.h"
#include "engine/mask/mask.h"

namespace stof::engine {

enum class MhaKernel { kRowWise, kBlockWise };
const char* MhaKernelName(MhaKernel k);                    // "row_wise", "block_wise"
Expected<MhaKernel> ParseMhaKernel(const std::string& s);  // also "row", "block", "row-wise"...

// Eq. 1: threshold = load_row_ptr[n] / n^2 - tau / (log2 n)^2, n = ceil(L / 16).
struct Eq1Result {
  static constexpr int64_t kBlock = 16;
  static constexpr double kTau = 1.2;
  int64_t n = 0;             // ceil(L / 16)
  int64_t valid_blocks = 0;  // load_row_ptr[n] at 16 x 16
  double valid_ratio = 0;    // valid_blocks / n^2
  double penalty = 0;        // tau / (log2 n)^2 (infinite when n == 1: log2 1 = 0)
  double threshold = 0;      // valid_ratio - penalty
  MhaKernel kernel = MhaKernel::kBlockWise;  // row-wise iff threshold < 0
};
// `layout16` must be at 16 x 16 (error otherwise).
Expected<Eq1Result> EvaluateEq1(const BlockLayout& layout16);
// The same from the counts alone (seq_len >= 1, 0 <= valid_blocks <= n^2).
Expected<Eq1Result> EvaluateEq1FromCounts(int64_t seq_len, int64_t valid_blocks);

// Eq. 2 for one candidate. Units: req_smem in fp16 elements (as in the paper), converted to
// bytes (x2) to compare with the device; OCC uses floor(SMEM_SIZE / req_SMEM) resident blocks.
struct Eq2Candidate {
  int64_t block_m = 0, block_n = 0, num_warps = 0;
  int64_t req_smem_elems = 0;
  int64_t req_smem_bytes = 0;
  int64_t blocks_per_sm = 0;  // floor(smem_per_sm / req_smem_bytes)
  double occ = 0;             // num_warps * min(blocks_per_sm, MAX_WARP / num_warps) / MAX_WARP
  double score = 0;           // OCC * sqrt(SM_NUM / (BM * BN) * (L * h * bs) / BM)
  // occ and score are filled in for infeasible candidates too (views show how close they
  // came); Eq2Result::best only considers feasible ones.
  bool feasible = false;
  std::string why_infeasible;  // empty when feasible
};

struct Eq2Result {
  static constexpr int64_t kPadding = 16;
  std::vector<Eq2Candidate> candidates;  // every combination, in enumeration order
  int64_t best = -1;                     // index of the feasible candidate with the top score
};

// Candidates: BM, BN in {16, 32, 64, 128}, num_warps in {1, 2, 4, 8}. Ties keep the first.
Expected<Eq2Result> EvaluateEq2(const Workload& workload, const DeviceSpec& device);

// Eq. 1 then Eq. 2 on a mask; the decision and everything behind it. Fails when the mask is
// not seq_len x seq_len, or when Eq. 1 picks block-wise and no Eq. 2 candidate is feasible
// (with row-wise, block_m/block_n/num_warps stay 0 if none is).
struct KernelSelection {
  Eq1Result eq1;
  Eq2Result eq2;
  MhaKernel kernel = MhaKernel::kBlockWise;
  int64_t block_m = 0, block_n = 0, num_warps = 0;  // Eq. 2's best (used by block-wise)
};
Expected<KernelSelection> SelectKernel(const Mask& mask, const Workload& workload,
                                       const DeviceSpec& device);
// The same from Eq. 1's result already evaluated (a mask held as runs counts its 16 x 16 valid
// blocks without a layout: AnalyzeRowRuns): Eq. 2 and the decision, SelectKernel's rules.
Expected<KernelSelection> SelectKernelFromEq1(Eq1Result eq1, const Workload& workload,
                                              const DeviceSpec& device);

}  // namespace stof::engine
