// Whether the block-wise kernel's Hopper form (sm_90: wgmma, TMA, warp specialization; 128 x 64
// or 128 x 128 with 12 warps, 64 x 64 or 64 x 128 (d 64) with 5; docs/kernels-hopper.md) should
// replace the portable mma.sync configuration that Eq. 2 and the preferred set picked. The two differ in tile
// size: a coarser tile computes more masked-out elements on a fine-grained mask but runs at a
// higher rate per element. The estimate is time ~ (elements of the valid blocks) / rate, with
// the rates measured on an H100 (hopper_select.cpp). Used by ChooseMhaConfig
// (engine/select/mha_choice.h), so `stof select|bench|run`, the C API and the tuner's default
// all take it; CPU-only, so a machine without a GPU predicts the same choice for an H100.
#pragma once

#include <cstdint>
#include <string>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/gqa_pack.h"
#include "engine/mask/mask.h"

namespace stof::engine {

// The head size the Hopper kernel computes `head_dim` at: 64, 128 or 256, the smallest that
// holds it. The columns past head_dim load as zeros (the copy engine fills outside the tensor),
// add nothing to Q K^T, and their output columns are never stored (docs/kernels-hopper.md,
// "Head sizes"). 0 where it has none: head_dim not a multiple of 8 (a row must be 16-byte
// aligned for the copy engine) or outside [8, 256]. The mma.sync kernels take 64 and 128 only.
int64_t HopperKernelHeadDim(int64_t head_dim);

struct HopperTileEstimate {
  bool eligible = false;       // an sm_90 device, a head_dim it serves, a block-wise pick
  std::string why_not;         // when not eligible
  MhaConfig portable;          // the configuration it is compared with
  MhaConfig hopper;            // the fastest Hopper configuration by the estimate
  double portable_elements = 0;  // BM * BN * valid blocks per head, portable tiling
  double hopper_elements = 0;    // the same at `hopper`'s tile
  double ratio = 0;            // estimated Hopper time / portable time (< 1: Hopper faster)
  bool prefer_hopper = false;  // eligible and ratio < 1
};

// `portable` is a block-wise mma.sync configuration (the automatic choice without the Hopper
// form). Fails only on a mask that is not q_len x seq_len.
Expected<HopperTileEstimate> EstimateHopperTile(const Mask& mask, const Workload& workload,
                                                const DeviceSpec& device,
                                                const MhaConfig& portable);

// The choice for a shape only the Hopper kernel serves (grouped key/value heads, q_len !=
// seq_len; Workload::IsSquareMha false): the tile of the least estimated time among the Hopper
// tiles (the estimate above, each tile on the layout it would run: the packed mask where it
// packs the group's heads, engine/mask/gqa_pack.h) and that packing. Errors: a device other
// than sm_90 or a head_dim the kernel lacks (the message names the shape and the reason), a
// mask that is not q_len x seq_len.
// What makes a workload one only the Hopper kernel serves, for messages: "32 query heads over
// 8 key/value heads, q_len 1 over seq_len 8192" (with ", head_dim 96" when that too), or
// "head_dim 96" for square MHA at a head size the mma.sync kernels lack.
std::string HopperOnlyShape(const Workload& w);

// The note of such a choice (ChooseMhaConfig, mha_choice.h, whichever capabilities it is given):
// the shape, the Hopper tile, the packing, and why Eq. 1 / Eq. 2 do not decide.
std::string HopperShapeNote(const Workload& w, const MhaConfig& config, const GqaPacking& packing);

struct HopperShapeChoice {
  MhaConfig config;
  GqaPacking packing;
  double elements = 0;  // valid-block elements per query head at that tile
};
Expected<HopperShapeChoice> ChooseHopperTileForShape(const Mask& mask, const Workload& workload,
                                                     const DeviceSpec& device);

// The Hopper configuration block_m x block_n's estimated time relative to `portable` on this
// mask (the same elements-over-rates estimate): what the tuner's analytical segment model
// (engine/tune/segment_model.h) scales its portable prediction by. Errors: a tile other than
// 128 x 64, 128 x 128, 64 x 64, 64 x 128 (d 64 only); a head_dim the kernel lacks
// (HopperKernelHeadDim 0) or without that tile; a mask of another size; 1 when the mask has no
// valid block.
Expected<double> HopperTimeRatio(const Mask& mask, const Workload& workload, int64_t block_m,
                                 int64_t block_n, const MhaConfig& portable);

// CTAs per SM the tile model assumes for the Hopper kernel block_m x block_n at head_dim (its
// wave estimate), or 0 where there is no such kernel. Must equal the kernel's own count
// (kernels/attention_hopper/hopper_attention.h, HopperAttentionCtasPerSm; a test ties them).
int HopperTileCtasPerSm(int64_t head_dim, int64_t block_m, int64_t block_n);

}  // namespace stof::engine
