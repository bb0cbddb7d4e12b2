// Internal to kernels/attention_hopper: the parameter block of the Hopper attention kernel,
// its compile-time traits (tile sizes, pipeline depth, shared-memory map) and the per-variant
// launcher declaration. hopper_attention.cpp (host dispatch) includes only this; the variants
// are instantiated in hopper_attention_d64.cu / _d128.cu.
// Invariants (checked by LaunchHopperAttention before any launch): the device is sm_90; the
// layout is a BlockLayout of the mask at kBlockM x kBlockN; q/k/v/o tensor maps describe
// [B][H][L][d] fp16 views with 64-column, 128-byte-swizzled boxes (Q: 128 rows, K and V:
// kBlockN rows, O: 64 rows); q_tiles * batch * heads < 2^31.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "engine/core/status.h"

namespace stof::kernels::detail {

struct HopperAttentionParams {
  // Per Q tile (block row) the part blocks (element mask from their bitmaps) and the full
  // blocks (no mask work), as two CSR lists; part block j of the layout owns bitmap j.
  const int32_t* part_row_ptr = nullptr;  // [q_tiles + 1]
  const int32_t* part_col_idx = nullptr;
  const int32_t* full_row_ptr = nullptr;  // [q_tiles + 1]
  const int32_t* full_col_idx = nullptr;
  const uint64_t* part_bitmaps = nullptr;  // [part blocks][kBlockM * kBlockN / 64], row-major
  int seq_len = 0;
  // Launch order (kHeavyFirst): CTA x takes rank x / heads_total of tile_order, head
  // x % heads_total, so the longest Q tiles of every head start first; else (kTileMajor) tile
  // x % q_tiles of head x / q_tiles, a head's tiles together.
  const int32_t* tile_order = nullptr;  // [q_tiles]: tiles by valid blocks, most first
  int order = 0;                        // 0 = kTileMajor, 1 = kHeavyFirst
  int heads_total = 0;                  // batch * heads
  int q_tiles = 0;  // ceil(seq_len / kBlockM)
  int heads = 0;
  float scale_log2 = 0;  // log2(e) * score scale: scores are kept in base-2 units
  int64_t grid_blocks = 0;
};

// Tensor maps of one launch (tensor_map.h), passed to the kernel as __grid_constant__.
struct HopperTensorMaps {
  CUtensorMap q, k, v, o;
};

// One CTA: a producer warpgroup (one thread issues every TMA copy) and two consumer
// warpgroups of 64 query rows each. Shared memory, every tile 1024-byte aligned, in 64-column
// panels of 128-byte rows (the wgmma/TMA 128-byte swizzle, kernels/common/hopper/wgmma.cuh):
//   Q  [panels][128 rows]                (reused by each consumer for its 64 O rows)
//   K  [stages][panels][kBlockN rows]
//   V  [stages][panels][kBlockN rows]
//   barriers: q_full, k_full[stages], v_full[stages], k_empty[stages], v_empty[stages]
template <int kHeadDim_, int kBlockN_>
struct HopperAttentionTraits {
  static_assert(kHeadDim_ == 64 || kHeadDim_ == 128, "head_dim: 64 or 128");
  static_assert(kBlockN_ == 64 || kBlockN_ == 128, "BLOCK_N: 64 or 128");
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kBlockM = 128;
  static constexpr int kConsumers = 2;       // warpgroups of 64 rows
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kProducerRegs = 24;   // setmaxnreg: 24 * 128 + 240 * 256 <= 65536
  static constexpr int kConsumerRegs = 240;
  static constexpr int kPanels = kHeadDim / 64;
  static constexpr int kRowBytes = 128;      // one panel row: 64 fp16
  static constexpr int kQPanelBytes = kBlockM * kRowBytes;
  static constexpr int kKvPanelBytes = kBlockN * kRowBytes;
  static constexpr int kQBytes = kPanels * kQPanelBytes;
  static constexpr int kKvTileBytes = kPanels * kKvPanelBytes;
  // Pipeline depth: as deep as fits next to Q at 1 CTA per SM (227 KiB): 2 stages of K and V
  // at d 128 x BLOCK_N 128 (160 KiB), 3 elsewhere.
  static constexpr int kStages = (kHeadDim == 128 && kBlockN == 128) ? 2 : 3;
  static constexpr int kKOffset = kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKvTileBytes;
  static constexpr int kBarrierOffset = kVOffset + kStages * kKvTileBytes;
  static constexpr int kBarriers = 1 + 4 * kStages;
  // + 1024: the dynamic shared memory base is aligned up to 1024 bytes in the kernel.
  static constexpr size_t kSmemBytes = kBarrierOffset + 8 * kBarriers + 1024;
  static constexpr int kSAcc = kBlockN / 2;   // fp32 S accumulators per consumer thread
  static constexpr int kOAcc = kHeadDim / 2;  // fp32 O accumulators per consumer thread
  static constexpr int kBitmapWords = kBlockM * kBlockN / 64;
  static constexpr int kWordsPerRow = kBlockN / 64;
};

// Launches one variant on `stream` (cudaStream_t) of the current device `device`.
template <int kHeadDim, int kBlockN>
engine::Status LaunchHopperAttentionVariant(const HopperAttentionParams& p,
                                            const HopperTensorMaps& maps, int device,
                                            void* stream);

}  // namespace stof::kernels::detail
