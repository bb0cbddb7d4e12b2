// Explicit instantiations of the Hopper GEMM chain kernel (fp16) for E tiles of 64, 128 and
// 256 columns, compiled for sm_90a only (sources.cmake). Called through LaunchHopperGemmChain
// (hopper_chain.cpp).
#include "kernels/gemm_chain_hopper/hopper_chain_kernel.cuh"

namespace stof::kernels::detail {

#define STOF_HOPPER_CHAIN_VARIANT(H)                                                          \
  template engine::Status LaunchHopperChainVariant<H>(const CUtensorMap&, const CUtensorMap&, \
                                                      const CUtensorMap&,                     \
                                                      const HopperChainKernelParams&, int64_t, \
                                                      void*)
STOF_HOPPER_CHAIN_VARIANT(64);
STOF_HOPPER_CHAIN_VARIANT(128);
STOF_HOPPER_CHAIN_VARIANT(256);
#undef STOF_HOPPER_CHAIN_VARIANT

}  // namespace stof::kernels::detail
