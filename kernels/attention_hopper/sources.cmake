# Hopper attention (kernels/attention_hopper/hopper_attention.h): host code in stof_kernels; the
# kernels need wgmma and setmaxnreg, which exist only in the architecture-specific sm_90a
# target, so their two instantiation files form an object library built for 90a alone,
# whatever STOF_CUDA_ARCHS says (a plain sm_90 pass would reject those instructions). On
# another GPU the launch refuses with the device's capability (CheckHopperDevice).
add_library(stof_kernels_sm90a OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/hopper_attention_d64.cu
  ${CMAKE_CURRENT_LIST_DIR}/hopper_attention_d128.cu
  ${CMAKE_CURRENT_LIST_DIR}/hopper_attention_d256.cu)
set_target_properties(stof_kernels_sm90a PROPERTIES CUDA_ARCHITECTURES 90a
                      POSITION_INDEPENDENT_CODE ON)
target_include_directories(stof_kernels_sm90a PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(stof_kernels_sm90a PRIVATE CUDA::cudart stof_engine)
target_compile_options(stof_kernels_sm90a PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra>)
target_sources(stof_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/hopper_attention.cpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hopper/device_check.cpp
  ${PROJECT_SOURCE_DIR}/kernels/common/hopper/tensor_map.cpp
  $<TARGET_OBJECTS:stof_kernels_sm90a>)
