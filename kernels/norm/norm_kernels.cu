// LaunchBiasAddNorm (norm_kernels.h): Bias + Add + LayerNorm/RMSNorm in one kernel.
//
// Kernel: a group of T = threads_per_row threads owns one row; a thread holds its slots of the
// row in registers (kItems floats: 8, 16, 32 or 64, the smallest that fits
// ceil(cols / (T * U)) slots of U = 8 or 1 halves). Load: v = x + bias + residual (one read of x
// and residual, bias through the read-only cache). Statistics: LayerNorm takes the mean, then
// the biased variance as the mean of (v - mean)^2 over the registers (two reductions, no
// cancellation of E[v^2] - mean^2); RMSNorm the mean of v^2 (one reduction). A reduction is a
// shuffle butterfly within the warp's T-lane group and, for T > 32, one pass through shared
// memory (one float per warp). Store: (v - mean) * rstd * gamma (+ beta), one write of out.
// With sum_out, v is also stored (fp16) at load time and the statistics use the stored values.
// out/sum_out may equal x or residual: every thread reads its elements before it writes them,
// and touches no other thread's elements.
// Instantiations: kItems in {8, 16, 32, 64} x {vector, scalar} = 8 kernels; LayerNorm vs
// RMSNorm and the optional inputs are uniform run-time branches.
#include "kernels/norm/norm_kernels.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <string>

#include "kernels/cuda_check.h"
#include "kernels/norm/mi_common.cuh"

namespace stof::kernels {

namespace {

constexpr const char* kOp = "bias_add_norm";
constexpr int kMaxBlockThreads = 1024;
constexpr int kMinThreadsPerRow = 4;

// The most threads a block may have when each holds `items` row elements: the launch bound, so
// 65536 registers / threads leaves room for the row (1024 -> 64 registers for 8 elements, 512
// -> 128 for 16 or 32, 256 -> 255 for 64) instead of spilling it.
constexpr int MaxBlockThreadsFor(int items) { return items <= 8 ? 1024 : items <= 32 ? 512 : 256; }

struct NormKernelArgs {
  int64_t rows;
  int cols;
  int tpr_log2;  // threads_per_row = 1 << tpr_log2
  int rows_per_block;
  float fcols, eps;  // cols as float: statistics divide by it (IEEE division, correctly rounded)
  const __half* x;
  const __half* bias;
  const __half* residual;
  const __half* gamma;
  const __half* beta;
  __half* out;
  __half* sum_out;
};

// Sum over the row's T threads (T = 1 << tpr_log2); `red` holds one float per warp. Called by
// every thread of the block (uniform: the barrier is safe).
__device__ __forceinline__ float RowSum(float v, int tpr_log2, float* red) {
  const int tpr = 1 << tpr_log2;
  v = mi::GroupSumInWarp(v, tpr < 32 ? tpr : 32);
  if (tpr > 32) {
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    const int warps_per_row = tpr >> 5;
    const float* mine = red + (threadIdx.x >> tpr_log2) * warps_per_row;
    v = 0.f;
    for (int i = 0; i < warps_per_row; ++i) v += mine[i];
  }
  return v;
}

template <int kItems, bool kVec>
__global__ void __launch_bounds__(MaxBlockThreadsFor(kItems)) BiasAddNormKernel(const NormKernelArgs a) {
  constexpr int U = kVec ? mi::kVecHalves : 1;  // halves per slot
  constexpr int kSlots = kItems / U;
  static_assert(kItems % U == 0 && kItems >= 8 && kItems <= kNormMaxItemsPerThread,
                "whole slots, at most kNormMaxItemsPerThread registers of row data");
  __shared__ float red[2][kMaxBlockThreads / 32];  // one per statistic: no barrier between

  const int tpr = 1 << a.tpr_log2;
  const int lane = static_cast<int>(threadIdx.x) & (tpr - 1);
  const int64_t row =
      static_cast<int64_t>(blockIdx.x) * a.rows_per_block + (threadIdx.x >> a.tpr_log2);
  const bool active = row < a.rows;  // inactive groups still join the block's reductions
  const int64_t base = (active ? row : 0) * a.cols;

  float v[kItems];
#pragma unroll
  for (int k = 0; k < kSlots; ++k) {
    const int c = (k * tpr + lane) * U;
    float* vk = v + k * U;
    if (active && c < a.cols) {
      mi::LoadHalves<U>(a.x + base + c, vk);
      if (a.bias) {
        float b[U];
        mi::LoadHalvesLdg<U>(a.bias + c, b);
#pragma unroll
        for (int j = 0; j < U; ++j) vk[j] += b[j];
      }
      if (a.residual) {
        float r[U];
        mi::LoadHalves<U>(a.residual + base + c, r);
#pragma unroll
        for (int j = 0; j < U; ++j) vk[j] += r[j];
      }
    } else {
#pragma unroll
      for (int j = 0; j < U; ++j) vk[j] = 0.f;
    }
  }
  // sum_out after every load: a store between them (it may alias x or residual) would keep the
  // compiler from issuing the later slots' loads early. The stored values are the ones
  // normalised (see NormArgs).
  if (a.sum_out) {
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      const int c = (k * tpr + lane) * U;
      float* vk = v + k * U;
      if (active && c < a.cols) {
        mi::StoreHalves<U>(a.sum_out + base + c, vk);
#pragma unroll
        for (int j = 0; j < U; ++j) vk[j] = __half2float(__float2half_rn(vk[j]));
      }
    }
  }
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kItems; ++k) sum += v[k];  // padding slots are 0

  const bool layer_norm = a.beta != nullptr;
  float mean = 0.f, second = 0.f;
  if (layer_norm) {
    mean = RowSum(sum, a.tpr_log2, red[0]) / a.fcols;
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      const int c = (k * tpr + lane) * U;
      if (c < a.cols) {  // padding slots hold 0, not mean: leave them out
#pragma unroll
        for (int j = 0; j < U; ++j) {
          const float d = v[k * U + j] - mean;
          second += d * d;
        }
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) second += v[k] * v[k];  // padding slots are 0
  }
  const float var = RowSum(second, a.tpr_log2, red[1]) / a.fcols;
  const float rstd = rsqrtf(var + a.eps);
  if (!active) return;

#pragma unroll
  for (int k = 0; k < kSlots; ++k) {
    const int c = (k * tpr + lane) * U;
    if (c < a.cols) {
      float g[U], y[U];
      mi::LoadHalvesLdg<U>(a.gamma + c, g);
#pragma unroll
      for (int j = 0; j < U; ++j) y[j] = (v[k * U + j] - mean) * rstd * g[j];
      if (layer_norm) {
        float b[U];
        mi::LoadHalvesLdg<U>(a.beta + c, b);
#pragma unroll
        for (int j = 0; j < U; ++j) y[j] += b[j];
      }
      mi::StoreHalves<U>(a.out + base + c, y);
    }
  }
}

using KernelFn = void (*)(NormKernelArgs);

template <bool kVec>
KernelFn PickKernel(int items) {
  switch (items) {
    case 8: return BiasAddNormKernel<8, kVec>;
    case 16: return BiasAddNormKernel<16, kVec>;
    case 32: return BiasAddNormKernel<32, kVec>;
    default: return BiasAddNormKernel<64, kVec>;
  }
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Halves per slot: 8 when cols % 8 == 0 (the pointers' alignment is checked at launch).
int UnitFor(int64_t cols) { return cols % mi::kVecHalves == 0 ? mi::kVecHalves : 1; }

// Register elements per thread for the slots a row of `cols` needs at T threads (a power of two
// >= 8 covering them, the compile-time size of the row array).
int ItemsFor(int64_t cols, int unit, int tpr) {
  const int64_t units = (cols + unit - 1) / unit;
  const int64_t slots = (units + tpr - 1) / tpr;
  int items = 8;
  while (items < slots * unit) items *= 2;
  return items;
}

}  // namespace

engine::Status CheckNormArgs(const NormArgs& a) {
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "x", a.x));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "gamma", a.gamma));
  STOF_RETURN_IF_ERROR(mi::NotNull(kOp, "out", a.out));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "rows", a.rows, 0));
  STOF_RETURN_IF_ERROR(mi::InRange(kOp, "cols", a.cols, 1, kNormMaxCols));
  if (!std::isfinite(a.eps) || a.eps <= 0.f)
    return engine::MakeError(std::string(kOp) + ": eps: expected a finite value > 0, got " +
                             std::to_string(a.eps));
  STOF_RETURN_IF_ERROR(mi::SizeFits(kOp, "rows * cols", mi::CheckedMul(a.rows, a.cols)));
  if (a.sum_out && a.sum_out == a.out)
    return engine::MakeError(std::string(kOp) + ": sum_out: must not be out (both are written)");
  return engine::Status::Ok();
}

engine::Status CheckNormParams(const NormArgs& a, const NormParams& p) {
  const std::string op = std::string(kOp) + ": params.";
  const int tpr = p.threads_per_row;
  if (!IsPowerOfTwo(tpr) || tpr < kMinThreadsPerRow || tpr > kMaxBlockThreads)
    return engine::MakeError(op + "threads_per_row: expected a power of two in " +
                             mi::Str(kMinThreadsPerRow) + " .. " + mi::Str(kMaxBlockThreads) +
                             ", got " + mi::Str(tpr));
  if (a.cols > static_cast<int64_t>(tpr) * kNormMaxItemsPerThread)
    return engine::MakeError(op + "threads_per_row: " + mi::Str(tpr) + " threads hold at most " +
                             mi::Str(static_cast<int64_t>(tpr) * kNormMaxItemsPerThread) +
                             " columns (" + mi::Str(kNormMaxItemsPerThread) +
                             " per thread), got cols " + mi::Str(a.cols));
  // The vector path's rounding needs at least as many registers as the scalar path's.
  const int items = ItemsFor(a.cols, UnitFor(a.cols), tpr);
  const int max_threads = MaxBlockThreadsFor(items);
  if (p.rows_per_block < 1 || static_cast<int64_t>(p.rows_per_block) * tpr > max_threads)
    return engine::MakeError(op + "rows_per_block: expected 1 .. " +
                             mi::Str(std::max(1, max_threads / tpr)) + " (at most " +
                             mi::Str(max_threads) + " threads per block when a thread holds " +
                             mi::Str(items) + " elements: cols " + mi::Str(a.cols) +
                             ", threads_per_row " + mi::Str(tpr) + "), got " +
                             mi::Str(p.rows_per_block));
  if ((p.rows_per_block * tpr) % 32 != 0)
    return engine::MakeError(op + "rows_per_block: rows_per_block * threads_per_row must be a "
                             "multiple of 32 (whole warps), got " + mi::Str(p.rows_per_block) +
                             " * " + mi::Str(tpr));
  return engine::Status::Ok();
}

namespace {

// threads_per_row worth considering for `cols`: the row fits their registers and more than half
// of them hold data (4 threads are always worth a look).
bool WorthTrying(int64_t cols, int tpr) {
  const int64_t units = (cols + UnitFor(cols) - 1) / UnitFor(cols);
  return cols <= static_cast<int64_t>(tpr) * kNormMaxItemsPerThread &&
         (tpr == kMinThreadsPerRow || tpr / 2 < units);
}

bool Valid(int64_t cols, const NormParams& p) {
  NormArgs a;
  a.cols = cols;
  return CheckNormParams(a, p).IsOk();
}

}  // namespace

std::vector<NormParams> SupportedNormParams(int64_t cols) {
  std::vector<NormParams> v;
  if (cols < 1 || cols > kNormMaxCols) return v;
  v.push_back(DefaultNormParams(cols));
  for (int tpr = kMinThreadsPerRow; tpr <= kMaxBlockThreads; tpr *= 2) {
    if (!WorthTrying(cols, tpr)) continue;
    for (int block : {128, 256}) {
      const NormParams p{std::max(1, block / tpr), tpr};
      const bool dup = std::any_of(v.begin(), v.end(), [&](const NormParams& q) {
        return q.rows_per_block == p.rows_per_block && q.threads_per_row == p.threads_per_row;
      });
      if (!dup && Valid(cols, p)) v.push_back(p);
    }
  }
  return v;
}

NormParams DefaultNormParams(int64_t cols) {
  NormParams best{8, 32};
  if (cols < 1 || cols > kNormMaxCols) return best;
  const int unit = UnitFor(cols);
  const int64_t units = (cols + unit - 1) / unit;
  bool have = false, best_even = false;
  int64_t best_dist = 0;
  for (int tpr = kMinThreadsPerRow; tpr <= kMaxBlockThreads; tpr *= 2) {
    const NormParams p{std::max(1, 256 / tpr), tpr};
    if (!WorthTrying(cols, tpr) || !Valid(cols, p)) continue;
    const int64_t slots = (units + tpr - 1) / tpr;
    // Even: the row fills at least 90% of its threads' slots (768 = 96 vectors over 32
    // threads: 3 each, 100%; over 64 threads: 2 each, 75%).
    const bool even = units * 10 >= slots * tpr * 9;
    const int64_t dist = std::llabs(slots * unit - 16);  // about 16 elements per thread
    if (!have || (even && !best_even) || (even == best_even && dist < best_dist)) {
      best = p;
      best_even = even;
      best_dist = dist;
      have = true;
    }
  }
  return best;
}

engine::Status LaunchBiasAddNorm(const NormArgs& a, const NormParams& p, void* stream) {
  STOF_RETURN_IF_ERROR(CheckNormArgs(a));
  STOF_RETURN_IF_ERROR(CheckNormParams(a, p));
  if (a.rows == 0) return engine::Status::Ok();
  auto blocks = mi::GridBlocks(kOp, a.rows, p.rows_per_block);
  if (!blocks.IsOk()) return blocks.ToStatus();

  const bool vec = a.cols % mi::kVecHalves == 0 && mi::Aligned16(a.x) && mi::Aligned16(a.out) &&
                   mi::Aligned16(a.gamma) && mi::Aligned16(a.bias) &&
                   mi::Aligned16(a.residual) && mi::Aligned16(a.beta) &&
                   mi::Aligned16(a.sum_out);  // null is aligned
  const int unit = vec ? mi::kVecHalves : 1;
  const int tpr = p.threads_per_row;
  NormKernelArgs k;
  k.rows = a.rows;
  k.cols = static_cast<int>(a.cols);
  k.tpr_log2 = std::countr_zero(static_cast<unsigned>(tpr));
  k.rows_per_block = p.rows_per_block;
  k.fcols = static_cast<float>(a.cols);  // exact: cols <= 16384
  k.eps = a.eps;
  k.x = static_cast<const __half*>(a.x);
  k.bias = static_cast<const __half*>(a.bias);
  k.residual = static_cast<const __half*>(a.residual);
  k.gamma = static_cast<const __half*>(a.gamma);
  k.beta = static_cast<const __half*>(a.beta);
  k.out = static_cast<__half*>(a.out);
  k.sum_out = static_cast<__half*>(a.sum_out);
  const int items = ItemsFor(a.cols, unit, tpr);  // <= 64: CheckNormParams bounded cols
  const KernelFn fn = vec ? PickKernel<true>(items) : PickKernel<false>(items);
  fn<<<*blocks, static_cast<unsigned>(p.rows_per_block * tpr), 0,
       static_cast<cudaStream_t>(stream)>>>(k);
  STOF_CUDA_TRY(cudaGetLastError());
  return engine::Status::Ok();
}

}  // namespace stof::kernels
