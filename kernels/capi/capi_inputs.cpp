// The C API's argument checks and error reporting (capi_inputs.h).
#include "kernels/capi/capi_inputs.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>
#include <vector>

#include "engine/select/hopper_select.h"

namespace stof::capi {

void WriteText(char* buf, size_t len, const std::string& text) {
  if (buf == nullptr || len == 0) return;
  const size_t n = std::min(len - 1, text.size());
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
}

int Report(const Failure& f, char* err, size_t err_len) {
  WriteText(err, err_len, "stof_capi: " + f.message);
  return f.code;
}

// CUDA-side failures (allocation, upload, launch) carry the CUDA call text from STOF_CUDA_TRY;
// the runtime's own texts say "CUDA" ("CUDA driver version is insufficient ..."), so the
// match ignores case.
int CodeOf(const std::string& message) {
  std::string lower = message;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("cuda") != std::string::npos || lower.find("gpu") != std::string::npos
             ? STOF_ERR_CUDA
             : STOF_ERR_INVALID;
}

engine::Expected<kernels::MhaRequest> MakeRequest(int kernel, int64_t block_m, int64_t block_n,
                                                  int64_t num_warps) {
  kernels::MhaRequest r;
  switch (kernel) {
    case STOF_KERNEL_AUTO: r.kernel = kernels::MhaKernelRequest::kAuto; break;
    case STOF_KERNEL_ROW_WISE: r.kernel = kernels::MhaKernelRequest::kRowWise; break;
    case STOF_KERNEL_BLOCK_WISE: r.kernel = kernels::MhaKernelRequest::kBlockWise; break;
    case STOF_KERNEL_NATIVE: r.kernel = kernels::MhaKernelRequest::kNative; break;
    case STOF_KERNEL_SD: r.kernel = kernels::MhaKernelRequest::kDecomposed; break;
    case STOF_KERNEL_SDF: r.kernel = kernels::MhaKernelRequest::kRecomposed; break;
    default:
      return engine::MakeError("kernel: expected 0 (auto), 1 (row_wise), 2 (block_wise), 3 "
                               "(native), 4 (sd) or 5 (sdf), got " + std::to_string(kernel));
  }
  if (block_m < 0 || block_n < 0 || num_warps < 0)
    return engine::MakeError("block_m, block_n, num_warps: expected 0 (auto) or a positive value");
  r.block_m = block_m;
  r.block_n = block_n;
  r.num_warps = num_warps;
  return r;
}

// rows*cols bytes (nonzero = attend) -> bit-packed Mask, 64 columns per word.
engine::Expected<engine::Mask> MaskFromBytes(const uint8_t* bytes, int64_t rows, int64_t cols) {
  if (bytes == nullptr) return engine::MakeError("mask_host: must not be null");
  auto m = engine::Mask::Create(rows, cols, "mask_host");
  if (!m.IsOk()) return m.ToStatus();
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = bytes + r * cols;
    uint64_t* words = m->RowWords(r);
    for (int64_t c0 = 0; c0 < cols; c0 += 64) {
      const int64_t n = std::min<int64_t>(64, cols - c0);
      uint64_t w = 0;
      for (int64_t j = 0; j < n; ++j) w |= static_cast<uint64_t>(row[c0 + j] != 0) << j;
      words[c0 >> 6] = w;
    }
  }
  return m;
}

engine::Expected<engine::Workload> MakeWorkload(const CallShape& shape, int dtype) {
  if (dtype != STOF_DTYPE_F16 && dtype != STOF_DTYPE_BF16)
    return engine::MakeError("dtype: expected STOF_DTYPE_F16 (0) or STOF_DTYPE_BF16 (1), got " +
                             std::to_string(dtype));
  if (shape.Hkv < 1 || shape.Lq < 1)
    return engine::MakeError("shape: Hkv and Lq must be positive, got Hkv " +
                             std::to_string(shape.Hkv) + ", Lq " + std::to_string(shape.Lq));
  engine::Workload w;
  w.batch = shape.B;
  w.heads = shape.H;
  w.kv_heads = shape.Hkv;
  w.seq_len = shape.Lk;
  w.q_len = shape.Lq;
  const int64_t d = shape.d;
  w.head_dim = d;
  w.dtype = dtype == STOF_DTYPE_BF16 ? engine::DType::kBF16 : engine::DType::kF16;
  STOF_RETURN_IF_ERROR(w.Validate("workload"));
  // Checked here too (ChooseMhaConfig does) so a bad shape is refused before any CUDA call.
  if (engine::HopperKernelHeadDim(d) == 0)
    return engine::MakeError("workload.head_dim: the sparse MHA kernels support multiples of 8 "
                             "from 8 to 256 (64 and 128 on every kernel, the others on the "
                             "Hopper kernel), got " + std::to_string(d));
  return w;
}

engine::Expected<CallInputs> ParseCallInputs(const uint8_t* mask_host, const CallShape& shape,
                                             int kernel, int64_t block_m, int64_t block_n,
                                             int64_t num_warps, int dtype) {
  auto request = MakeRequest(kernel, block_m, block_n, num_warps);
  if (!request.IsOk()) return engine::Error{request.Message()};
  auto w = MakeWorkload(shape, dtype);
  if (!w.IsOk()) return engine::Error{w.Message()};
  auto mask = MaskFromBytes(mask_host, shape.Lq, shape.Lk);
  if (!mask.IsOk()) return engine::Error{mask.Message()};
  return CallInputs{*request, *w, std::move(*mask)};
}

engine::Expected<PatternInputs> ParsePatternInputs(const uint8_t* masks_host, int64_t patterns,
                                                   const int32_t* pattern_of,
                                                   const CallShape& shape, int kernel,
                                                   int64_t block_m, int64_t block_n,
                                                   int64_t num_warps, int dtype) {
  auto request = MakeRequest(kernel, block_m, block_n, num_warps);
  if (!request.IsOk()) return engine::Error{request.Message()};
  auto w = MakeWorkload(shape, dtype);
  if (!w.IsOk()) return engine::Error{w.Message()};
  const int64_t items = shape.B * shape.H;
  if (patterns < 1 || patterns > items)
    return engine::MakeError("P: expected 1..B*H = " + std::to_string(items) +
                             " mask patterns, got " + std::to_string(patterns));
  if (masks_host == nullptr) return engine::MakeError("masks_host: must not be null");
  if (pattern_of == nullptr) return engine::MakeError("pattern_of: must not be null");
  std::vector<engine::Mask> masks;
  masks.reserve(static_cast<size_t>(patterns));
  const int64_t bytes = shape.Lq * shape.Lk;
  for (int64_t i = 0; i < patterns; ++i) {
    auto m = MaskFromBytes(masks_host + i * bytes, shape.Lq, shape.Lk);
    if (!m.IsOk()) return engine::Error{m.Message()};
    masks.push_back(std::move(*m));
  }
  auto set = engine::MaskSet::Make(std::move(masks),
                                   std::vector<int32_t>(pattern_of, pattern_of + items), shape.B,
                                   shape.H, "masks_host");
  if (!set.IsOk()) return engine::Error{set.Message()};
  return PatternInputs{*request, *w, std::move(*set)};
}

}  // namespace stof::capi
