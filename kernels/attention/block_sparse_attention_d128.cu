// Explicit instantiations of the block-wise sparse attention kernel for head_dim 128, one per
// BLOCK_N (BLOCK_M and num_warps are run-time values). The other head size lives in its own
// file so a 2-core build compiles the two in parallel. Called through
// LaunchBlockSparseAttention (block_sparse_attention.cpp).
#include "kernels/attention/block_sparse_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchBlockSparseVariant<128, 16>(const BlockSparseParams&, size_t, void*);
template engine::Status LaunchBlockSparseVariant<128, 32>(const BlockSparseParams&, size_t, void*);
template engine::Status LaunchBlockSparseVariant<128, 64>(const BlockSparseParams&, size_t, void*);
template engine::Status LaunchBlockSparseVariant<128, 128>(const BlockSparseParams&, size_t, void*);

}  // namespace stof::kernels::detail
