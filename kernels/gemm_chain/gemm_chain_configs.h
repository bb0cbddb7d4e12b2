// Internal to kernels/gemm_chain: the table of instantiated mhnk settings, the shared-memory
// layout formula and the warp grid, in one CUDA-free place read by the host side
// (gemm_chain.cpp: checks, supported list, dispatch) and by the kernel traits
// (gemm_chain_kernel.cuh static_asserts that its layout is this formula), plus the parameter
// block the kernel receives and the declaration of the per-setting launchers
// (gemm_chain_kernel.cuh defines them; gemm_chain_a.cu / _b.cu instantiate them).
// Invariants: kGemmChainTiles[i] is instantiated as LaunchGemmChainConfig<i> for every i;
// GemmChainKernelParams is only built by LaunchGemmChain after validation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/activation.h"
#include "engine/core/status.h"
#include "kernels/gemm_chain/gemm_chain.h"

namespace stof::kernels::detail {

// The instantiated set. Why these (MCFuser Table II shapes as (batch, M, N, K, H); "A stays"
// means bk = K, so the k loop has extent 1 and the A tile is loaded once per block instead
// of once per n tile, MCFuser's hoisting of L_A out of the n loop; blocks = grid size):
//  0 64x64x32x64/4w    the struct's default (valid for any n, h >= 64, k >= 32), < 48 KiB.
//  1 64x64x64x128/4w   general: FFN at bh = 128 (GEMM 1 six times at h = 768), G7-G12 with
//                      two k steps.
//  2 64x64x128x128/4w  G7-G12 (K = 128, H = 128): A stays, no recompute; 16-128 blocks.
//  3 32x64x64x64/4w    G1 (K = H = 64: A stays, no recompute, 16 blocks); G2/G3 with bh < h
//                      (GEMM 1 has K = 64 there, so recomputing it is cheap) for 32-64 blocks.
//  4 32x64x64x128/4w   G2 (H = 128) without recompute, G3 at half the recompute.
//  5 32x64x128x128/4w  G7-G9 (M = 512-2048): A stays, twice the blocks of setting 2.
//  6 16x64x64x256/4w   G4-G6 (H = 256, K = 256-1024, M = 512: 32 blocks, no recompute) and
//                      G3; the only setting for m <= 16 (decode-like rows).
//  7 64x64x64x256/8w   G4-G6 with more rows per block; the BERT FFN (K = 768, N = 3072,
//                      H = 768) at bh = 256 (GEMM 1 three times), 64 accumulators per thread.
//  8 128x64x64x128/8w  the BERT FFN at large m (B * L >= 4096): twice the rows per block, so
//                      B and D are read from L2 half as often as at bm = 64.
// bn = 64 everywhere: C's tile in shared memory stays small, and larger bn only lengthens
// the GEMM-2 step; bh is capped at 256 by the E accumulators (bm bh / (32 warps) floats per
// thread: 64 at settings 7 and 8). h > 256 (the FFN) therefore always recomputes GEMM 1.
inline constexpr GemmChainParams kGemmChainTiles[] = {
    {64, 64, 32, 64, 4},  {64, 64, 64, 128, 4}, {64, 64, 128, 128, 4},
    {32, 64, 64, 64, 4},  {32, 64, 64, 128, 4}, {32, 64, 128, 128, 4},
    {16, 64, 64, 256, 4}, {64, 64, 64, 256, 8}, {128, 64, 64, 128, 8},
};
inline constexpr int kGemmChainTileCount =
    static_cast<int>(sizeof(kGemmChainTiles) / sizeof(kGemmChainTiles[0]));

// 16 bytes of padding per shared-memory row: with every tile width a multiple of 16 halves,
// a row is an odd number of 16-byte units, so the 8 row addresses of an ldmatrix fall into
// distinct bank groups (the same choice as the attention kernel's kSmemPadHalves).
inline constexpr int kGemmChainPadHalves = 8;

// Warp grid: warps_m rows of warps (each 32 rows of the tile where bm allows, else 16).
constexpr int GemmChainWarpsM(int bm, int warps) {
  const int by_rows = bm / 32 > 1 ? bm / 32 : 1;
  return by_rows < warps ? by_rows : warps;
}

// Structural validity of a setting (instantiated or not): tiles positive multiples of 16,
// 4 or 8 warps, the warp grid dividing the tiles into 16-row, 16-column warp tiles.
constexpr bool GemmChainParamsWellFormed(const GemmChainParams& p) {
  auto m16 = [](int v) { return v > 0 && v % 16 == 0; };
  if (!m16(p.bm) || !m16(p.bn) || !m16(p.bk) || !m16(p.bh)) return false;
  if (p.warps != 4 && p.warps != 8) return false;
  const int wm = GemmChainWarpsM(p.bm, p.warps);
  const int wn = p.warps / wm;
  return p.warps % wm == 0 && p.bm % (16 * wm) == 0 && p.bn % (16 * wn) == 0 &&
         p.bh % (16 * wn) == 0;
}

// Shared-memory layout in halves (offsets from the start of the dynamic shared memory):
// A stages [2][bm][bk + 8], B stages [2][bk][bn + 8], the C tile [bm][bn + 8], D stages
// [2][bn][bh + 8]. After the main loop the E tile [bm][bh + 8] reuses the start.
struct GemmChainLayout {
  int64_t a_stage, b_stage, c_tile, d_stage;  // halves per stage / tile
  int64_t a_off, b_off, c_off, d_off;         // offsets in halves
  int64_t main_halves, e_halves;
  int64_t bytes;
};

constexpr GemmChainLayout GemmChainLayoutFor(const GemmChainParams& p) {
  constexpr int64_t pad = kGemmChainPadHalves;
  GemmChainLayout l{};
  l.a_stage = int64_t{p.bm} * (p.bk + pad);
  l.b_stage = int64_t{p.bk} * (p.bn + pad);
  l.c_tile = int64_t{p.bm} * (p.bn + pad);
  l.d_stage = int64_t{p.bn} * (p.bh + pad);
  l.a_off = 0;
  l.b_off = l.a_off + 2 * l.a_stage;
  l.c_off = l.b_off + 2 * l.b_stage;
  l.d_off = l.c_off + l.c_tile;
  l.main_halves = l.d_off + 2 * l.d_stage;
  l.e_halves = int64_t{p.bm} * (p.bh + pad);
  l.bytes = 2 * (l.main_halves > l.e_halves ? l.main_halves : l.e_halves);
  return l;
}

// What the kernel receives. Strides are resolved (packed sizes filled in, 0 = shared).
struct GemmChainKernelParams {
  const void* a = nullptr;      // fp16 [batch][m][k]
  const void* b = nullptr;      // fp16 [batch][k][n]
  const void* d = nullptr;      // fp16 [batch][n][h]
  const void* bias1 = nullptr;  // fp16 [n] or null
  const void* bias2 = nullptr;  // fp16 [h] or null
  void* e = nullptr;            // fp16 [batch][m][h]
  int64_t stride_a = 0, stride_b = 0, stride_d = 0, stride_e = 0;
  int m = 0, n = 0, k = 0, h = 0;
  int k_tiles = 0;  // ceil(k / bk)
  int n_tiles = 0;  // ceil(n / bn)
  engine::Activation act = engine::Activation::kNone;
};

// Launches kGemmChainTiles[I] with grid (ceil(m / bm), ceil(h / bh), batch) on `stream`
// (cudaStream_t) of the current device `device`. Defined in gemm_chain_kernel.cuh.
template <int I>
engine::Status LaunchGemmChainConfig(const GemmChainKernelParams& p, int64_t batch, int device,
                                     void* stream);

}  // namespace stof::kernels::detail
