// The block configuration shared by the block-wise attention kernels (the portable mma.sync
// family in kernels/attention/ and the Hopper family in kernels/attention_hopper/): BLOCK_M x
// BLOCK_N and the warp count, and the shared-memory limit their host-side checks assume. Here so
// that neither family includes the other's headers. CUDA-free.
#pragma once

#include <cstdint>

namespace stof::kernels {

struct BlockSparseConfig {
  int64_t block_m = 0, block_n = 0, num_warps = 0;
  bool operator==(const BlockSparseConfig&) const = default;
};

// Opt-in shared memory per block of H100 and H200 (227 KiB): the default limit for host-only
// checks; launches use the current device's own limit.
constexpr int64_t kHopperSmemPerBlock = 232448;

}  // namespace stof::kernels
