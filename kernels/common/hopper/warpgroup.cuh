// Warpgroup helpers (sm_90a): register reallocation between the producer and consumer roles
// (setmaxnreg), named barriers among a subset of warps, and one elected lane. Used by the
// warp-specialized Hopper attention kernel (kernels/attention_hopper/).
// Invariants: setmaxnreg takes effect only when the kernel has a register cap at entry
// (__launch_bounds__(threads, 1)) and every warp of a warpgroup executes the same call; the
// counts are multiples of 8 in [24, 256].
#pragma once

#include <cstdint>

namespace stof::kernels::hopper {

constexpr int kWarpgroupThreads = 128;

template <int kRegs>
__device__ __forceinline__ void SetMaxRegsDec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void SetMaxRegsInc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// bar.sync on hardware barrier `id` (1..15; 0 is __syncthreads) for `threads` threads.
__device__ __forceinline__ void NamedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// bar.arrive: counts this warp's threads on barrier `id` without waiting.
__device__ __forceinline__ void NamedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The warp index as a value the compiler knows is uniform across the warp.
__device__ __forceinline__ int WarpIndexUniform() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0);
}

}  // namespace stof::kernels::hopper
