// Explicit instantiations of the Hopper attention kernel (fp16 and bf16) for head_dim 128 (and
// the head sizes from 72 that run on it; BLOCK_M 128 with BLOCK_N 64 and 128; BLOCK_M 64 with
// BLOCK_N 64), compiled for sm_90a only (sources.cmake). Called through
// LaunchHopperAttention (hopper_attention.cpp).
#include "kernels/attention_hopper/hopper_attention_kernel.cuh"

namespace stof::kernels::detail {

STOF_HOPPER_VARIANT(128, 64, 128);
STOF_HOPPER_VARIANT(128, 128, 128);
STOF_HOPPER_VARIANT(128, 64, 64);

}  // namespace stof::kernels::detail
