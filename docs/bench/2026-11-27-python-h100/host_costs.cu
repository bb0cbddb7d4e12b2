// Issue 18, run 82: the host cost of the pieces of one Hopper attention launch (us per call,
// best of 5 x 20000 calls): cuTensorMapEncodeTiled of a 4-D map as the launch encodes Q,
// cuTensorMapReplaceAddress on an encoded map, cudaGetDevice, cudaSetDevice (same device),
// cudaDeviceGetAttribute, cudaFuncSetAttribute, and cudaLaunchKernelEx of an empty kernel with
// and without the programmatic-dependent-launch attribute. Build: nvcc -O2 -arch=sm_90a
// host_costs.cu -o host_costs (driver entry points through the runtime: no -lcuda).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>

__global__ void Empty(int) {}

template <class F>
double Best(F f) {
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20000; ++i) f(i);
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20000;
    if (us < best) best = us;
  }
  return best;
}

int main() {
  void* enc = nullptr; void* rep = nullptr; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &enc, 12000, cudaEnableDefault, &q);
  cudaGetDriverEntryPointByVersion("cuTensorMapReplaceAddress", &rep, 12000, cudaEnableDefault, &q);
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(enc);
  auto replace = reinterpret_cast<PFN_cuTensorMapReplaceAddress_v12000>(rep);
  if (!encode || !replace) { std::printf("no driver entry points\n"); return 1; }
  void* buf = nullptr;
  cudaMalloc(&buf, 64 << 20);
  alignas(64) CUtensorMap map;
  cuuint64_t dims[4] = {64, 128, 12, 1}, strides[3] = {64 * 2, 128 * 64 * 2, 12 * 128 * 64 * 2};
  cuuint32_t box[4] = {64, 64, 1, 1}, elem[4] = {1, 1, 1, 1};
  auto enc_once = [&](int i) {
    return encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, static_cast<char*>(buf) + 256 * (i & 7),
                  dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  if (enc_once(0) != CUDA_SUCCESS) { std::printf("encode failed\n"); return 1; }
  std::printf("cuTensorMapEncodeTiled        %6.3f us\n", Best([&](int i) { enc_once(i); }));
  std::printf("cuTensorMapReplaceAddress     %6.3f us\n",
              Best([&](int i) { replace(&map, static_cast<char*>(buf) + 256 * (i & 7)); }));
  int dev = 0, v = 0;
  std::printf("cudaGetDevice                 %6.3f us\n", Best([&](int) { cudaGetDevice(&dev); }));
  std::printf("cudaSetDevice (same)          %6.3f us\n", Best([&](int) { cudaSetDevice(0); }));
  std::printf("cudaDeviceGetAttribute        %6.3f us\n", Best([&](int) {
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0); }));
  std::printf("cudaFuncSetAttribute          %6.3f us\n", Best([&](int) {
    cudaFuncSetAttribute(Empty, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024); }));
  cudaStream_t s; cudaStreamCreate(&s);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(132); cfg.blockDim = dim3(160); cfg.stream = s;
  for (int pdl = 0; pdl < 2; ++pdl) {
    cfg.attrs = pdl ? attr : nullptr; cfg.numAttrs = pdl;
    double us = Best([&](int i) { cudaLaunchKernelEx(&cfg, Empty, i); if ((i & 1023) == 1023) cudaStreamSynchronize(s); });
    std::printf("cudaLaunchKernelEx (pdl %d)    %6.3f us\n", pdl, us);
  }
  cudaStreamSynchronize(s);
  return 0;
}
