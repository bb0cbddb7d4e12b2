# Softmax recomposition (SD, SDF): kernels/recomposition/recomposed_attention.h. The SDF GEMM
# kernels are instantiated per head size in two files so a 2-core build compiles them in
# parallel.
target_sources(stof_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/recomposed_attention.cu
  ${CMAKE_CURRENT_LIST_DIR}/recompose_gemm_d64.cu
  ${CMAKE_CURRENT_LIST_DIR}/recompose_gemm_d128.cu)
set_source_files_properties(
  ${CMAKE_CURRENT_LIST_DIR}/recomposed_attention.cu
  ${CMAKE_CURRENT_LIST_DIR}/recompose_gemm_d64.cu
  ${CMAKE_CURRENT_LIST_DIR}/recompose_gemm_d128.cu
  PROPERTIES COMPILE_OPTIONS "-Xcompiler=-Wall,-Wextra")
