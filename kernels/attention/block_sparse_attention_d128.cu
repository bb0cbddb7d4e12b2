// Explicit instantiations of the block-wise sparse attention kernel for head_dim 128, 16
// query rows per warp, one per BLOCK_N (BLOCK_M and num_warps are run-time values). Head dim
// 64 lives in its own files so a 2-core build compiles them in parallel. Called through
// LaunchBlockSparseAttention (block_sparse_attention.cpp).
#include "kernels/attention/block_sparse_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchBlockSparseVariant<128, 16, 1>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<128, 32, 1>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<128, 64, 1>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<128, 128, 1>(
    const BlockSparseParams&, size_t, int, int, void*);

}  // namespace stof::kernels::detail
