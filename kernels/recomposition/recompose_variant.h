// Internal to kernels/recomposition: the parameter block of the two SDF GEMM kernels (Q K^T
// with the local-softmax epilogue, P V with the global-scaling prologue), their shared-memory
// sizes (the engine's formulas) and the declaration of the per-(head_dim, T) launchers.
// recomposed_attention.cu (the host side) includes only this; the kernels are instantiated in
// recompose_gemm_d64.cu / _d128.cu (one file per head size, so a 2-core build compiles them in
// parallel).
// Invariants (checked once by RecomposedMha::Create / Launch before any launch): pointers are
// device pointers, q, k, v, o, x 16-byte aligned; block_m is 64 or 128 (one warp per 16 rows);
// the tile arrays describe the valid tiles of the mask's BlockLayout at block_m x kT, in its
// load order; seq_len <= 32768; batch * heads * tiles and batch * heads * block_rows < 2^31.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/status.h"
#include "engine/select/recompose_params.h"

namespace stof::kernels::detail {

struct RecomposeGemmParams {
  const void* q = nullptr;  // fp16 [B, H, L, d]
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  void* x = nullptr;        // fp16 x' tiles: [B*H][tiles][block_m][kT]
  void* stats = nullptr;    // float2 (m' base 2, d'): [B*H][tiles][block_m]
  const float* r = nullptr; // r': [B*H][tiles][block_m]
  const uint64_t* mask = nullptr;        // [L][words_per_row]
  const int32_t* tile_row = nullptr;     // [tiles]: block row of each valid tile
  const int32_t* load_row_ptr = nullptr; // [block_rows + 1]
  const int32_t* load_col_idx = nullptr; // [tiles]: block column of each valid tile
  const int32_t* load_part_idx = nullptr;// [tiles]: -1 for a full tile
  int seq_len = 0;
  int words_per_row = 0;
  int block_m = 0;
  int block_rows = 0;       // ceil(seq_len / block_m)
  int tiles = 0;            // valid tiles per head
  float scale_log2 = 0;     // log2(e) / sqrt(d)
  int64_t heads = 0;        // batch * heads of this launch
};

// The two kernels' shared memory and row padding: engine/select/recompose_params.h, the one
// formula of the host checks (CheckRecomposeParams) and of the launches.
using engine::kRecomposeSmemPad;
using engine::RecomposePvSmemBytes;
using engine::RecomposeQkSmemBytes;

// Launch the Q K^T + LS kernel (grid heads * tiles, block_m * 2 threads) and the GS + P V
// kernel (grid heads * block_rows) on `stream` (cudaStream_t) on the current device `device`,
// whose opt-in shared memory per block is `smem_optin`. Defined in recompose_gemm_kernels.cuh.
template <int kHeadDim, int kT>
engine::Status LaunchRecomposeQk(const RecomposeGemmParams& p, int device, int smem_optin,
                                 void* stream);
template <int kHeadDim, int kT>
engine::Status LaunchRecomposePv(const RecomposeGemmParams& p, int device, int smem_optin,
                                 void* stream);

}  // namespace stof::kernels::detail
