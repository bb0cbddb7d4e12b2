// mbarrier helpers (inline PTX, sm_90): the completion objects of the TMA load pipeline. A
// barrier in shared memory counts arrivals and, for TMA, transaction bytes; a phase completes
// when both reach zero, and waiters test the phase's parity. Used by the Hopper attention
// kernel's load pipeline (kernels/attention_hopper/) and the Hopper GEMM chain's
// (kernels/gemm_chain_hopper/).
// Invariants: barriers are 8-byte aligned shared-memory words, initialised by one thread and
// followed by FenceBarrierInit() and a CTA barrier before anyone uses them.
#pragma once

#include <cstdint>

namespace stof::kernels::hopper {

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void BarrierInit(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddr(bar)), "r"(arrivals)
               : "memory");
}

// Makes the initialisations visible to the async proxy (TMA) as well.
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of TMA transactions for the current phase.
__device__ __forceinline__ void BarrierArriveExpectTx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SmemAddr(bar)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void BarrierArrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(SmemAddr(bar)) : "memory");
}

// Blocks until the phase with parity `parity` has completed. try_wait suspends the thread for
// a hardware-chosen time before it returns false, so the loop does not spin hot.
__device__ __forceinline__ void BarrierWait(uint64_t* bar, uint32_t parity) {
  const uint32_t addr = SmemAddr(bar);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
}

// A position in a ring of kSlots stages whose i-th use has parity (i / kSlots) & 1 on the
// stage's barriers. Stepped once per use (a compare and a select), not recomputed from a use
// count: a division by the stage count on every step's path to its barrier wait costs.
struct RingPos {
  int stage = 0;
  uint32_t phase = 0;
  template <int kSlots>
  __device__ __forceinline__ void Next() {
    if (++stage == kSlots) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

}  // namespace stof::kernels::hopper
