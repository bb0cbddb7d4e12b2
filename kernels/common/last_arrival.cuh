// The "last to arrive" count of a group of threads whose CTAs share work through global memory:
// each group leaves its part (partial sums, partial outputs) in global memory, counts itself
// on a counter, and the group that arrives last reads every part and finishes the work. Used
// by the attention kernel's chunk merge (kernels/attention_hopper/hopper_split.cuh) and the
// Hopper GEMM chain's split groups (kernels/gemm_chain_hopper/hopper_chain_kernel.cuh).
// Device-only.
//
// Ordering without a sequentially consistent fence (__threadfence, fence.sc.gpu): the group's
// named barrier orders every thread's earlier global writes before its thread 0's atomic, which
// is a release at GPU scope (cumulative over what the barrier ordered); the atomic is an
// acquire too, and the second barrier orders it before every thread's later reads, so the last
// group sees every other group's parts (the semaphore pattern). Measured against the fence
// pattern: docs/benchmarks.md, "Decode, session 21".
#pragma once

#include "kernels/common/hopper/warpgroup.cuh"

namespace stof::kernels::common {

// Adds 1 to `counter` with acquire-release semantics at GPU scope; returns the value before.
__device__ __forceinline__ int AtomicAddAcqRelGpu(int* counter, int value) {
  int prior;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n"
               : "=r"(prior)
               : "l"(counter), "r"(value)
               : "memory");
  return prior;
}

// Counts the calling group (`threads` threads meeting at named barrier `barrier_id`; `thread`
// its index in the group) as one of `expected` arrivals on `counter`, and returns true in every
// thread of the group that arrived last, which also sets the counter back to 0 for the next
// launch. `flag` is a shared int of the group's, for thread 0 to hand its answer over.
__device__ __forceinline__ bool ArriveLast(int* counter, int expected, int thread,
                                           int barrier_id, int threads, volatile int* flag) {
  hopper::NamedBarrierSync(barrier_id, threads);
  if (thread == 0) {
    const bool last = AtomicAddAcqRelGpu(counter, 1) == expected - 1;
    if (last) atomicExch(counter, 0);
    *flag = last ? 1 : 0;
  }
  hopper::NamedBarrierSync(barrier_id, threads);
  return *flag != 0;
}

}  // namespace stof::kernels::common
