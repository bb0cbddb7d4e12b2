# Linear layers through cuBLASLt with fused epilogues, and the batched attention GEMMs
# (lt_gemm.h). Host code only (no .cu): cuBLASLt is linked by kernels/CMakeLists.txt.
target_sources(stof_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/lt_gemm.cpp)
