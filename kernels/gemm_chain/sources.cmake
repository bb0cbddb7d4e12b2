# The fused GEMM-chain kernel (MCFuser's mhnk expression): host side, and the explicit
# instantiations split over two .cu files so a 2-core build compiles them in parallel.
target_sources(stof_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gemm_chain.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_chain_a.cu
  ${CMAKE_CURRENT_LIST_DIR}/gemm_chain_b.cu)
set_source_files_properties(
  ${CMAKE_CURRENT_LIST_DIR}/gemm_chain_a.cu ${CMAKE_CURRENT_LIST_DIR}/gemm_chain_b.cu
  PROPERTIES COMPILE_OPTIONS "-Xcompiler=-Wall,-Wextra")
