// Explicit instantiations of the mhnk GEMM-chain kernel, settings 0-4 of kGemmChainTiles
// (gemm_chain_configs.h); settings 5-8 are in gemm_chain_b.cu, so a 2-core build compiles the
// two halves in parallel. The host dispatch (gemm_chain.cpp) calls these through
// LaunchGemmChainConfig<I>.
#include "kernels/gemm_chain/gemm_chain_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchGemmChainConfig<0>(const GemmChainKernelParams&, int64_t, int, void*);
template engine::Status LaunchGemmChainConfig<1>(const GemmChainKernelParams&, int64_t, int, void*);
template engine::Status LaunchGemmChainConfig<2>(const GemmChainKernelParams&, int64_t, int, void*);
template engine::Status LaunchGemmChainConfig<3>(const GemmChainKernelParams&, int64_t, int, void*);
template engine::Status LaunchGemmChainConfig<4>(const GemmChainKernelParams&, int64_t, int, void*);

}  // namespace stof::kernels::detail
