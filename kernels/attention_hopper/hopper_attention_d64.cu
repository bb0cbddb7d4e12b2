// Explicit instantiations of the Hopper attention kernel for head_dim 64 (BLOCK_M 128 and 64,
// each with BLOCK_N 64 and 128), compiled for sm_90a only (sources.cmake).
// Called through LaunchHopperAttention (hopper_attention.cpp).
#include "kernels/attention_hopper/hopper_attention_kernel.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchHopperAttentionVariant<64, 64, 128>(
    const HopperAttentionParams&, const HopperTensorMaps&, int, void*);
template engine::Status LaunchHopperAttentionVariant<64, 128, 128>(
    const HopperAttentionParams&, const HopperTensorMaps&, int, void*);
template engine::Status LaunchHopperAttentionVariant<64, 64, 64>(
    const HopperAttentionParams&, const HopperTensorMaps&, int, void*);
template engine::Status LaunchHopperAttentionVariant<64, 128, 64>(
    const HopperAttentionParams&, const HopperTensorMaps&, int, void*);

}  // namespace stof::kernels::detail
