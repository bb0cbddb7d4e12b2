// Explicit instantiations of the fused GEMM + norm kernel at 16 rows per block (the small-m
// settings: more blocks for the same m), one per compiled warp width (gemm_norm_variant.h).
// A file of its own so that a 2-core build compiles it beside gemm_norm_bm32.cu.
#include "kernels/gemm_norm/gemm_norm_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchGemmNormVariant<16, 64>(const GemmNormKernelParams&, size_t, int, int,
                                                      void*);
template engine::Status LaunchGemmNormVariant<16, 96>(const GemmNormKernelParams&, size_t, int, int,
                                                      void*);
template engine::Status LaunchGemmNormVariant<16, 128>(const GemmNormKernelParams&, size_t, int,
                                                       int, void*);

}  // namespace stof::kernels::detail
