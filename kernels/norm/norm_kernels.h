// Bias + Add + Norm in one kernel: y = Norm(x + bias + residual), Norm = LayerNorm (beta given)
// or T5's RMSNorm (beta null). This is STOF's Bias+Add+LayerNorm MI+MI fusion: each row is held
// in registers, so x and residual are read once, out written once, bias/gamma/beta come from L2.
// fp16 buffers, fp32 math. CUDA-free header: device buffers are void*, streams opaque.
// Used by the layer executor through CudaBackend (bias_add_norm template, the unfused LayerNorm
// and RMSNorm ops) and by the tuner (SupportedNormParams). Semantics: engine/cpu/reference.h
// BiasAddNorm (biased variance, eps inside the square root). Tests: tests/gpu/norm_kernels_test.cpp.
// Invariants: arguments are checked on the host (CheckNormArgs, CheckNormParams) on every
// launch; the kernel trusts them. out and sum_out may each equal x or residual (every element
// is read before it is written, by the same thread); no other overlap is allowed.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/status.h"

namespace stof::kernels {

struct NormArgs {
  int64_t rows = 0, cols = 0;     // rows >= 0 (0: nothing to do), 1 <= cols <= kNormMaxCols
  const void* x = nullptr;        // [rows, cols], required
  const void* bias = nullptr;     // [cols], optional
  const void* residual = nullptr; // [rows, cols], optional
  const void* gamma = nullptr;    // [cols], required
  const void* beta = nullptr;     // [cols]; nullptr => RMSNorm (T5), else LayerNorm
  float eps = 1e-5f;              // finite, > 0
  void* out = nullptr;            // [rows, cols]; may equal x or residual (in place)
  // [rows, cols], optional: also receives x + bias + residual rounded to fp16 (the residual
  // stream of GPT-2's add -> LayerNorm, engine::NormCall::sum_out); the norm is then taken of
  // those rounded values, so out == Norm(sum_out) as a later unfused op would see it. May equal
  // x or residual, not out.
  void* sum_out = nullptr;
};

// The tunables. A row is split over `threads_per_row` threads (a power of two, 4 .. 1024; the
// row's statistics are reduced by warp shuffles and, above 32, through shared memory); each
// thread holds its share of the row in registers, an array of 8, 16, 32 or 64 floats (the
// smallest that fits), so cols <= 64 * threads_per_row. A block holds `rows_per_block` such
// row groups; rows_per_block * threads_per_row must be a multiple of 32 (whole warps) and at
// most 1024, 512 or 256 when a thread holds 8, 16..32 or 64 elements (the register file).
// When cols % 8 == 0 and every pointer is 16-byte aligned a thread moves 8 halves (16 bytes)
// at a time, columns [8 (k T + t), +8) for its k-th slot (T threads, lane t); else one half at
// a time, column k T + t (the scalar path for ragged cols).
struct NormParams {
  int rows_per_block = 8;
  int threads_per_row = 32;
};

inline constexpr int kNormMaxItemsPerThread = 64;
// 256 threads x 64 elements (or 512 x 32): the longest row one block holds in registers.
inline constexpr int64_t kNormMaxCols = 16384;

// Null x/gamma/out, rows < 0, cols outside [1, kNormMaxCols], eps not finite or <= 0,
// sum_out == out, or rows * cols overflowing: an error naming the field ("bias_add_norm: gamma: ...").
engine::Status CheckNormArgs(const NormArgs& args);
// Params valid for args.cols (see NormParams); the error names the field and the limit.
engine::Status CheckNormParams(const NormArgs& args, const NormParams& params);

// Every setting worth timing for rows of `cols` (empty when cols is outside [1, kNormMaxCols]):
// threads_per_row from the fewest that fit the row in registers up to where at least half the
// threads of a row still hold data, each at 128 and 256 threads per block (or one row per
// block above that). The first element is DefaultNormParams(cols).
std::vector<NormParams> SupportedNormParams(int64_t cols);
// A heuristic, not a measurement: threads_per_row with the row spread evenly (>= 90% of the
// slots of the last load used), then about 16 elements per thread (two 16-byte loads on the
// vector path); 256 threads per block. cols 512 -> 32, 768 -> 32, 1024 -> 64, 4096 -> 256.
NormParams DefaultNormParams(int64_t cols);

// y = Norm(x + bias + residual) (see NormArgs) on `stream` (opaque cudaStream_t); one kernel,
// asynchronous. Checks args and params first; rows == 0 launches nothing.
engine::Status LaunchBiasAddNorm(const NormArgs& args, const NormParams& params, void* stream);

}  // namespace stof::kernels
