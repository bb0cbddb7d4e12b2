// Explicit instantiations of the mhnk GEMM-chain kernel, settings 5-8 of kGemmChainTiles
// (gemm_chain_configs.h); settings 0-4 are in gemm_chain_a.cu. A new setting in the table
// needs a line here (the host dispatch fails to link otherwise).
#include "kernels/gemm_chain/gemm_chain_kernel.cuh"

namespace stof::kernels::detail {

static_assert(kGemmChainTileCount == 9, "instantiate every setting of kGemmChainTiles");
template engine::Status LaunchGemmChainConfig<5>(const GemmChainKernelParams&, int64_t, int, void*);
template engine::Status LaunchGemmChainConfig<6>(const GemmChainKernelParams&, int64_t, int, void*);
template engine::Status LaunchGemmChainConfig<7>(const GemmChainKernelParams&, int64_t, int, void*);
template engine::Status LaunchGemmChainConfig<8>(const GemmChainKernelParams&, int64_t, int, void*);

}  // namespace stof::kernels::detail
