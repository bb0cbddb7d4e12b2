// TMA (cp.async.bulk.tensor, sm_90) helpers: 3-D, 4-D and 5-D tiled loads into shared memory
// completing on an mbarrier, plain (1-D) bulk loads likewise, 5-D tiled stores from shared
// memory, and the bulk-group fences. The tensor maps
// are built on the host (tensor_map.h) and passed as __grid_constant__ kernel parameters; the
// device takes their generic address. Used by the Hopper attention kernel's producer warp and
// epilogue (kernels/attention_hopper/) and the Hopper GEMM chain's producer (3-D: [batch][rows]
// [columns] matrices).
// Invariants: shared-memory boxes are 128-byte aligned (1024 for the 128-byte swizzle, so the
// pattern lines up with wgmma's descriptors); a load's bytes are announced on its barrier
// (BarrierArriveExpectTx) by the same phase; rows outside the tensor are zero-filled on loads
// and skipped on stores by the copy engine.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/common/hopper/mbarrier.cuh"

namespace stof::kernels::hopper {

__device__ __forceinline__ void PrefetchTensorMap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Box at coordinates (c0 innermost .. c2) of a 3-D `map` into `smem`; completes on `bar`.
__device__ __forceinline__ void TmaLoad3d(void* smem, const CUtensorMap* map, uint64_t* bar,
                                          int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(SmemAddr(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(SmemAddr(bar))
      : "memory");
}

// Box at coordinates (c0 innermost .. c3) of `map` into `smem`; completes on `bar`.
__device__ __forceinline__ void TmaLoad4d(void* smem, const CUtensorMap* map, uint64_t* bar,
                                          int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(SmemAddr(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
      "r"(SmemAddr(bar))
      : "memory");
}

// The same for a 5-D map (coordinates c0 innermost .. c4).
__device__ __forceinline__ void TmaLoad5d(void* smem, const CUtensorMap* map, uint64_t* bar,
                                          int c0, int c1, int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(SmemAddr(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
      "r"(SmemAddr(bar))
      : "memory");
}

// `bytes` of global memory at `src` into `smem` (both 16-byte aligned, `bytes` a multiple of
// 16) by the copy engine; completes on `bar`, whose phase must have announced the bytes.
__device__ __forceinline__ void BulkLoad(void* smem, const void* src, uint32_t bytes,
                                         uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(SmemAddr(smem)), "l"(static_cast<uint64_t>(__cvta_generic_to_global(src))),
      "r"(bytes), "r"(SmemAddr(bar))
      : "memory");
}

// Box of `smem` to coordinates (c0 .. c4) of `map`; elements outside the tensor are not
// written.
__device__ __forceinline__ void TmaStore5d(const CUtensorMap* map, const void* smem, int c0,
                                           int c1, int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group"
      " [%0, {%1, %2, %3, %4, %5}], [%6];\n"
      ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
      "r"(SmemAddr(smem))
      : "memory");
}
__device__ __forceinline__ void TmaStoreCommit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Waits until the committed stores have read their shared memory (it may then be reused or
// the CTA may exit).
__device__ __forceinline__ void TmaStoreWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// Orders this thread's ordinary shared-memory writes before later async-proxy (TMA, wgmma)
// reads of the same memory; each writing thread fences, then the threads synchronise.
__device__ __forceinline__ void FenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace stof::kernels::hopper
