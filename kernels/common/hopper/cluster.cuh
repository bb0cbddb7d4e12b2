// Thread-block cluster helpers (inline PTX, sm_90): the CTA's rank in its cluster, the
// cluster-wide barrier, and reads and writes of another CTA's shared memory (distributed
// shared memory: `mapa` turns a local shared address into the same offset in CTA `rank`'s
// window). Used by the Hopper GEMM chain (kernels/gemm_chain_hopper/), whose CTAs of a
// cluster each hold a partial sum of the output tile and reduce them through DSMEM.
// Invariants: every thread of every CTA of the cluster executes each ClusterSync (the
// barrier is .aligned: whole warps, the same call site); a CTA's shared memory may be read by
// its peers only between two cluster barriers, and no CTA exits before the peers that read it
// have passed the second.
#pragma once

#include <cstdint>

namespace stof::kernels::hopper {

__device__ __forceinline__ uint32_t ClusterCtaRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Arrive (release: this thread's earlier shared-memory writes become visible to the cluster)
// and wait (acquire) on the cluster barrier.
__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// The shared::cluster address of local shared address `smem_addr` in CTA `rank`'s window.
__device__ __forceinline__ uint32_t MapSharedRank(uint32_t smem_addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(smem_addr), "r"(rank));
  return r;
}

// Four fp32 at a shared::cluster address (16-byte aligned), local or a peer's.
__device__ __forceinline__ float4 LoadSharedCluster4(uint32_t cluster_addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(cluster_addr)
               : "memory");
  return v;
}

// Four fp32 to a shared::cluster address (16-byte aligned), local or a peer's; the store does
// not wait for the peer (a later cluster barrier's release orders it before the peer reads).
__device__ __forceinline__ void StoreSharedCluster4(uint32_t cluster_addr, float4 v) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(cluster_addr),
               "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}

}  // namespace stof::kernels::hopper
