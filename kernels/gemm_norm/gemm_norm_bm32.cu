// Explicit instantiations of the fused GEMM + norm kernel at 32 and 64 rows per block (the
// large-m settings: twice or four times bm 16's MMAs per byte of W read), one per compiled
// (bm, warp width) of gemm_norm_variant.h. Compiled beside gemm_norm_bm16.cu.
#include "kernels/gemm_norm/gemm_norm_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchGemmNormVariant<32, 64>(const GemmNormKernelParams&, size_t, int, int,
                                                      void*);
template engine::Status LaunchGemmNormVariant<32, 96>(const GemmNormKernelParams&, size_t, int, int,
                                                      void*);
template engine::Status LaunchGemmNormVariant<32, 128>(const GemmNormKernelParams&, size_t, int,
                                                       int, void*);
template engine::Status LaunchGemmNormVariant<64, 64>(const GemmNormKernelParams&, size_t, int, int,
                                                      void*);

}  // namespace stof::kernels::detail
