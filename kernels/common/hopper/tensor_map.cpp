// EncodeTensorMap (tensor_map.h): checks the view against TMA's rules, then calls the
// driver's cuTensorMapEncodeTiled, whose address comes from cudaGetDriverEntryPointByVersion
// once per process.
#include "kernels/common/hopper/tensor_map.h"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <mutex>
#include <string>

#include "engine/core/text_format.h"

namespace stof::kernels::hopper {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 EncodeFn(std::string* error) {
  static std::once_flag once;
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr) {
      failure = std::string("cuTensorMapEncodeTiled is not available from the driver (") +
                cudaGetErrorString(e) + ")";
      return;
    }
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  if (fn == nullptr) *error = failure;
  return fn;
}

using engine::Str;

}  // namespace

engine::Status EncodeTensorMap(const TensorView& v, const int (&box)[kMaxTensorRank],
                               const char* what, CUtensorMap* out) {
  const std::string where = std::string(what) + ": ";
  if (v.base == nullptr) return engine::MakeError(where + "pointer must not be null");
  if ((reinterpret_cast<uintptr_t>(v.base) & 15u) != 0)
    return engine::MakeError(where + "pointer must be 16-byte aligned for TMA");
  if (v.rank < 2 || v.rank > kMaxTensorRank)
    return engine::MakeError(where + "rank " + Str(v.rank) + " outside 2.." +
                             Str(kMaxTensorRank));
  std::string shape;
  for (int i = 0; i < v.rank; ++i) {
    shape += (i ? " x " : "") + Str(v.extent[i]);
    if (v.extent[i] <= 0) return engine::MakeError(where + "every dimension must be positive");
    const int lim = i == 0 ? 64 : 256;  // 128-byte rows of 2-byte elements; TMA's box limit
    if (box[i] <= 0 || box[i] > lim)
      return engine::MakeError(where + "box extent " + Str(box[i]) + " of dimension " + Str(i) +
                               " outside TMA's limits (128-byte rows, at most 256)");
  }
  // Byte strides of dimensions 1.. ; a dimension of extent 1 is never stepped over: give it
  // the stride of a packed tensor anyway (the driver checks every stride).
  cuuint64_t gstrides[kMaxTensorRank - 1] = {};
  int64_t packed = v.extent[0];
  for (int i = 1; i < v.rank; ++i) {
    const int64_t elems = v.extent[i] > 1 ? v.stride[i] : packed;
    const int64_t bytes = elems * 2;
    if (bytes <= 0 || bytes % 16 != 0 || bytes >= (int64_t{1} << 40))
      return engine::MakeError(where + "strides must be positive multiples of 8 elements below "
                               "2^39, got " + Str(v.stride[i]) + " for dimension " + Str(i));
    gstrides[i - 1] = static_cast<cuuint64_t>(bytes);
    packed = elems * v.extent[i];
  }
  std::string error;
  auto fn = EncodeFn(&error);
  if (fn == nullptr) return engine::MakeError(where + error);
  cuuint64_t dims[kMaxTensorRank] = {};
  cuuint32_t boxes[kMaxTensorRank] = {};
  cuuint32_t elem_strides[kMaxTensorRank] = {};
  for (int i = 0; i < v.rank; ++i) {
    dims[i] = static_cast<cuuint64_t>(v.extent[i]);
    boxes[i] = static_cast<cuuint32_t>(box[i]);
    elem_strides[i] = 1;
  }
  const CUtensorMapDataType type =
      v.bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = fn(out, type, static_cast<cuuint32_t>(v.rank), const_cast<void*>(v.base),
                        dims, gstrides, boxes, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return engine::MakeError(where + "cuTensorMapEncodeTiled failed with CUresult " +
                             Str(static_cast<int64_t>(r)) + " (dims " + shape + ")");
  return engine::Status::Ok();
}

}  // namespace stof::kernels::hopper
