# The Hopper GEMM chain (kernels/gemm_chain_hopper/hopper_chain.h): host code in stof_kernels,
# the kernel in the sm_90a object library that kernels/attention_hopper/sources.cmake defines
# (wgmma and the cluster's shared memory exist only in the architecture-specific target).
target_sources(stof_kernels_sm90a PRIVATE ${CMAKE_CURRENT_LIST_DIR}/hopper_chain.cu)
target_sources(stof_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/hopper_chain.cpp)
