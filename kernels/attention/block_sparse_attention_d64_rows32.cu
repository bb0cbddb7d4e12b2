// Explicit instantiations of the block-wise sparse attention kernel for head_dim 64 with 32
// query rows per warp (two m-tiles: every K/V fragment read from shared memory feeds two
// MMAs), BLOCK_N 16, 32 and 64. At BLOCK_N 128 or head_dim 128 the S and O accumulators of 32
// rows do not fit in 255 registers, so those have no such variant. Called through
// LaunchBlockSparseAttention (block_sparse_attention.cpp).
#include "kernels/attention/block_sparse_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchBlockSparseVariant<64, 16, 2>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<64, 32, 2>(
    const BlockSparseParams&, size_t, int, int, void*);
template engine::Status LaunchBlockSparseVariant<64, 64, 2>(
    const BlockSparseParams&, size_t, int, int, void*);

}  // namespace stof::kernels::detail
