// Explicit instantiations of the Hopper attention kernel (fp16 and bf16) for head_dim 256 (and
// the head sizes above 128 that run on it: BLOCK_M 128 and 64, each with BLOCK_N 64), compiled
// for sm_90a only (sources.cmake). Called through LaunchHopperAttention (hopper_attention.cpp).
#include "kernels/attention_hopper/hopper_attention_kernel.cuh"

namespace stof::kernels::detail {

STOF_HOPPER_VARIANT(256, 64, 128);
STOF_HOPPER_VARIANT(256, 64, 64);

}  // namespace stof::kernels::detail
