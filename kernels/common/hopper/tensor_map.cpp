// EncodeTensorMap4d (tensor_map.h): checks the view against TMA's rules, then calls the
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

engine::Status EncodeTensorMap4d(const TensorView4d& v, int box_cols, int box_rows,
                                 const char* what, CUtensorMap* out) {
  const std::string where = std::string(what) + ": ";
  if (v.base == nullptr) return engine::MakeError(where + "pointer must not be null");
  if ((reinterpret_cast<uintptr_t>(v.base) & 15u) != 0)
    return engine::MakeError(where + "pointer must be 16-byte aligned for TMA");
  if (box_cols * 2 > 128 || box_cols <= 0 || box_rows <= 0 || box_rows > 256)
    return engine::MakeError(where + "box " + Str(box_cols) + " x " + Str(box_rows) +
                             " outside TMA's limits (128-byte rows, at most 256 rows)");
  if (v.cols <= 0 || v.rows <= 0 || v.heads <= 0 || v.batch <= 0)
    return engine::MakeError(where + "every dimension must be positive");
  // A dimension of extent 1 is never stepped over; give it a valid stride anyway.
  const int64_t head_stride = v.heads > 1 ? v.head_stride : v.row_stride * v.rows;
  const int64_t batch_stride = v.batch > 1 ? v.batch_stride : head_stride * v.heads;
  const int64_t strides[3] = {v.row_stride * 2, head_stride * 2, batch_stride * 2};
  for (int i = 0; i < 3; ++i) {
    if (strides[i] <= 0 || strides[i] % 16 != 0 || strides[i] >= (int64_t{1} << 40))
      return engine::MakeError(where +
                               "strides must be positive multiples of 8 elements below 2^39, "
                               "got row " + Str(v.row_stride) + ", head " +
                               Str(v.head_stride) + ", batch " + Str(v.batch_stride));
  }
  std::string error;
  auto fn = EncodeFn(&error);
  if (fn == nullptr) return engine::MakeError(where + error);
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(v.cols), static_cast<cuuint64_t>(v.rows),
                              static_cast<cuuint64_t>(v.heads), static_cast<cuuint64_t>(v.batch)};
  const cuuint64_t gstrides[3] = {static_cast<cuuint64_t>(strides[0]),
                                  static_cast<cuuint64_t>(strides[1]),
                                  static_cast<cuuint64_t>(strides[2])};
  const cuuint32_t box[4] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows),
                             1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type =
      v.bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = fn(out, type, 4, const_cast<void*>(v.base), dims,
                        gstrides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return engine::MakeError(where + "cuTensorMapEncodeTiled failed with CUresult " +
                             Str(static_cast<int64_t>(r)) + " (dims " + Str(v.cols) + " x " +
                             Str(v.rows) + " x " + Str(v.heads) + " x " + Str(v.batch) + ")");
  return engine::Status::Ok();
}

}  // namespace stof::kernels::hopper
