// What the attention kernels run, as rules: RuleMhaCapabilities, the one MhaKernelCapabilities
// (mha_choice.h) of every build, over the Hopper kernel's shared memory per variant. The
// kernels' own (kernels::MhaCapabilities, kernels/attention/mha_choice.h) passes the kernel's
// sizes; ModelMhaCapabilities, for a build without kernels, passes ModelHopperSmemBytes (a table
// of the nine variants), so both builds run the same choice and differ only in those sizes. The
// rules are one copy the kernels' launch checks call too: the mma.sync block-wise kernel's and
// SD / SDF's (block_sparse_rules.h, recompose_params.h) and the Hopper kernel's
// (CheckHopperConfigRules, which kernels/attention_hopper/hopper_attention.h's
// CheckHopperAttentionConfig calls). tests/gpu/mha_capabilities_test.cpp ties the model's sizes
// and answers to the kernels'. Used by ModelMhaRun (engine/analysis/mha_run.h), the ladder's
// default fused rung (engine/tune/ladder.h) and kernels::MhaCapabilities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "engine/select/mha_choice.h"

namespace stof::engine {

// The kernels' rules as the engine knows them (one instance).
const MhaKernelCapabilities& ModelMhaCapabilities();

// Dynamic shared memory of one CTA of the Hopper kernel's (head_dim, BLOCK_M, BLOCK_N) variant
// (head_dim rounded up by HopperKernelHeadDim), or 0 where there is no such variant. Must equal
// the kernel's own HopperAttentionSmemBytes (a test ties them).
size_t ModelHopperSmemBytes(int64_t head_dim, int64_t block_m, int64_t block_n);

// The Hopper kernel's configuration rules, one copy: Ok when (head_dim, BLOCK_M, BLOCK_N,
// num_warps) is a Hopper configuration whose shared memory (`smem_of`, asked only once the
// other rules pass) is within `smem_limit_bytes`, else the message naming the rule. The kernel's
// CheckHopperAttentionConfig calls it with its own sizes (HopperAttentionSmemBytes), the model
// (ModelCheckHopperConfig) with ModelHopperSmemBytes.
using HopperSmemOf = size_t (*)(int64_t head_dim, int64_t block_m, int64_t block_n);
Status CheckHopperConfigRules(int64_t head_dim, int64_t block_m, int64_t block_n,
                              int64_t num_warps, int64_t smem_limit_bytes, HopperSmemOf smem_of);

// The model of CheckHopperAttentionConfig: CheckHopperConfigRules with ModelHopperSmemBytes.
Status ModelCheckHopperConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                              int64_t num_warps, int64_t smem_limit_bytes);

// The kernels' rules as one MhaKernelCapabilities (the mma.sync and SD / SDF rules, the Hopper
// rules of CheckHopperConfigRules) over the Hopper kernel's shared memory per variant given by
// `smem_of`: the kernels' own sizes in a CUDA build (kernels::MhaCapabilities), the model's
// (ModelHopperSmemBytes) in ModelMhaCapabilities.
class RuleMhaCapabilities final : public MhaKernelCapabilities {
 public:
  explicit RuleMhaCapabilities(HopperSmemOf smem_of) : m_smem_of(smem_of) {}
  // num_warps 5 / 12: the Hopper rules; any other: the mma.sync kernel's.
  Status CheckBlockWise(int64_t head_dim, int64_t block_m, int64_t block_n, int64_t num_warps,
                        int64_t smem_limit_bytes) const override;
  bool PreferredBlockWise(int64_t head_dim, int64_t block_m, int64_t block_n, int64_t num_warps,
                          int64_t smem_limit_bytes) const override;
  std::string DescribeBlockWise(int64_t head_dim, int64_t smem_limit_bytes) const override;
  Status CheckHopper(int64_t head_dim, int64_t block_m, int64_t block_n, int64_t num_warps,
                     int64_t smem_limit_bytes) const override;
  Status CheckRecompose(const RecomposeParams& p, int64_t head_dim, RecomposeVariant v,
                        int64_t smem_limit_bytes) const override;

 private:
  HopperSmemOf m_smem_of;
};

}  // namespace stof::engine
