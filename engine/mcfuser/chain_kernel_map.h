// Which MCFuser candidates the project's fused GEMM-chain kernel (kernels/gemm_chain/) runs.
// That kernel executes exactly the deep expression mhnk: a grid over (m tile, h tile, batch),
// a sequential n loop per block, GEMM1's k loop innermost, E accumulated across n and stored
// once, C recomputed for every h tile (H / bh times when bh < H). In MCFuser's notation its
// program is "bmh(n(k(L_A, L_B, C_C), L_D, C_E), S_E)" (chain_program.h).
// A candidate is runnable when its program, after grid binding, dead-loop removal and
// hoisting, is that program for the same shape and tiles: all twelve deep orders with n
// before k (mnkh, hmnk, ...), any expression once the loops that distinguish it have extent
// 1 (mhkn with bk >= K or bn >= N; mn(k,h) with bh >= H). The kernel's own parameter check
// (supported tile sizes, warps, shared memory) still applies on top of this.
// Used by the tuner (to measure only what the kernel can run) and the studio.
#pragma once

#include "engine/mcfuser/candidate.h"
#include "engine/mcfuser/tiling_expr.h"

namespace stof::engine {

// The expression the kernel implements: mhnk.
TilingExpr ChainKernelExpr();
// False for an invalid candidate.
bool RunnableByChainKernel(const Candidate& c);

}  // namespace stof::engine
