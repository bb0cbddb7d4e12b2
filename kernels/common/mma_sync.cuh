// Warp-level tensor-core and async-copy helpers (inline PTX: mma.sync, ldmatrix, cp.async)
// shared by every mma.sync kernel family (block-wise and row-wise attention, gemm_chain,
// gemm_norm, softmax recomposition) and the MMA self-test (attention/mma_self_test.cu), so the
// fragment code the test checks is exactly the code the kernels run. Device-only; included by
// .cu files of kernels/. The Hopper families use kernels/common/hopper/ instead.
// Invariants: every helper taking a shared-memory tile expects 16-byte aligned rows (the row
// stride in halves is a multiple of 8) and must be executed by all 32 lanes of the warp with
// the same arguments apart from the lane-dependent parts computed inside.
//
// Fragment layouts of mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 (PTX ISA, "Matrix
// Fragments for mma.m16n8k16 with floating point type"), with g = lane >> 2 (groupID) and
// t = lane & 3 (threadID_in_group). A register holding two fp16 keeps the lower column (or
// lower k) in its low 16 bits.
//   A (16 x 16, row-major), 4 x .f16x2:
//     a[0] = A[g][2t, 2t+1]     a[1] = A[g+8][2t, 2t+1]
//     a[2] = A[g][2t+8, 2t+9]   a[3] = A[g+8][2t+8, 2t+9]
//   B (16 x 8, "col": consecutive k in a register), 2 x .f16x2:
//     b[0] = B[2t, 2t+1][g]     b[1] = B[2t+8, 2t+9][g]
//   C/D (16 x 8, fp32), 4 x .f32:
//     c[0], c[1] = C[g][2t, 2t+1]   c[2], c[3] = C[g+8][2t, 2t+1]
// ldmatrix.sync.aligned.m8n8.x4.shared.b16: lanes 8i..8i+7 give the addresses of rows 0..7 of
// 8 x 8 matrix i (16 contiguous bytes each); register i of lane l then holds row l >> 2,
// columns 2(l & 3), 2(l & 3) + 1 of matrix i. With .trans it holds the transposed element
// pair instead: rows 2(l & 3), 2(l & 3) + 1 of column l >> 2.
// From these:
//   - A from a row-major tile: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7,
//     k 8-15), (rows 8-15, k 8-15) give a[0..3] directly.
//   - B = X^T where X is stored row-major as [n][k] (the K tile, for S = Q K^T): the matrix of
//     rows n0..n0+7, k0..k0+7 gives lane l the pair X[n0 + g][k0 + 2t, +1], which is
//     B[k0 + 2t, +1][n0 + g] = b[0] of n-tile n0; no transpose needed.
//   - B stored row-major as [k][n] (the V tile, for O = P V): with .trans, the matrix of rows
//     k0..k0+7, columns n0..n0+7 gives lane l the pair B[k0 + 2t, +1][n0 + g] = b[0].
//   - The C layout of two adjacent n-tiles equals the A layout of one 16-wide k-step
//     (C tile j covers columns 8j + 2t, +1 of rows g and g + 8), so S = Q K^T accumulators
//     become the A operand of P V without going through shared memory (AccumToA).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/fragment_math.cuh"

namespace stof::kernels::mma {

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy that bypasses L1 (cp.async.cg). When `valid` is false the 16
// bytes are zero-filled and nothing is read (src-size 0); callers still pass an in-bounds
// address so no out-of-range pointer is ever formed.
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SmemAddr(smem)), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// The "memory" clobber keeps the compiler from moving these reads across __syncthreads():
// the address is only a register operand, so it cannot see the dependency otherwise.
__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddr(smem_row))
               : "memory");
}
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddr(smem_row))
               : "memory");
}

// d += A * B for one 16 x 8 x 16 product (fp16 inputs, fp32 accumulators).
__device__ __forceinline__ void Mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// A fragment of the 16 x 16 tile at `tile` (row-major, `stride` halves per row).
// Lane l addresses row (l & 7) + 8 * ((l >> 3) & 1), column 8 * (l >> 4): matrices 0..3 are
// (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
__device__ __forceinline__ void LoadA(uint32_t (&a)[4], const __half* tile, int stride, int lane) {
  const int row = (lane & 7) + (((lane >> 3) & 1) << 3);
  const int col = (lane >> 4) << 3;
  LdMatrixX4(a, tile + row * stride + col);
}

// B fragments of two n-tiles from X stored row-major [n][k] (B = X^T), X's 16 x 16 block at
// `tile`: b[0], b[1] for n-tile rows 0-7 of X, b[2], b[3] for rows 8-15.
// Lane l addresses row (l & 7) + 8 * (l >> 4), column 8 * ((l >> 3) & 1): matrices 0..3 are
// (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
__device__ __forceinline__ void LoadBFromNK(uint32_t (&b)[4], const __half* tile, int stride,
                                            int lane) {
  const int row = (lane & 7) + ((lane >> 4) << 3);
  const int col = ((lane >> 3) & 1) << 3;
  LdMatrixX4(b, tile + row * stride + col);
}

// B fragments of two n-tiles from B stored row-major [k][n], its 16 x 16 block at `tile`:
// b[0], b[1] for columns 0-7, b[2], b[3] for columns 8-15 (ldmatrix .trans).
// Lane l addresses row (l & 7) + 8 * ((l >> 3) & 1), column 8 * (l >> 4): matrices 0..3 are
// (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
__device__ __forceinline__ void LoadBFromKN(uint32_t (&b)[4], const __half* tile, int stride,
                                            int lane) {
  const int row = (lane & 7) + (((lane >> 3) & 1) << 3);
  const int col = (lane >> 4) << 3;
  LdMatrixX4Trans(b, tile + row * stride + col);
}

// The fragment scalars (fragment_math.cuh), under the names these kernels use.
using common::FastExp2;
using common::PackHalf2;
using common::QuadSum;

// acc[mt][2 jj] and acc[mt][2 jj + 1] += a[mt] x the two n-tiles in `b`, for every m-tile:
// one B fragment feeds kMTiles MMAs. The inner step of the warp GEMMs of every mma.sync family.
template <int kMTiles, int kNTiles>
__device__ __forceinline__ void MmaNPair(float (&acc)[kMTiles][kNTiles][4],
                                         const uint32_t (&a)[kMTiles][4], const uint32_t (&b)[4],
                                         int jj) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    Mma16816(acc[mt][2 * jj], a[mt], b[0], b[1]);
    Mma16816(acc[mt][2 * jj + 1], a[mt], b[2], b[3]);
  }
}

// A warp's acc += A x B over kK, both in shared memory: A row-major, its 16 kMTiles rows from
// `a` (the warp's first row), B row-major [k][n], its 8 kNTiles columns from `b` (the warp's
// first column). Each A fragment feeds kNTiles MMAs, each B fragment kMTiles.
template <int kMTiles, int kNTiles, int kK>
__device__ __forceinline__ void WarpGemmKN(float (&acc)[kMTiles][kNTiles][4], const __half* a,
                                           int stride_a, const __half* b, int stride_b,
                                           int lane) {
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint32_t af[kMTiles][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
      LoadA(af[mt], a + 16 * mt * stride_a + 16 * kk, stride_a, lane);
#pragma unroll
    for (int jj = 0; jj < kNTiles / 2; ++jj) {
      uint32_t bf[4];
      LoadBFromKN(bf, b + 16 * kk * stride_b + 16 * jj, stride_b, lane);
      MmaNPair(acc, af, bf, jj);
    }
  }
}

// The accumulators of n-tiles 2k and 2k + 1 (columns 16k .. 16k + 15) as the A fragment of
// k-step k: a[0] = row g, cols 2t, 2t+1 (tile 2k, c[0..1]); a[1] = row g + 8 (tile 2k,
// c[2..3]); a[2], a[3] = the same rows of tile 2k + 1 (cols 8 + 2t, 8 + 2t + 1).
__device__ __forceinline__ void AccumToA(uint32_t (&a)[4], const float (&c_lo)[4],
                                         const float (&c_hi)[4]) {
  a[0] = PackHalf2(c_lo[0], c_lo[1]);
  a[1] = PackHalf2(c_lo[2], c_lo[3]);
  a[2] = PackHalf2(c_hi[0], c_hi[1]);
  a[3] = PackHalf2(c_hi[2], c_hi[3]);
}

// Zeroes a warp's m16n8 accumulator fragments: kMTiles x kTiles of them, or one row of kTiles.
template <int kMTiles, int kTiles>
__device__ __forceinline__ void ZeroFragments(float (&acc)[kMTiles][kTiles][4]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int j = 0; j < kTiles; ++j)
      acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = 0.f;
  }
}
template <int kTiles>
__device__ __forceinline__ void ZeroFragments(float (&acc)[kTiles][4]) {
#pragma unroll
  for (int j = 0; j < kTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
}

}  // namespace stof::kernels::mma
