// ModelMhaCapabilities (model_capabilities.h): the mma.sync, SD / SDF and Hopper rules as the
// kernels call them, and the model of the Hopper kernel's shared memory per variant.
#include "engine/select/model_capabilities.h"

#include <string>

#include "engine/backend.h"
#include "engine/core/text_format.h"
#include "engine/select/block_sparse_rules.h"
#include "engine/select/hopper_select.h"
#include "engine/select/recompose_params.h"

namespace stof::engine {

namespace {

// The Hopper kernel's nine variants and their shared memory per CTA, in bytes (the kernel's
// HopperAttentionTraits<d, BLOCK_N, BLOCK_M>::kSmemBytes: Q slots, K / V stages, staged
// bitmaps, barriers; kernels/attention_hopper/hopper_attention_params.h).
struct HopperVariant {
  int64_t head_dim, block_m, block_n;
  size_t smem;
};
constexpr HopperVariant kHopperVariants[] = {
    {64, 128, 64, 86248},    {64, 128, 128, 138472},  {64, 64, 64, 51396},
    {64, 64, 128, 74884},    {128, 128, 64, 168168},  {128, 128, 128, 201928},
    {128, 64, 64, 67236},    {256, 128, 64, 199816},  {256, 64, 64, 198852},
};

// The kernel's text of its supported set (hopper_attention.cpp).
constexpr const char* kHopperSupported =
    "head_dim a multiple of 8 up to 256 with BLOCK_M 128, BLOCK_N 64 or 128 (64 above head_dim "
    "128), num_warps 12, or BLOCK_M 64, BLOCK_N 64 (and 128 up to head_dim 64), num_warps 5";


}  // namespace

Status RuleMhaCapabilities::CheckBlockWise(int64_t d, int64_t bm, int64_t bn, int64_t warps,
                                           int64_t smem) const {
  if (IsHopperMhaWarps(warps)) return CheckHopperConfigRules(d, bm, bn, warps, smem, m_smem_of);
  return CheckPortableBlockSparseConfig(d, bm, bn, warps, smem);
}

bool RuleMhaCapabilities::PreferredBlockWise(int64_t d, int64_t bm, int64_t bn, int64_t warps,
                                             int64_t smem) const {
  return IsPreferredBlockSparseConfig(d, bm, bn, warps, smem);
}

std::string RuleMhaCapabilities::DescribeBlockWise(int64_t d, int64_t smem) const {
  return DescribeSupportedBlockSparseConfigs(d, smem);
}

Status RuleMhaCapabilities::CheckHopper(int64_t d, int64_t bm, int64_t bn, int64_t warps,
                                        int64_t smem) const {
  return CheckHopperConfigRules(d, bm, bn, warps, smem, m_smem_of);
}

Status RuleMhaCapabilities::CheckRecompose(const RecomposeParams& p, int64_t d,
                                           RecomposeVariant v, int64_t smem) const {
  return CheckRecomposeParams(p, d, v, smem);
}

const MhaKernelCapabilities& ModelMhaCapabilities() {
  static const RuleMhaCapabilities kCaps(ModelHopperSmemBytes);
  return kCaps;
}

size_t ModelHopperSmemBytes(int64_t head_dim, int64_t block_m, int64_t block_n) {
  const int64_t d = HopperKernelHeadDim(head_dim);
  for (const HopperVariant& v : kHopperVariants)
    if (v.head_dim == d && v.block_m == block_m && v.block_n == block_n) return v.smem;
  return 0;
}

Status ModelCheckHopperConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                              int64_t num_warps, int64_t smem_limit_bytes) {
  return CheckHopperConfigRules(head_dim, block_m, block_n, num_warps, smem_limit_bytes,
                                ModelHopperSmemBytes);
}

Status CheckHopperConfigRules(int64_t head_dim, int64_t block_m, int64_t block_n,
                              int64_t num_warps, int64_t smem_limit_bytes, HopperSmemOf smem_of) {
  std::string rule;
  if (num_warps != kHopperMhaWarps && num_warps != kHopperMhaWarps64) {
    rule = "num_warps must be 12 (a producer and two consumer warpgroups, BLOCK_M 128) or 5 (a "
           "consumer warpgroup and a producer warp, BLOCK_M 64)";
  } else if (HopperKernelHeadDim(head_dim) == 0) {
    rule = "head_dim must be a multiple of 8 from 8 to 256";
  } else if (num_warps == kHopperMhaWarps && block_m != 128) {
    rule = "BLOCK_M must be 128 with num_warps 12 (two consumer warpgroups of 64 rows)";
  } else if (num_warps == kHopperMhaWarps64 && block_m != 64) {
    rule = "BLOCK_M must be 64 with num_warps 5 (one consumer warpgroup of 64 rows)";
  } else if (block_n != 64 && block_n != 128) {
    rule = "BLOCK_N must be 64 or 128";
  } else if (block_m == 64 && block_n == 128 && head_dim > 64) {
    rule = "BLOCK_N must be 64 with BLOCK_M 64 above head_dim 64";
  } else if (block_n == 128 && head_dim > 128) {
    rule = "BLOCK_N must be 64 above head_dim 128 (Q and two K/V stages fill the SM)";
  } else if (const size_t smem = smem_of(head_dim, block_m, block_n);
             static_cast<int64_t>(smem) > smem_limit_bytes) {
    rule = "needs " + Str(static_cast<int64_t>(smem)) + " bytes of shared memory, the limit is " +
           Str(smem_limit_bytes);
  }
  if (rule.empty()) return Status::Ok();
  return MakeError("block-wise MHA (Hopper kernel): unsupported BLOCK_M " + Str(block_m) +
                   ", BLOCK_N " + Str(block_n) + ", num_warps " + Str(num_warps) +
                   ", head_dim " + Str(head_dim) + ": " + rule + " (supported: " +
                   kHopperSupported + ")");
}

}  // namespace stof::engine
