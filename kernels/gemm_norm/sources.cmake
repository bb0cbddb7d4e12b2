# Fused GEMM + bias + residual + LayerNorm/RMSNorm (gemm_norm.h): host checks and dispatch, and
# the 7 explicit instantiations in two .cu files (compiled in parallel on a 2-core build).
target_sources(stof_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gemm_norm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_norm_bm16.cu
  ${CMAKE_CURRENT_LIST_DIR}/gemm_norm_bm32.cu)
set_source_files_properties(
  ${CMAKE_CURRENT_LIST_DIR}/gemm_norm_bm16.cu ${CMAKE_CURRENT_LIST_DIR}/gemm_norm_bm32.cu
  PROPERTIES COMPILE_OPTIONS "-Xcompiler=-Wall,-Wextra")
