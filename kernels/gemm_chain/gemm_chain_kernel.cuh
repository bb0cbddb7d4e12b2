// The mhnk GEMM-chain kernel (MCFuser's deep tiling expression m-h-n-k) as a template over
// (bm, bn, bk, bh, warps), and its per-setting launcher. Included only by the instantiation
// files gemm_chain_a.cu / gemm_chain_b.cu; the host side sees gemm_chain_configs.h.
//
// One thread block owns E[m0 : m0 + bm, h0 : h0 + bh] of one batch (grid x = m tile, y = h
// tile, z = batch). In MCFuser's notation the block runs n(k(L_A, L_B, C_C), L_D, C_E) and
// then S_E; when the k loop has extent 1 (k <= bk) L_A is hoisted out of the n loop:
//   for j in n tiles:                       // C_tile and D tile j
//     for kt in k tiles:                    // A[m0, kt] (once per block when k_tiles = 1),
//       C_acc += A_tile B_tile              //   B[kt, j] -> shared memory (cp.async)
//     C = fp16(act(C_acc + bias1[j]))       // registers -> the C tile in shared memory
//     E_acc += C D[j, h0]                   // D[j, h0] -> shared memory, loaded one
//                                           //   iteration ahead (double-buffered)
//   E = fp16(E_acc + bias2[h0])             // staged in shared memory, 16-byte stores
// The (j, kt) pairs form one flat pipeline: iteration i issues the cp.async loads of
// iteration i + 1 (the A/B tiles; with kt = 0 also D tile j + 1) into the other stage, waits
// for its own, computes, and ends on a barrier that releases its stage. One commit group per
// iteration (possibly empty), so wait_group 1 always means "this iteration's data is here".
// Warps: a warps_m x warps_n grid (gemm_chain_configs.h). For GEMM 1 a warp owns kMTiles
// 16-row m-tiles x bn / warps_n columns of C; for GEMM 2 the same rows x bh / warps_n columns
// of E. C goes through shared memory because the two products split columns differently.
// Ragged edges: rows of A past m and chunks past k / n / h are zero-filled by cp.async
// (src-size 0), so padded columns of C are act(0 + 0) = 0 and padded rows of D are 0; rows of
// E past m and columns past h are never stored. bias1 / bias2 reads are guarded likewise.
// Numerics: fp32 accumulation (mma.sync m16n8k16), bias and activation in fp32 on the fp32
// accumulator, C rounded to fp16 once (round to nearest) before GEMM 2, E rounded once.
// Invariants: see gemm_chain_configs.h; the kernel trusts its parameters (validated on the
// host by LaunchGemmChain).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/common/activation.cuh"
#include "kernels/common/mma_sync.cuh"
#include "kernels/cuda_check.h"
#include "kernels/gemm_chain/gemm_chain_configs.h"

namespace stof::kernels::detail {

template <int kBm, int kBn, int kBk, int kBh, int kWarps>
struct GemmChainTraits {
  static constexpr GemmChainParams kParams{kBm, kBn, kBk, kBh, kWarps};
  static_assert(GemmChainParamsWellFormed(kParams),
                "tiles: multiples of 16; warps: 4 or 8; the warp grid must divide the tiles");
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kWarpsM = GemmChainWarpsM(kBm, kWarps);
  static constexpr int kWarpsN = kWarps / kWarpsM;
  static constexpr int kWarpRows = kBm / kWarpsM;
  static constexpr int kMTiles = kWarpRows / 16;     // 16-row m-tiles per warp
  static constexpr int kWarpCCols = kBn / kWarpsN;   // a warp's columns of C
  static constexpr int kWarpECols = kBh / kWarpsN;   // a warp's columns of E
  static constexpr int kCTiles = kWarpCCols / 8;     // 16 x 8 accumulator tiles of C
  static constexpr int kETiles = kWarpECols / 8;     // ... of E
  static_assert(kWarpCCols % 16 == 0 && kWarpECols % 16 == 0,
                "ldmatrix.x4 B fragments cover 16 columns");
  // Accumulators per thread (fp32): E stays for the whole block, C for one n tile. Kept at or
  // below 96 so fragments and addresses fit in 255 registers without spills.
  static_assert(kMTiles * (kCTiles + kETiles) * 4 <= 96, "too many accumulators per thread");

  static constexpr int kPad = kGemmChainPadHalves;
  static constexpr int kStrideA = kBk + kPad;  // halves per shared-memory row
  static constexpr int kStrideB = kBn + kPad;
  static constexpr int kStrideC = kBn + kPad;
  static constexpr int kStrideD = kBh + kPad;
  static constexpr int kStrideE = kBh + kPad;
  static_assert(((kStrideA * 2 / 16) & 1) == 1 && ((kStrideB * 2 / 16) & 1) == 1 &&
                    ((kStrideD * 2 / 16) & 1) == 1,
                "row strides: an odd number of 16-byte units (conflict-free ldmatrix)");
  static constexpr GemmChainLayout kLayout = GemmChainLayoutFor(kParams);
  static_assert(kLayout.a_stage == kBm * kStrideA && kLayout.b_stage == kBk * kStrideB &&
                    kLayout.c_tile == kBm * kStrideC && kLayout.d_stage == kBn * kStrideD &&
                    kLayout.e_halves == kBm * kStrideE,
                "the kernel's layout must be the one GemmChainSharedBytes reports");
  static constexpr int kSmemBytes = static_cast<int>(kLayout.bytes);
  static_assert(kLayout.bytes <= 232448, "beyond the 227 KiB a Hopper block can opt in to");

  // Blocks per SM: as many as shared memory allows (228 KiB per SM on H100/H200, 1 KiB of it
  // reserved per block), lowered until each thread keeps at least 48 registers beyond its
  // accumulators (fragments, addresses, loop state). __launch_bounds__ then caps registers so
  // that they never limit occupancy below what shared memory gives; without the cap nvcc 13
  // keeps every hoisted chunk address live (160-255 registers on the first build).
  static constexpr int kAccumulators = kMTiles * (kCTiles + kETiles) * 4;
  static constexpr int kSmemBlocks = static_cast<int>(233472 / (kLayout.bytes + 1024));
  static constexpr int MinBlocks() {
    int b = kSmemBlocks < 1 ? 1 : kSmemBlocks;
    while (b > 1 && 65536 / (kThreads * b) < kAccumulators + 48) --b;
    return b;
  }
  static constexpr int kMinBlocks = MinBlocks();

};

// Copies a kRows x kCols fp16 tile (row-major, `ld` elements per row in global memory, its
// first element at `src`, which is in bounds) into shared memory rows of kStride halves with
// 16-byte cp.async chunks: thread tid copies column chunk tid % (kCols / 8) of rows
// tid / (kCols / 8) + i * kRowsPerPass. Chunks at or past `rows_left` rows or `cols_left`
// columns are zero-filled (nothing read). Running pointers, not per-pass offsets: nvcc
// otherwise keeps one 64-bit address per pass live through the whole main loop.
template <int kRows, int kCols, int kStride, int kThreads>
__device__ __forceinline__ void LoadTileAsync(__half* dst, const __half* src, int ld,
                                              int rows_left, int cols_left, int tid) {
  constexpr int kColChunks = kCols / 8;
  static_assert(kThreads % kColChunks == 0, "a thread keeps one column chunk in every pass");
  constexpr int kRowsPerPass = kThreads / kColChunks;
  constexpr int kPasses = (kRows + kRowsPerPass - 1) / kRowsPerPass;
  const int r0 = tid / kColChunks;
  const int c0 = (tid % kColChunks) * 8;
  const bool col_ok = c0 < cols_left;
  const __half* const origin = src;
  src += static_cast<int64_t>(r0) * ld + c0;
  dst += r0 * kStride + c0;
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const int r = r0 + i * kRowsPerPass;
    if (kRows % kRowsPerPass == 0 || r < kRows) {
      const bool ok = col_ok && r < rows_left;
      mma::CpAsync16(dst + i * kRowsPerPass * kStride, ok ? src : origin, ok);
    }
    src += static_cast<int64_t>(kRowsPerPass) * ld;
  }
}

// The epilogue of GEMM 1 into the C tile in shared memory: element (j, c) of acc_c[mt] is row
// wrow + 16 mt + g + 8 (c >> 1), column wcol_c + 8 j + 2 t + (c & 1) of the tile (n tile
// starting at column n0); + bias1, the activation, fp16. bias1 past n is 0, so padded columns
// stay act(0) = 0 (and meet zero rows of D anyway).
template <class T>
__device__ __forceinline__ void StoreChainC(const float (&acc_c)[T::kMTiles][T::kCTiles][4],
                                            __half* c_s, const __half* bias1,
                                            const GemmChainKernelParams& p, int n0, int N,
                                            int wrow, int wcol_c, int g, int t) {
#pragma unroll
  for (int j = 0; j < T::kCTiles; ++j) {
    const int col = wcol_c + 8 * j + 2 * t;
    float bias_lo = 0.f, bias_hi = 0.f;
    if (bias1 != nullptr && n0 + col < N) {  // n is a multiple of 16: col + 1 < n too
      bias_lo = __half2float(__ldg(bias1 + n0 + col));
      bias_hi = __half2float(__ldg(bias1 + n0 + col + 1));
    }
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float lo = common::Activate(p.act, acc_c[mt][j][2 * hh] + bias_lo);
        const float hi = common::Activate(p.act, acc_c[mt][j][2 * hh + 1] + bias_hi);
        *reinterpret_cast<uint32_t*>(c_s + (wrow + 16 * mt + g + 8 * hh) * T::kStrideC + col) =
            mma::PackHalf2(lo, hi);
      }
    }
  }
}

// E's accumulators + bias2 as fp16 into the staging tile e_s (same fragment layout as C's).
template <class T>
__device__ __forceinline__ void StageChainE(const float (&acc_e)[T::kMTiles][T::kETiles][4],
                                            __half* e_s, const __half* bias2, int h0, int H,
                                            int wrow, int wcol_e, int g, int t) {
#pragma unroll
  for (int j = 0; j < T::kETiles; ++j) {
    const int col = wcol_e + 8 * j + 2 * t;
    float bias_lo = 0.f, bias_hi = 0.f;
    if (bias2 != nullptr && h0 + col < H) {
      bias_lo = __half2float(__ldg(bias2 + h0 + col));
      bias_hi = __half2float(__ldg(bias2 + h0 + col + 1));
    }
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        *reinterpret_cast<uint32_t*>(e_s + (wrow + 16 * mt + g + 8 * hh) * T::kStrideE + col) =
            mma::PackHalf2(acc_e[mt][j][2 * hh] + bias_lo, acc_e[mt][j][2 * hh + 1] + bias_hi);
      }
    }
  }
}

// The staged E tile to global memory: 16-byte stores of the rows < m and columns < h.
template <class T, int kBm, int kBh>
__device__ __forceinline__ void StoreChainE(__half* E, const __half* e_s, int m0, int h0, int M,
                                            int H, int tid) {
  constexpr int kColChunks = kBh / 8;
  constexpr int kRowsPerPass = T::kThreads / kColChunks;
  static_assert(T::kThreads % kColChunks == 0, "a thread keeps one column chunk");
  const int r0 = tid / kColChunks;
  const int c0 = (tid % kColChunks) * 8;
#pragma unroll
  for (int i = 0; i < (kBm + kRowsPerPass - 1) / kRowsPerPass; ++i) {
    const int r = r0 + i * kRowsPerPass;
    if ((kBm % kRowsPerPass == 0 || r < kBm) && m0 + r < M && h0 + c0 < H) {
      *reinterpret_cast<uint4*>(E + static_cast<int64_t>(m0 + r) * H + h0 + c0) =
          *reinterpret_cast<const uint4*>(e_s + r * T::kStrideE + c0);
    }
  }
}

template <int kBm, int kBn, int kBk, int kBh, int kWarps>
__global__ void __launch_bounds__(GemmChainTraits<kBm, kBn, kBk, kBh, kWarps>::kThreads,
                                  GemmChainTraits<kBm, kBn, kBk, kBh, kWarps>::kMinBlocks)
    GemmChainKernel(const GemmChainKernelParams p) {
  using T = GemmChainTraits<kBm, kBn, kBk, kBh, kWarps>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* const smem = reinterpret_cast<__half*>(smem_raw);
  __half* const a_s = smem + T::kLayout.a_off;
  __half* const b_s = smem + T::kLayout.b_off;
  __half* const c_s = smem + T::kLayout.c_off;
  __half* const d_s = smem + T::kLayout.d_off;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;  // groupID of the mma fragments
  const int t = lane & 3;   // threadID_in_group
  const int wrow = (warp / T::kWarpsN) * T::kWarpRows;   // warp's first row in the tile
  const int wcol_c = (warp % T::kWarpsN) * T::kWarpCCols;  // ... first column of C
  const int wcol_e = (warp % T::kWarpsN) * T::kWarpECols;  // ... first column of E

  const int m0 = static_cast<int>(blockIdx.x) * kBm;
  const int h0 = static_cast<int>(blockIdx.y) * kBh;
  const int64_t batch = blockIdx.z;
  const int M = p.m, N = p.n, K = p.k, H = p.h;
  const __half* const A = static_cast<const __half*>(p.a) + batch * p.stride_a;
  const __half* const B = static_cast<const __half*>(p.b) + batch * p.stride_b;
  const __half* const D = static_cast<const __half*>(p.d) + batch * p.stride_d;
  __half* const E = static_cast<__half*>(p.e) + batch * p.stride_e;
  const __half* const bias1 = static_cast<const __half*>(p.bias1);
  const __half* const bias2 = static_cast<const __half*>(p.bias2);

  // k extent 1: the A tile does not change along n, so it is loaded once (into stage 0).
  const bool a_stays = p.k_tiles == 1;
  const int iters = p.n_tiles * p.k_tiles;

  // ---- cp.async producers (all threads; invalid chunks are zero-filled, the source address
  // stays in bounds) ----
  auto load_a = [&](int kt, int stage) {
    LoadTileAsync<kBm, kBk, T::kStrideA, T::kThreads>(
        a_s + stage * T::kLayout.a_stage, A + static_cast<int64_t>(m0) * K + kt * kBk, K,
        M - m0, K - kt * kBk, tid);
  };
  auto load_b = [&](int j, int kt, int stage) {
    LoadTileAsync<kBk, kBn, T::kStrideB, T::kThreads>(
        b_s + stage * T::kLayout.b_stage, B + static_cast<int64_t>(kt) * kBk * N + j * kBn, N,
        K - kt * kBk, N - j * kBn, tid);
  };
  auto load_d = [&](int j, int buf) {
    LoadTileAsync<kBn, kBh, T::kStrideD, T::kThreads>(
        d_s + buf * T::kLayout.d_stage, D + static_cast<int64_t>(j) * kBn * H + h0, H,
        N - j * kBn, H - h0, tid);
  };
  // The loads of flat iteration `it` = (n tile j, k tile kt), into stage it & 1. D tile j
  // goes with kt = 0: it is needed k_tiles iterations later, at the end of n tile j, and its
  // buffer j & 1 was last read by GEMM 2 of n tile j - 2, which ended before iteration
  // (j - 1, last k tile), the one issuing these loads, began.
  auto issue = [&](int it) {
    const int j = it / p.k_tiles;
    const int kt = it - j * p.k_tiles;
    if (!a_stays || it == 0) load_a(kt, it & 1);
    load_b(j, kt, it & 1);
    if (kt == 0) load_d(j, j & 1);
  };

  float acc_c[T::kMTiles][T::kCTiles][4];
  float acc_e[T::kMTiles][T::kETiles][4];
  mma::ZeroFragments(acc_e);

  issue(0);
  mma::CpAsyncCommit();
  int jn = 0, kt = 0;  // the (n tile, k tile) of iteration it
  for (int it = 0; it < iters; ++it) {
    if (it + 1 < iters) issue(it + 1);  // into the stage released by iteration it - 1
    mma::CpAsyncCommit();
    mma::CpAsyncWait<1>();  // iteration it's group is complete for this thread ...
    __syncthreads();        // ... and for every thread

    if (kt == 0) mma::ZeroFragments(acc_c);

    // GEMM 1: C_acc += A_tile B_tile; each B fragment feeds every m-tile of the warp.
    {
      const __half* const as = a_s + (a_stays ? 0 : (it & 1)) * T::kLayout.a_stage;
      const __half* const bs = b_s + (it & 1) * T::kLayout.b_stage;
      mma::WarpGemmKN<T::kMTiles, T::kCTiles, kBk>(acc_c, as + wrow * T::kStrideA, T::kStrideA,
                                                  bs + wcol_c, T::kStrideB, lane);
    }

    if (kt == p.k_tiles - 1) {
      // Epilogue of GEMM 1 (bias1, activation, fp16) into the C tile.
      const int n0 = jn * kBn;
      StoreChainC<T>(acc_c, c_s, bias1, p, n0, N, wrow, wcol_c, g, t);
      __syncthreads();  // the whole C tile (written by every warp) is visible

      // GEMM 2: E_acc += C D[j]; each D fragment feeds every m-tile of the warp.
      const __half* const ds = d_s + (jn & 1) * T::kLayout.d_stage;
      mma::WarpGemmKN<T::kMTiles, T::kETiles, kBn>(acc_e, c_s + wrow * T::kStrideC, T::kStrideC,
                                                  ds + wcol_e, T::kStrideD, lane);
    }
    __syncthreads();  // every warp is done with stage it & 1 (and C, D) before they refill
    if (++kt == p.k_tiles) {
      kt = 0;
      ++jn;
    }
  }

  // Store E: + bias2, fp16, staged in shared memory (the last barrier of the loop ordered every
  // read of it; no copy is in flight: the last commit group was empty), then 16-byte stores
  // of the rows < m and columns < h.
  __half* const e_s = smem;
  StageChainE<T>(acc_e, e_s, bias2, h0, H, wrow, wcol_e, g, t);
  __syncthreads();
  StoreChainE<T, kBm, kBh>(E, e_s, m0, h0, M, H, tid);
}

template <int I>
engine::Status LaunchGemmChainConfig(const GemmChainKernelParams& p, int64_t batch, int device,
                                     void* stream) {
  constexpr GemmChainParams kP = kGemmChainTiles[I];
  using T = GemmChainTraits<kP.bm, kP.bn, kP.bk, kP.bh, kP.warps>;
  auto* kernel = &GemmChainKernel<kP.bm, kP.bn, kP.bk, kP.bh, kP.warps>;
  // Function attributes belong to a device, so they are set once per device (bit `device` of
  // `configured`): the dynamic shared memory this setting needs (above 48 KiB a kernel must
  // opt in) and the largest shared-memory carveout, so registers and shared memory, not a
  // smaller carveout picked by the driver, decide how many blocks share an SM. Two threads
  // racing here set the same values.
  static std::atomic<uint64_t> configured{0};
  const uint64_t bit = device >= 0 && device < 64 ? uint64_t{1} << device : 0;
  if (bit == 0 || (configured.load(std::memory_order_acquire) & bit) == 0) {
    STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       T::kSmemBytes));
    STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       static_cast<int>(cudaSharedmemCarveoutMaxShared)));
    configured.fetch_or(bit, std::memory_order_release);
  }
  const dim3 grid(static_cast<unsigned>((p.m + kP.bm - 1) / kP.bm),
                  static_cast<unsigned>((p.h + kP.bh - 1) / kP.bh), static_cast<unsigned>(batch));
  kernel<<<grid, T::kThreads, T::kSmemBytes, static_cast<cudaStream_t>(stream)>>>(p);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace stof::kernels::detail
