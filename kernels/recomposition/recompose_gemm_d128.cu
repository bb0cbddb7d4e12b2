// Explicit instantiations of the two SDF GEMM kernels (Q K^T + local softmax, global scaling +
// P V; recompose_gemm_kernels.cuh) for head_dim 128, one pair per sub-vector length T (BLOCK_M is
// a run-time value). head_dim 64 lives in recompose_gemm_d64.cu, so a 2-core build
// compiles them in parallel. Called through RecomposedMha::Launch (recomposed_attention.cu).
#include "kernels/recomposition/recompose_gemm_kernels.cuh"

namespace stof::kernels::detail {

template engine::Status LaunchRecomposeQk<128, 64>(const RecomposeGemmParams&, int, int, void*);
template engine::Status LaunchRecomposeQk<128, 128>(const RecomposeGemmParams&, int, int, void*);
template engine::Status LaunchRecomposePv<128, 64>(const RecomposeGemmParams&, int, int, void*);
template engine::Status LaunchRecomposePv<128, 128>(const RecomposeGemmParams&, int, int, void*);

}  // namespace stof::kernels::detail
