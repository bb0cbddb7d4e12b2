// Explicit instantiations of the block-wise sparse attention kernel for head_dim 64 with 16
// query rows per warp, one per BLOCK_N (BLOCK_M and num_warps are run-time values). 32 rows
// per warp live in block_sparse_attention_d64_rows32.cu and head_dim 128 in _d128.cu, so a
// 2-core build compiles them in parallel. Called through LaunchBlockSparseAttention
// (block_sparse_attention.cpp).
#include "kernels/attention/block_sparse_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchBlockSparseVariant<64, 16, 1>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<64, 32, 1>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<64, 64, 1>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<64, 128, 1>(
    const BlockSparseParams&, size_t, int, int, void*);

}  // namespace stof::kernels::detail
