# Memory-intensive kernels of a transformer layer (kernels/norm/): Bias+Add+Norm, bias/act/add,
# scale, mask, softmax (plain and scale+mask fused; NativeMha's softmax step), split/merge heads.
# Included by kernels/CMakeLists.txt.
target_sources(stof_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/elementwise_kernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/norm_kernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/softmax_kernels.cu)
set_source_files_properties(
  ${CMAKE_CURRENT_LIST_DIR}/elementwise_kernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/norm_kernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/softmax_kernels.cu
  PROPERTIES COMPILE_OPTIONS "-Xcompiler=-Wall,-Wextra")
