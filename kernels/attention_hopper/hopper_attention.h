// The Hopper block-sparse attention kernel (sm_90a: wgmma, TMA, warp specialization): its
// configurations, their check, and the launch. It is a configuration of the block-wise kernel
// family, reached through the same interfaces (MhaConfig, CudaBackend::RunMha, PreparedMha,
// `stof bench mha`, the C API): BLOCK_M 128, BLOCK_N 64 or 128 and num_warps 12 (three
// warpgroups: one producer, two consumers), or BLOCK_M 64, BLOCK_N 64 (or 128 up to head_dim
// 64) and num_warps 5 (one consumer warpgroup and a producer warp) select it;
// LaunchBlockSparseAttention forwards such a configuration here. Head sizes: multiples of 8 up
// to 256, each run on the kernel of 64, 128 or 256 that holds it (engine::HopperKernelHeadDim;
// BLOCK_N 64 above 128). CUDA-free header. Design and figures: docs/kernels-hopper.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "kernels/attention_common/block_config.h"
#include "kernels/attention_common/mha_operands.h"

namespace stof::kernels {

class DeviceBlockLayout;

// num_warps of the Hopper configurations at BLOCK_M 128 and 64 (no mma.sync configuration
// has 12 or 5 warps).
constexpr int64_t kHopperAttentionWarps = engine::kHopperMhaWarps;
constexpr int64_t kHopperAttentionWarps64 = engine::kHopperMhaWarps64;

// True when num_warps asks for the Hopper kernel (the configuration may still be unsupported).
inline bool IsHopperAttentionRequest(int64_t num_warps) {
  return engine::IsHopperMhaWarps(num_warps);
}

// Dynamic shared memory of one CTA, or 0 when (head_dim, BLOCK_M, BLOCK_N) is not a Hopper
// variant.
size_t HopperAttentionSmemBytes(int64_t head_dim, int64_t block_m, int64_t block_n);

// CTAs per SM the variant is built for (its __launch_bounds__), or 0 when there is no such
// variant. The selection's tile model assumes the same (engine::HopperTileCtasPerSm).
int HopperAttentionCtasPerSm(int64_t head_dim, int64_t block_m, int64_t block_n);

// Ok when (head_dim, BLOCK_M, BLOCK_N, num_warps) is a Hopper configuration that fits
// `smem_limit_bytes`; otherwise an error naming the rule and the supported set.
engine::Status CheckHopperAttentionConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                          int64_t num_warps,
                                          int64_t smem_limit_bytes = kHopperSmemPerBlock);
std::vector<BlockSparseConfig> SupportedHopperAttentionConfigs(
    int64_t head_dim, int64_t smem_limit_bytes = kHopperSmemPerBlock);

// Ok when the current device runs sm_90a code (compute capability 9.0: H100, H200); else an
// error naming the device's capability.
engine::Status CheckHopperDevice();

// Launch choices the automatic rules make, forced (tests and experiments; process-wide, set
// while no launch is in flight). -1 everywhere: the rules (docs/kernels-hopper.md).
struct HopperLaunchOverrides {
  int order = -1;         // 0: tile-major, 1: heavy first
  int persistent = -1;    // 0: one CTA per work item, 1: one wave of CTAs looping over them
  int64_t max_ctas = 0;   // n > 0: a persistent grid of at most n CTAs (tests)
  int dependent_launch = -1;  // 0: plain, 1 or -1 (the rule): programmatic dependent launch
  // 0: whole tiles; 1 or -1 (the rule): heavy tiles' blocks split over CTAs (the layout's
  // HopperUnits) where the tile has a split kernel (BLOCK_M 64) and the launch is heavy first
  // (docs/kernels-hopper.md).
  int split = -1;
};
void SetHopperLaunchOverrides(const HopperLaunchOverrides& overrides);
HopperLaunchOverrides GetHopperLaunchOverrides();

// O = softmax(mask(Q K^T scale)) V as LaunchBlockSparseAttention (block_sparse_attention.h)
// describes it, on the Hopper kernel: `layout` at BLOCK_M x BLOCK_N; q, k, v, o device pointers
// 16-byte aligned; strides multiples of 8 elements. Validates on the host, builds the four
// TMA tensor maps and launches asynchronously on `stream`. The layout's BLOCK_M picks the
// variant (128: 12 warps, 64: 5 warps). `keys`: per batch row key ranges and / or kept keys
// (MhaKeyLimits, kernels/attention_common/mha_operands.h): a padded batch in one launch.
engine::Status LaunchHopperAttention(const engine::Workload& workload,
                                     const DeviceBlockLayout& layout, const void* q,
                                     const void* k, const void* v, void* o, void* stream,
                                     const engine::MhaStrides& q_strides,
                                     const engine::MhaStrides& kv_strides,
                                     const engine::MhaStrides& o_strides, float scale,
                                     const MhaKeyLimits& keys = {});

// The device layout of `mask` (L_q x L_k) for launches of `workload` on the Hopper kernel at
// block_m x block_n: packed where ChooseGqaPacking packs the query heads of a key/value head
// (engine/mask/gqa_pack.h), with the split's fill rule for layouts of few tiles (a decode step:
// PlanHopperUnits in hopper_chunk.h, over the current device's resident CTAs), and the split
// scratch reserved (ReserveHopperSplitWorkspace). Called by PreparedMha::Create.
engine::Expected<std::unique_ptr<DeviceBlockLayout>> PrepareHopperLayout(
    const engine::Mask& mask, const engine::Workload& workload, int64_t block_m,
    int64_t block_n);

// Allocates the layout's split scratch (DeviceBlockLayout::SplitWorkspace) for launches of
// `workload` that will split, so that a CUDA graph captured before any eager launch splits
// too (a launch cannot grow the scratch during a capture). Ok and nothing done when the
// launch would not split. Called by PreparedMha::Create.
engine::Status ReserveHopperSplitWorkspace(const engine::Workload& workload,
                                           const DeviceBlockLayout& layout);

}  // namespace stof::kernels
