// The engine's model of what the attention kernels run, for a build without them: an
// MhaKernelCapabilities (mha_choice.h) that ChooseMhaConfig takes exactly as it takes the
// kernels' own (kernels::MhaCapabilities, kernels/attention/mha_choice.h), so a build with
// kernels and one without run the same choice and differ only in this object. The mma.sync
// block-wise kernel's rules and SD / SDF's are the kernels' own (block_sparse_rules.h,
// recompose_params.h: one copy, which the kernels call too); so are the Hopper kernel's
// configuration rules (CheckHopperConfigRules, which kernels/attention_hopper/hopper_attention.h's
// CheckHopperAttentionConfig calls with the kernel's own shared-memory sizes); only those sizes
// are modelled here (ModelHopperSmemBytes, a table of the nine variants). tests/gpu/mha_capabilities_test.cpp
// ties the model to the kernels' answers over a grid of configurations and limits. Used by
// ModelMhaRun (engine/analysis/mha_run.h) and the ladder's default fused rung
// (engine/tune/ladder.h).
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace stof::engine
