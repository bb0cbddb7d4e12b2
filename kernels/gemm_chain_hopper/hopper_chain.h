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

// The widest E a consumer warpgroup holds in registers (64 rows x 256 fp32 columns).
inline constexpr int64_t kHopperChainMaxH = 256;
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
  bool operator==(const HopperChainParams&) const = default;
};

// Ok when the Hopper chain can run `args`: CheckGemmChainArgs's rules and h <= 256; an error
// naming the field otherwise. Does not look at the device.
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

// Validates `args` and `p` against the current device (compute capability 9.0) and enqueues
// the kernel on `stream` (cudaStream_t, null = default). Asynchronous.
engine::Status LaunchHopperGemmChain(const GemmChainArgs& args, const HopperChainParams& p,
                                     void* stream);

}  // namespace stof::kernels
