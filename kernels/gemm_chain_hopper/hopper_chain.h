// The Hopper GEMM chain (sm_90a): MCFuser's C = act(A B + bias1), E = C D + bias2 (and the FFN
// form E = act(A W1 + b1) W2 + b2) as one kernel built from the Hopper parts (TMA loads into a
// ring, wgmma, a producer warp and a consumer warpgroup) with the intermediate C split over
// the CTAs of a thread-block cluster: each CTA computes its 64-column chunks of C for a
// 64-row tile, multiplies them into a partial E in registers, and the cluster's CTAs reduce
// their partial E through distributed shared memory, each storing a slice of E's columns.
// C never leaves the SM; more CTAs work on a small chain than row tiles alone would give.
// Design and measurements: docs/kernels-gemm-chain.md ("The Hopper chain").
//
// CUDA-free header (device buffers are void*, streams opaque). Users: CudaBackend::RunGemmChain
// (params "cluster"), `stof bench chain`, the GPU tests (tests/gpu/hopper_chain_test.cpp).
// Invariants: LaunchHopperGemmChain validates everything (CheckGemmChainArgs's rules, the
// limits below, the device) before it touches the GPU.
#pragma once

#include <vector>

#include "engine/core/status.h"
#include "kernels/gemm_chain/gemm_chain.h"

namespace stof::kernels {

// The widest E tile a consumer warpgroup holds in registers (64 rows x 256 fp32 columns); a
// wider E (an FFN's hidden size) runs as several E tiles, each recomputing its chunks of C.
inline constexpr int64_t kHopperChainMaxTileH = 256;
// The cluster sizes the kernel takes: powers of two up to the portable cluster limit.
inline constexpr int kHopperChainMaxCluster = 8;

// How the CTAs of a cluster sum their partial E (kernels/gemm_chain_hopper/
// hopper_chain_kernel.cuh, ReduceE): each pushes its partial into the owners' shared memory
// (remote stores), or each pulls its columns from every peer (remote loads).
enum class HopperChainReduce { kPush = 0, kPull = 1 };

struct HopperChainParams {
  // CTAs of a cluster sharing one 64-row tile's chunks of C: 1, 2, 4 or 8, at most the
  // number of 64-column chunks of N; 0 = HopperChainClusterFor.
  int cluster = 0;
  HopperChainReduce reduce = HopperChainReduce::kPull;
  // Groups of clusters that share a tile's chunks (cluster * splits <= chunks), their reduced
  // partial E summed in `workspace`; 0 = ResolveHopperChain's default (more than one only
  // where the row tiles and clusters leave most SMs idle: an FFN over few tokens), which
  // LaunchHopperGemmChain takes only when a workspace is given (else one group).
  int splits = 0;
  // With more than one split group: HopperChainLaunch::workspace_bytes of device memory,
  // 16-byte aligned, zero-filled before its first use (every launch leaves it zero again);
  // one launch at a time may use it.
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;
  bool operator==(const HopperChainParams&) const = default;
};

// How a launch runs: the cluster and split groups (resolved from the params), the E tiles of
// 256 columns past h 256, the row tiles of 64, and the workspace it needs (0 with one group).
struct HopperChainLaunch {
  int cluster = 1, splits = 1, h_tiles = 1, row_tiles = 1;
  int64_t workspace_bytes = 0;
};

// Ok when the Hopper chain can run `args`: CheckGemmChainArgs's rules and the grid's limits;
// an error naming the field otherwise. Does not look at the device.
engine::Status CheckHopperChainArgs(const GemmChainArgs& args);

// The cluster sizes that run `args` (1, 2, 4, 8 up to the number of 64-column chunks of N);
// empty when its shape does not run (the buffers are not looked at).
std::vector<int> HopperChainClusters(const GemmChainArgs& args);

// The default cluster for `args` on a GPU of `sms` multiprocessors: the smallest size in
// HopperChainClusters, from 2 up where there are two chunks, whose grid (row tiles x batch x
// cluster) reaches 0.45 sms CTAs, else the largest; 0 when none runs. Why: on G1-G12 (H200,
// docs/kernels-gemm-chain.md) the fastest cluster gave about one CTA per two SMs, a larger one
// paid more in the reduction than it saved in each CTA's chain of chunks, and halving each
// CTA's chunks (cluster 2) paid even where the row tiles alone filled the GPU.
int HopperChainClusterFor(const GemmChainArgs& args, int sms);

// The launch of `args` with `p` on a GPU of `sms` multiprocessors; an error naming the field
// for a cluster or split count that does not run the shape. The buffers are not looked at.
engine::Expected<HopperChainLaunch> ResolveHopperChain(const GemmChainArgs& args,
                                                       const HopperChainParams& p, int sms);

// The settings a tuner measures for `args` on a GPU of `sms` multiprocessors: every cluster of
// HopperChainClusters with its default split groups, and with one group where the default is
// more; the default cluster's first (as ResolveHopperChain resolves them, never 0; pull
// reduction). Empty when the shape does not run. CudaBackend::GemmChainParamChoices offers
// them on sm_90 as {"cluster", "splits"}.
std::vector<HopperChainParams> HopperChainParamChoices(const GemmChainArgs& args, int sms);

// Validates `args` and `p` against the current device (compute capability 9.0) and enqueues
// the kernel on `stream` (cudaStream_t, null = default). Asynchronous.
engine::Status LaunchHopperGemmChain(const GemmChainArgs& args, const HopperChainParams& p,
                                     void* stream);

}  // namespace stof::kernels
