// Internal to kernels/attention: the parameter block of the block-wise sparse attention kernel
// and the declaration of its per-variant launcher. block_sparse_attention.cpp (the host
// dispatch) includes only this, so it never instantiates the kernel template itself; the
// variants are instantiated explicitly in block_sparse_attention_d64.cu / _d128.cu (one file
// per head size, so a 2-core build compiles them in parallel) and _d64_rows32.cu (head size
// 64 with 32 query rows per warp).
// Invariants (checked once by LaunchBlockSparseAttention before any launch): pointers are
// device pointers, 16-byte aligned; 16 <= block_m <= 128 is a power of two; warps_per_group =
// block_m / (16 kMTiles); split * warps_per_group <= 8; kMTiles = 2 only with split = 1;
// the layout arrays belong to a BlockLayout of the mask at block_m x kBlockN;
// seq_len <= 32768; block_rows * batch * heads < 2^31.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/status.h"
#include "engine/select/block_sparse_rules.h"

namespace stof::kernels::detail {

struct BlockSparseParams {
  const void* q = nullptr;  // fp16 [B, H, L, d]
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  const int32_t* load_row_ptr = nullptr;   // [block_rows + 1]
  const int32_t* load_col_idx = nullptr;   // [valid blocks]
  const int32_t* load_part_idx = nullptr;  // [valid blocks]: part bitmap index, -1 = full
  const uint64_t* part_bitmaps = nullptr;  // [part blocks * bitmap_words]
  int seq_len = 0;
  int block_m = 0;
  int block_rows = 0;       // ceil(seq_len / block_m)
  int bitmap_words = 0;     // block_m * kBlockN / 64
  int warps_per_group = 0;  // block_m / (16 kMTiles): one warp per 16 kMTiles query rows
  int split = 0;            // warp groups; group g takes valid blocks g, g + split, ...
  float scale_log2 = 0;     // log2(e) / sqrt(d): scores are kept in base-2 units
  int64_t grid_blocks = 0;  // block_rows * batch * heads
  // Operand layouts in elements (engine::MhaStrides; packed [B, H, L, d] when the caller gave
  // none): a head's base is batch * sb + head * sh, its row r at r * ld. k and v share theirs.
  int heads = 1;
  int64_t q_sb = 0, q_sh = 0, kv_sb = 0, kv_sh = 0, o_sb = 0, o_sh = 0;
  int q_ld = 0, kv_ld = 0, o_ld = 0;
};

// Shared memory of one thread block (the Q tile, then the larger of the two K/V stages and the
// split-merge area): engine::BlockSparseSmemBytesFor (engine/select/block_sparse_rules.h), the
// one formula of the host checks; the kernel pads its rows by the same 16 bytes.
constexpr int kSmemPadHalves = engine::kBlockSparseSmemPadHalves;  // ldmatrix rows, distinct banks

// Launches one variant (kMTiles: 16-row m-tiles per warp, 1 or 2) with blockDim =
// 32 * warps_per_group * split threads and `smem_bytes` of dynamic shared memory on `stream`
// (cudaStream_t) on the current device `device`, whose opt-in shared memory per block is
// `smem_optin` bytes. Defined in block_sparse_kernel.cuh.
template <int kHeadDim, int kBlockN, int kMTiles>
engine::Status LaunchBlockSparseVariant(const BlockSparseParams& p, size_t smem_bytes,
                                        int device, int smem_optin, void* stream);

}  // namespace stof::kernels::detail
