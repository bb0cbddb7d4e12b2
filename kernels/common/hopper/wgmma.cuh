// wgmma helpers (sm_90a): shared-memory matrix descriptors for the 128-byte swizzle, the
// fence / commit / wait of asynchronous warpgroup MMAs, and m64nNk16 fp16 or bf16 -> fp32 MMAs
// with both operands in shared memory (SS) or A in registers (RS), for N = 64 and 128. Used by
// the Hopper attention kernel (kernels/attention_hopper/): S = Q K^T is SS, O += P V is RS.
//
// Shared-memory layout (PTX ISA, "Shared Memory Matrix Layout"; docs/kernels-hopper.md):
// tiles are stored as panels of 64 fp16 columns (128 bytes per row), rows contiguous, with the
// 128-byte swizzle (16-byte chunk c of row r lives at chunk c ^ (r % 8)) that TMA's
// CU_TENSOR_MAP_SWIZZLE_128B writes; panels start 1024-byte aligned.
// - K-major operand (Q for A, K for B of S = Q K^T): the instruction's 16-wide k slice is 32
//   bytes inside a 128-byte row: start = panel + row0 * 128 + (k % 64) * 2; the stride between
//   8-row groups (SBO) is 1024 bytes; the leading offset is unused for swizzled K-major (1).
// - N-major operand (V for B of O = P V, tnspB = 1): the 16 keys of a k slice are 16 rows:
//   start = panel + key0 * 128; SBO (between 8-key groups) = 1024 bytes; LBO (between
//   64-column panels of N) = the panel size in bytes.
// Register fragments (PTX ISA, "Register Fragments"): warp w of the warpgroup holds rows
// 16 w .. 16 w + 15 of the 64-row tile; with g = lane / 4, t = lane % 4, accumulator
// d[4 j + 0, 1] is (row g, columns 8 j + 2 t, + 1) and d[4 j + 2, 3] the same columns of row
// g + 8; the A fragment of a k slice is a[0] = (g, 2t..), a[1] = (g + 8, 2t..), a[2] =
// (g, 8 + 2t..), a[3] = (g + 8, 8 + 2t..), two fp16 per register, lower column low. So the
// accumulators of S columns 16 k .. 16 k + 15 are exactly the A fragment of P's k-th slice.
// The operand lists are spelled out because inline PTX needs literal operand numbers.
// Users: the Hopper attention kernel and the Hopper GEMM chain (kernels/gemm_chain_hopper/),
// through the warpgroup GEMM steps of warpgroup_gemm.cuh.
#pragma once

#include <cstdint>

namespace stof::kernels::hopper {

// Descriptor of a 128-byte-swizzled shared-memory operand starting at `smem_addr` (a shared
// address, 16-byte aligned; the swizzle pattern's 1024-byte base must be aligned so the base
// offset field stays 0).
__device__ __forceinline__ uint64_t MakeSmemDesc(uint32_t smem_addr, uint32_t lbo_bytes,
                                                 uint32_t sbo_bytes) {
  uint64_t desc = (smem_addr & 0x3FFFFu) >> 4;
  desc |= static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16;
  desc |= static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32;
  desc |= uint64_t{1} << 62;  // swizzle mode 1: 128-byte
  return desc;
}

// Before the first wgmma that reads registers written by ordinary instructions.
__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N committed wgmma groups of this warpgroup are pending.
template <int N>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of `r` across a wgmma issue or wait.
__device__ __forceinline__ void FenceOperand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void FenceOperand(uint32_t& r) {
  asm volatile("" : "+r"(r)::"memory");
}
template <int kN>
__device__ __forceinline__ void FenceOperands(float (&r)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) FenceOperand(r[i]);
}

// m64nNk16, fp16 (kBf16: bf16) inputs, fp32 accumulators d[N / 2] per thread. SS: D = A B
// (accumulate 0) or D += A B, A K-major in shared memory, B K-major (SS<1>: N-major, a B
// stored [K][N] row-major as the GEMM chain's weights) in shared memory. RS: D += A B, A from
// registers, B N-major in shared memory.
template <int kN, bool kBf16 = false>
struct Wgmma;

// One definition per N, spelled out once and stamped for fp16 and bf16 (the PTX type is the
// only difference). STOF_WGMMA_ACC8(i): the read-write operands d[i] .. d[i + 7].
#define STOF_WGMMA_ACC8(i)                                                                  \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define STOF_WGMMA_64(TYPE, BF16)  \
template <>  \
struct Wgmma<64, BF16> {  \
  template <int kTransB = 0>  \
  static __device__ __forceinline__ void SS(float (&d)[32], uint64_t desc_a, uint64_t desc_b,  \
                                            int accumulate) {  \
    asm volatile(  \
        "{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"  \
        " wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE "\n"  \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},\n"  \
        " %32, %33, p, 1, 1, 0, %35;\n}\n"  \
        : STOF_WGMMA_ACC8(0), STOF_WGMMA_ACC8(8), STOF_WGMMA_ACC8(16), STOF_WGMMA_ACC8(24)  \
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransB));  \
  }  \
  static __device__ __forceinline__ void RS(float (&d)[32], const uint32_t (&a)[4],  \
                                            uint64_t desc_b) {  \
    asm volatile(  \
        "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"  \
        " wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE "\n"  \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},\n"  \
        " {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"  \
        : STOF_WGMMA_ACC8(0), STOF_WGMMA_ACC8(8), STOF_WGMMA_ACC8(16), STOF_WGMMA_ACC8(24)  \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));  \
  }  \
}

#define STOF_WGMMA_128(TYPE, BF16)  \
template <>  \
struct Wgmma<128, BF16> {  \
  template <int kTransB = 0>  \
  static __device__ __forceinline__ void SS(float (&d)[64], uint64_t desc_a, uint64_t desc_b,  \
                                            int accumulate) {  \
    asm volatile(  \
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"  \
        " wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE "\n"  \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63},\n"  \
        " %64, %65, p, 1, 1, 0, %67;\n}\n"  \
        : STOF_WGMMA_ACC8(0), STOF_WGMMA_ACC8(8), STOF_WGMMA_ACC8(16), STOF_WGMMA_ACC8(24),  \
          STOF_WGMMA_ACC8(32), STOF_WGMMA_ACC8(40), STOF_WGMMA_ACC8(48), STOF_WGMMA_ACC8(56)  \
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransB));  \
  }  \
  static __device__ __forceinline__ void RS(float (&d)[64], const uint32_t (&a)[4],  \
                                            uint64_t desc_b) {  \
    asm volatile(  \
        "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"  \
        " wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE "\n"  \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63},\n"  \
        " {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"  \
        : STOF_WGMMA_ACC8(0), STOF_WGMMA_ACC8(8), STOF_WGMMA_ACC8(16), STOF_WGMMA_ACC8(24),  \
          STOF_WGMMA_ACC8(32), STOF_WGMMA_ACC8(40), STOF_WGMMA_ACC8(48), STOF_WGMMA_ACC8(56)  \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));  \
  }  \
}

STOF_WGMMA_64("f16", false);
STOF_WGMMA_64("bf16", true);
STOF_WGMMA_128("f16", false);
STOF_WGMMA_128("bf16", true);

#undef STOF_WGMMA_64
#undef STOF_WGMMA_128
#undef STOF_WGMMA_ACC8

}  // namespace stof::kernels::hopper
