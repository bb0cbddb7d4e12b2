// Internal to kernels/gemm_chain_hopper: the shared-memory map of one CTA of the Hopper GEMM
// chain (per E tile width kH), the parameter block the kernel receives, and the launcher the
// instantiation file (hopper_chain.cu) defines for kH = 64, 128 and 256. Read by the host side
// (hopper_chain.cpp: shared-memory size, dispatch) and by the kernel (hopper_chain_kernel.cuh).
// Invariants: HopperChainKernelParams is only built by LaunchHopperGemmChain after validation;
// offsets are 1024-byte aligned where TMA's 128-byte swizzle writes.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "engine/core/activation.h"
#include "engine/core/status.h"

namespace stof::kernels::detail {

// The largest cluster (kernels/gemm_chain_hopper/hopper_chain.h: kHopperChainMaxCluster): one
// receive slot per rank.
inline constexpr int kHopperChainClusterSlots = 8;

// One CTA: 64 rows of A and E; C in chunks of 64 columns (one panel), the k loop in steps of
// 64 (one panel of A and one of B per ring stage); D's 64 rows of a chunk as kH / 64 panels.
template <int kH>
struct HopperChainTraits {
  static_assert(kH == 64 || kH == 128 || kH == 256, "E tile width");
  static constexpr int kRows = 64, kChunk = 64, kStep = 64;
  static constexpr int kConsumerThreads = 128, kThreads = 160;  // a warpgroup + a producer warp
  static constexpr int kStages = 4;
  // CTAs per SM the registers are capped for: two where their shared memory allows it.
  static constexpr int kMinBlocks = kH <= 128 ? 2 : 1;
  static constexpr int kPanelBytes = 64 * 128;                  // 64 rows x 64 fp16
  static constexpr int kStageBytes = 2 * kPanelBytes;           // A's and B's panel
  static constexpr int kDPanels = kH / 64;
  static constexpr int kDBytes = kDPanels * kPanelBytes;
  static constexpr int kDBuffers = 2;
  static constexpr int kEAcc = kH / 2;                          // fp32 E registers per thread
  // The partial sums of E a CTA receives (fp32): one slot per cluster rank of [64 rows][kH /
  // cluster + kSlotPad columns] (the pad keeps rows 16-byte aligned and spreads banks); they
  // overlay the ring and D once every CTA of the cluster is done with its GEMMs.
  static constexpr int kSlotPad = 4;
  static constexpr int kPartBytes = kRows * (kH + kSlotPad * kHopperChainClusterSlots) * 4;
  static_assert(kRows * (kH + kSlotPad) * 4 <= kPartBytes, "the pulled partial fits too");
  static constexpr int kRingOffset = 0;
  static constexpr int kDOffset = kStages * kStageBytes;
  static constexpr int kGemmBytes = kDOffset + kDBuffers * kDBytes;
  static constexpr int kBarrierOffset = kGemmBytes > kPartBytes ? kGemmBytes : kPartBytes;
  static constexpr int kBarriers = 2 * kStages + 2 * kDBuffers;
  // After the barriers: the flag that tells the consumers their CTA arrived last (splits > 1).
  static constexpr int kSmemBytes = kBarrierOffset + kBarriers * 8 + 16 + 1024;  // + slack
};

// What the kernel receives besides the three tensor maps (A [batch][m][k], B [batch][k][n],
// D [batch][n][h], boxes of 64 x 64). Strides are resolved; *_batched = 0 where every batch
// shares the matrix (the map then has one batch).
// The grid: x = cluster * splits (cluster rank x % cluster, split group x / cluster), y = h_tile
// * row_tiles + row tile, z = batch. A CTA takes the chunks split * cluster + rank + i *
// cluster * splits. With splits > 1 the clusters of one (row tile, E tile) add their reduced
// partial E into `workspace` (fp32 [batch][m][h], zero between launches) and count themselves
// in `arrivals` ([batch][row_tiles][h_tiles]); the last to arrive adds bias2, stores E and
// zeroes both again.
struct HopperChainKernelParams {
  const void* bias1 = nullptr;  // fp16 [n] or null
  const void* bias2 = nullptr;  // fp16 [h] or null
  void* e = nullptr;            // fp16 [batch][m][h]
  int64_t stride_e = 0;         // elements between batches of E
  int m = 0, n = 0, h = 0;
  int k_steps = 0;              // ceil(k / 64)
  int chunks = 0;               // ceil(n / 64)
  int cluster = 1;              // CTAs per cluster
  int splits = 1;               // groups of clusters sharing a tile's chunks (grid.x / cluster)
  int row_tiles = 1;            // ceil(m / 64)
  int h_tiles = 1;              // E tiles of kH columns (h > 256: ceil(h / 256))
  float* workspace = nullptr;   // splits > 1
  int* arrivals = nullptr;      // splits > 1
  int a_batched = 1, b_batched = 1, d_batched = 1;
  int reduce_pull = 0;          // HopperChainParams::reduce: 1 pull, 0 push
  engine::Activation act = engine::Activation::kNone;
};

// Launches the kH variant with grid (cluster * splits, row_tiles * h_tiles, batch) in clusters
// of (cluster, 1, 1) on `stream`. Defined in hopper_chain_kernel.cuh, instantiated in hopper_chain.cu.
template <int kH>
engine::Status LaunchHopperChainVariant(const CUtensorMap& a, const CUtensorMap& b,
                                        const CUtensorMap& d, const HopperChainKernelParams& p,
                                        int64_t batch, void* stream);

}  // namespace stof::kernels::detail
