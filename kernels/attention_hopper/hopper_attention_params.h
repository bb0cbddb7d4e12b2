// Internal to kernels/attention_hopper: the parameter block of the Hopper attention kernel,
// its compile-time traits (tile sizes, pipeline depth, shared-memory map) and the per-variant
// launcher declaration. hopper_attention.cpp (host dispatch) includes only this; the variants
// are instantiated in hopper_attention_d64.cu / _d128.cu / _d256.cu.
// Invariants (checked by LaunchHopperAttention before any launch): the device is sm_90; the
// layout is a BlockLayout of the mask (or of its packed form, below) at kBlockM x kBlockN;
// the k/v tensor maps describe [B][H_kv][L_k][d] views with 64-column boxes of kBlockN rows,
// d <= kHeadDim (a head size between the kernel's runs on the next one up: the columns past d
// load as zeros, add nothing to S, and their output columns are never stored),
// the q/o maps [B][H_kv][group][L_q][d] views (group = H / H_kv query heads per key/value head)
// with boxes of kBlockM (q) or 64 (o) rows, all 128-byte-swizzled; q_tiles * batch * heads <
// 2^31.
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
  int seq_len = 0;  // keys L_k: a block running past it masks the keys beyond
  // Grouped key/value heads: query head h reads key/value head h / kv_group. Unpacked
  // (pack_rows 0): a work item is a Q tile of one query head, rows tile * kBlockM.. of the
  // mask. Packed GQA (pack_rows = Lp, a power of two >= L_q): a work item's head is a
  // key/value head, and its tile's rows are the rows of all kv_group query heads sharing it,
  // row m = query head (m / Lp) of the group, query row m % Lp (rows past L_q are neither read
  // nor written: the q/o maps' box there is Lp rows x kBlockM / Lp heads); the layout is built
  // from the mask repeated per head (engine::PackGqaMask), so K and V load once per group.
  int kv_group = 1;
  int pack_rows = 0;
  int q_len = 0;  // query rows L_q (the q / o maps' row extent)
  // Null, or per batch row the keys it attends, [first, end) ([batch][2] int32, 8-byte
  // aligned): padding in one launch (a left- or right-padded batch over one mask); the keys
  // outside are masked like keys past L_k.
  const int32_t* key_ranges = nullptr;
  // Null, or per batch row the keys it keeps ([batch][key_words] 64-bit words, bit j of word
  // w = key 64 w + j; key_words * 64 covers L_k rounded up to 128): padding with holes in one
  // launch; the keys it drops are masked like keys past L_k.
  const uint64_t* key_bits = nullptr;
  int key_words = 0;
  // Null, or per work item head ([batch][heads] of the items) the index of its mask pattern
  // (DeviceBlockLayout::CreatePatterns): pattern i's block rows are rows i * (q_tiles + 1)..
  // of the row pointers above. Never with `units` (the host does not split such launches).
  const int32_t* pattern_of = nullptr;
  // Launch order (kHeavyFirst): CTA x takes rank x / heads_total of tile_order, head
  // x % heads_total, so the longest Q tiles of every head start first; else (kTileMajor) tile
  // x % q_tiles of head x / q_tiles, a head's tiles together.
  const int32_t* tile_order = nullptr;  // [q_tiles]: tiles by valid blocks, most first
  int order = 0;                        // 0 = kTileMajor, 1 = kHeavyFirst
  int heads_total = 0;                  // batch * heads
  int q_tiles = 0;  // the layout's block rows: ceil(L_q / kBlockM), packed ceil(group Lp / kBlockM)
  int heads = 0;    // heads of the work items: H, or H_kv when packed
  float scale_log2 = 0;  // log2(e) * score scale: scores are kept in base-2 units
  // Work items: one per (Q tile, batch, head), numbered in the launch order above. CTA c
  // starts with item c; on a persistent grid (fewer CTAs than items, `dynamic`) each CTA then
  // takes the next unstarted item from `work_counter` (an atomic counter) until none is left,
  // so the items start in launch order, as the hardware starts the CTAs of a full grid.
  int64_t items = 0;
  int dynamic = 0;
  int32_t* work_counter = nullptr;  // [2]: items handed out beyond the first wave, CTAs done
  // Host side only: 0 launches one CTA per item; -1 a persistent grid of as many CTAs as are
  // co-resident on the device; n > 0 at most n CTAs (tests).
  int64_t max_ctas = 0;
  // A split launch: heavy tiles' visited blocks cut into chunks, each chunk a work item of its
  // own. `units` ([unit_count][2] int32: tile, PackPiece(chunk, chunks, slot); heavy first;
  // DeviceBlockLayout::HopperUnits) replaces tile_order: item x is unit x / heads_total of
  // (batch, head) x % heads_total, and items = unit_count * heads_total. A chunk of a split
  // tile (chunks > 1) writes its consumer's unnormalised O and (max, sum) per thread to
  // `split_partials` ([heads_total][split_slots][consumers][kOAcc / 4 + 1][128] float4), then
  // counts itself in `split_arrivals` ([heads_total][q_tiles][consumers], zero between
  // launches); the last chunk of the tile to arrive merges the others' partials into its own,
  // stores the output (CombineChunks, hopper_split.cuh) and sets the counter back to zero.
  const int32_t* units = nullptr;  // null: no split, items are whole tiles
  int split_slots = 0;
  float* split_partials = nullptr;
  int32_t* split_arrivals = nullptr;
  // Host side only: 1 or -1 (the default) launches with programmatic dependent launch
  // (grid_dependency.cuh), 0 without.
  int dependent_launch = -1;
};

// Tensor maps of one launch (tensor_map.h), passed to the kernel as __grid_constant__.
struct HopperTensorMaps {
  CUtensorMap q, k, v, o;
};

// One CTA computes kBlockM query rows in consumer warpgroups of 64 rows each:
//  BLOCK_M 128: a producer warpgroup (warps 0-3; one thread issues every TMA copy; setmaxnreg
//    lowers it to 24 registers so the two consumers get 240) and two consumer warpgroups
//    (warps 4-11), one CTA per SM: 12 warps.
//  BLOCK_M 64: one consumer warpgroup (warps 0-3) and one producer warp (warp 4), no register
//    reallocation (setmaxnreg works on whole warpgroups; at 3-4 CTAs per SM a thread may hold
//    102-136 registers anyway): 5 warps. Three or four CTAs per SM (kCtasPerSm) overlap one's
//    softmax with another's GEMMs, as pingpong does inside the 128-row CTA, on a tile half as
//    tall, so a fine-grained mask computes fewer masked-out elements.
// Shared memory, every tile 1024-byte aligned, in 64-column panels of 128-byte rows (the
// wgmma/TMA 128-byte swizzle, kernels/common/hopper/wgmma.cuh):
//   Q  [q slots][panels][kBlockM rows]   (a ring of kQSlots work items' Q; each consumer
//                                         stages its 64 output rows in its rows of its item's
//                                         slot, which stays busy until the store has read them)
//   K  [stages][panels][kBlockN rows]
//   V  [stages][panels][kBlockN rows]
//   bitmaps [stages][kBlockM x kBlockN bits] (where they fit: kBitmapsInSmem): a part
//                                         block's bitmap, loaded by the copy engine with
//                                         its V tile
//   barriers: q_full[q slots], q_empty[q slots], k_full[stages], v_full[stages],
//             k_empty[stages], v_empty[stages]
//   the work items of the Q slots (kWorkItemBytes each: written by the producer before it
//   completes the slot's q_full), then the consumers' split flags
// kBf16_: Q, K, V and O in bf16 (P too, for its GEMM), else fp16; the same sizes and roles.
// kSplit_: the traits of the chunk-merging split kernels (hopper_split.cuh; 64-row tiles):
// two CTAs per SM (their __launch_bounds__) and a deeper K/V ring in the shared memory that
// frees. They run launches of few tiles whose keys are cut over many CTAs (a decode step, the
// global rows of a batch-1 mask), where a CTA streams K and V with little compute per block, so
// the bytes each SM keeps in flight bound the speed (a one-stage ring refills a stage only once
// the consumer has released it).
template <int kHeadDim_, int kBlockN_, int kBlockM_ = 128, bool kBf16_ = false,
          bool kSplit_ = false>
struct HopperAttentionTraits {
  static_assert(kHeadDim_ == 64 || kHeadDim_ == 128 || kHeadDim_ == 256,
                "head_dim: 64, 128 or 256");
  static_assert(kBlockN_ == 64 || kBlockN_ == 128, "BLOCK_N: 64 or 128");
  static_assert(kBlockM_ == 128 || (kBlockM_ == 64 && (kBlockN_ == 64 || kHeadDim_ == 64)),
                "BLOCK_M 128 (BLOCK_N 64, 128) or 64 (BLOCK_N 64; 128 at d 64)");
  static_assert(kHeadDim_ != 256 || kBlockN_ == 64, "d 256: BLOCK_N 64");
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr bool kBf16 = kBf16_;
  static constexpr int kConsumers = kBlockM / 64;  // warpgroups of 64 rows
  static constexpr bool kWideProducer = kConsumers == 2;  // a producer warpgroup + setmaxnreg
  static constexpr int kProducerWarps = kWideProducer ? 4 : 1;
  static constexpr int kThreads = 128 * kConsumers + 32 * kProducerWarps;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kProducerRegs = 24;   // see kConsumerRegs
  // setmaxnreg moves registers within the CTA's own allocation (384 threads x 168, the launch
  // bounds' limit), not the SM's: 24 * 128 + 240 * 256 = 64 512 = 384 * 168 exactly. With the
  // producer at 32 (to drop its spill) the consumers' increase waits forever: the Hopper tests
  // hung. The spill stays in the producer thread, which runs up to kStages blocks ahead of the
  // consumers.
  static constexpr int kConsumerRegs = 240;
  static constexpr bool kSplit = kSplit_;
  static_assert(!kSplit || kConsumers == 1, "split traits: the 64-row tiles");
  // CTAs per SM the launch bounds ask for (registers: 65536 / (kThreads * kCtasPerSm)).
  // BLOCK_M 64: as many as the pipeline leaves room for (d 64, two stages: 64 x 64 4, 64 x 128 3;
  // d 128, one stage: 3); the split kernels two (kSplit). At two CTAs the 64 x 128 kernel was
  // latency-bound, and more CTAs with a shallower ring ran faster on most rows (measured, with
  // ncu: docs/kernels-hopper.md, "More CTAs per SM").
  // d 256 (64 x 64): one, whole tile or split: its O alone holds 128 registers a thread, and
  // at two CTAs it spilled (docs/kernels-hopper.md, "Head sizes").
  static constexpr int kCtasPerSm =
      kWideProducer || kHeadDim == 256 ? 1
      : kSplit                         ? 2
                                       : (kHeadDim == 64 && kBlockN == 64 ? 4 : 3);
  // The overlapped schedules keep S_i, P_{i-1} and O live at once: 160 registers at 64 x 128
  // d 64. Below that budget (65536 / (160 x 3) = 136, / (160 x 4) = 102) they spill and run
  // slower (docs/kernels-hopper.md, "More CTAs per SM"), so those kernels run the serial
  // schedule, and the other CTAs on the SM fill the tensor cores during a consumer's softmax.
  // At d 256 the 64-row kernel (one CTA per SM) runs serial and split, as the 64-row d 128
  // one does: decode steps, which need the split, are what runs 64-row tiles there.
  static constexpr bool kOverlapFitsRegisters =
      kHeadDim <= 128 && 65536 / (kThreads * kCtasPerSm) >= 160;
  // The schedules built: the overlapped ones where they fit (two consumers, or the registers
  // above), and the chunk-merging split kernels (hopper_split.cuh) for the 64-row tiles that
  // run serial only, where small grids and heavy B1 rows run.
  static constexpr bool kOverlapBuilt = !kSplit && (kConsumers == 2 || kOverlapFitsRegisters);
  static constexpr bool kSplitBuilt = kConsumers == 1 && !kOverlapBuilt;
  static constexpr int kPanels = kHeadDim / 64;
  static constexpr int kRowBytes = 128;      // one panel row: 64 fp16
  static constexpr int kQPanelBytes = kBlockM * kRowBytes;
  static constexpr int kKvPanelBytes = kBlockN * kRowBytes;
  static constexpr int kQBytes = kPanels * kQPanelBytes;
  static constexpr int kKvTileBytes = kPanels * kKvPanelBytes;
  // Pipeline depth: as deep as fits next to Q at kCtasPerSm CTAs per SM (227 KiB per SM,
  // 1 KiB of it reserved per CTA): BLOCK_M 128: 2 stages of K and V at d 128 x BLOCK_N 128
  // (160 KiB), 3 elsewhere; BLOCK_M 64 at d 64: 2 (64 x 64 49 KiB a CTA at four CTAs,
  // 64 x 128 73 KiB at three); at d 128: 1 (65 KiB at three CTAs, where two stages with one
  // Q slot, 81 KiB, would fit only two). With one stage the next block's K still loads
  // during this block's softmax and P V, and the SM's other CTAs hide the rest.
  // The split kernels, at two CTAs per SM: 2 stages at d 128 (twice the whole-tile kernel's
  // bytes in flight per CTA), 4 at 64 x 64 d 64, 2 at 64 x 128 d 64. d 256 (BLOCK_N 64, a
  // K/V stage 64 KiB): 2 stages next to Q (128 rows: 192 KiB; 64 rows: 160 KiB).
  static constexpr int kStages =
      kHeadDim == 256 ? 2
      : kWideProducer ? ((kHeadDim == 128 && kBlockN == 128) ? 2 : 3)
      : kSplit        ? (kHeadDim == 64 && kBlockN == 64 ? 4 : 2)
                      : (kHeadDim == 64 ? 2 : 1);
  // Q slots: two where they fit next to the ring at kCtasPerSm CTAs per SM (227 KiB per SM,
  // 1 KiB of it reserved per CTA), so the producer loads the next work item's Q (and then
  // its first K and V) while the consumers still compute this one, and a CTA's items follow
  // each other without a load's latency between them; one at 64 x 128 d 64, whose three CTAs
  // would need 252 492 of the SM's 233 472 bytes. (The second slot was once a separate O
  // staging tile, which freed Q only for the time of the epilogue.)
  static constexpr int kSmemPerSm = 233472;
  static constexpr int kWorkItemBytes = 48;  // sizeof(HopperWorkItem), checked in HopperSmem
  static constexpr int kBarriersPerQSlot = 2;
  static constexpr int kBitmapWords = kBlockM * kBlockN / 64;
  static constexpr int kWordsPerRow = kBlockN / 64;
  static constexpr int kBitmapBytes = kBitmapWords * 8;  // one part block's element mask
  // `bitmap_bytes`: 0, or kBitmapBytes per stage when the part blocks' bitmaps are staged.
  static constexpr int SmemBytesFor(int q_slots, int bitmap_bytes) {
    return q_slots * kQBytes + 2 * kStages * kKvTileBytes + kStages * bitmap_bytes +
           8 * (kBarriersPerQSlot * q_slots + 4 * kStages) + q_slots * kWorkItemBytes +
           4 * kConsumers + 1024;  // + 1024: the base is aligned up to 1024 bytes in the kernel
  }
  static constexpr bool FitsCtasPerSm(int bytes) {
    return kCtasPerSm * (bytes + 1024) <= kSmemPerSm;
  }
  static constexpr int kQSlots = FitsCtasPerSm(SmemBytesFor(2, 0)) ? 2 : 1;
  // A part block's bitmap comes into shared memory with its V tile (the producer's bulk copy,
  // completing on v_full), so the consumer's mask reads it there right after S = Q K^T
  // instead of waiting for an L2 round trip on every part block. Where kCtasPerSm CTAs would
  // no longer fit (64 x 128 at d 64: 396 bytes short), the mask reads it from global memory.
  static constexpr bool kBitmapsInSmem = FitsCtasPerSm(SmemBytesFor(kQSlots, kBitmapBytes));
  static constexpr int kStagedBitmapBytes = kBitmapsInSmem ? kBitmapBytes : 0;
  static constexpr int kKOffset = kQSlots * kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKvTileBytes;
  static constexpr int kBitmapOffset = kVOffset + kStages * kKvTileBytes;
  static constexpr int kBarrierOffset = kBitmapOffset + kStages * kStagedBitmapBytes;
  static constexpr int kBarriers = kBarriersPerQSlot * kQSlots + 4 * kStages;
  static constexpr int kWorkOffset = kBarrierOffset + 8 * kBarriers;
  static constexpr int kSplitFlagOffset = kWorkOffset + kQSlots * kWorkItemBytes;
  static constexpr size_t kSmemBytes = SmemBytesFor(kQSlots, kStagedBitmapBytes);
  static_assert(kSplitFlagOffset + 4 * kConsumers + 1024 == kSmemBytes, "smem map");
  static_assert(FitsCtasPerSm(kSmemBytes), "kCtasPerSm CTAs fit an SM's shared memory");
  static constexpr int kSAcc = kBlockN / 2;   // fp32 S accumulators per consumer thread
  static constexpr int kOAcc = kHeadDim / 2;  // fp32 O accumulators per consumer thread

  // Roles by warp index (uniform): which warps produce, which consumer warpgroup a warp is in,
  // and the one thread that issues the copies.
  static constexpr bool IsProducerWarp(int warp) {
    return kWideProducer ? warp < 4 : warp == 4;
  }
  static constexpr int ConsumerOf(int warp) {
    return kWideProducer ? warp / 4 - 1 : 0;
  }
  static constexpr int kProducerThread = kWideProducer ? 0 : 128;
};

// Launches one variant on `stream` (cudaStream_t) of the current device `device`; kBf16:
// bf16 operands (the tensor maps must say so), else fp16.
template <int kHeadDim, int kBlockN, int kBlockM, bool kBf16>
engine::Status LaunchHopperAttentionVariant(const HopperAttentionParams& p,
                                            const HopperTensorMaps& maps, int device,
                                            void* stream);

}  // namespace stof::kernels::detail
