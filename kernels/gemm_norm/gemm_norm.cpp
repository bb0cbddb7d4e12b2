// Host side of the fused GEMM + norm kernel (gemm_norm.h): argument and parameter checks, the
// supported settings, the per-device opt-in shared-memory limit (queried once per device) and
// the dispatch of run-time (bm, n / warps) to the 7 explicit instantiations
// (gemm_norm_bm16.cu, gemm_norm_bm32.cu). n, bk, stages and warps stay run-time values.
#include "kernels/gemm_norm/gemm_norm.h"

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>

#include "engine/core/text_format.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_norm/gemm_norm_variant.h"

namespace stof::kernels {

namespace {

constexpr int64_t kMaxInt = 0x7fffffff;
constexpr int kWarpWidths[] = {64, 96, 128};  // kWarpCols of the compiled variants
constexpr int kMaxAccProduct = 4096;          // bm * kWarpCols: 128 fp32 accumulators a thread

using engine::Str;

bool Aligned(const void* p, uintptr_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

bool SupportedN(int64_t n) {
  return n >= 64 && n % 64 == 0 && (n <= 512 || (n <= 1024 && n % 128 == 0));
}

engine::Status CheckN(int64_t n) {
  if (SupportedN(n)) return engine::Status::Ok();
  return engine::MakeError(
      "gemm_norm: n: expected a multiple of 64 up to 512 or of 128 up to "
      "1024 (a block holds bm x n fp32 accumulators), got " +
      Str(n));
}

// The compiled kWarpCols that runs `warp_cols` columns per warp at `bm` rows: the smallest
// width that holds them, if bm x width accumulators fit; 0 when none does.
int VariantWarpCols(int64_t bm, int64_t warp_cols) {
  if (warp_cols <= 0 || warp_cols % 16 != 0) return 0;
  for (int width : kWarpWidths) {
    if (warp_cols <= width) return bm * width <= kMaxAccProduct ? width : 0;
  }
  return 0;
}

// Whether the residual gets its own prefetched shared tile (GemmNormKernelParams). Only where
// the block is alone on its SM anyway: more than 64 accumulators a thread (bm x warp width >
// 2048) take more than 128 registers, so a second 8-warp block would not fit and nothing else
// hides the residual's load after the k loop. With <= 64 accumulators the extra tile could
// cost the second block per SM, whose k loop hides that load instead. And only if it fits.
bool UsePrefetch(const GemmNormArgs& args, const GemmNormParams& p, int64_t smem_optin_bytes) {
  if (args.residual == nullptr) return false;
  if (p.bm * VariantWarpCols(p.bm, args.n / p.warps) <= 2048) return false;
  return static_cast<int64_t>(detail::GemmNormSmemBytesFor(
             p.bm, p.bk, static_cast<int>(args.n), p.warps, p.stages, true)) <= smem_optin_bytes;
}

std::string ParamsName(const GemmNormParams& p) {
  return "{bm " + Str(p.bm) + ", bk " + Str(p.bk) + ", warps " + Str(p.warps) + ", stages " +
         Str(p.stages) + "}";
}

// The device's opt-in shared memory per block, queried once per device (index < 64).
engine::Expected<int> SmemOptin(int device) {
  static std::array<std::atomic<int>, 64> cache{};
  if (device >= 0 && device < 64) {
    const int known = cache[static_cast<size_t>(device)].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int bytes = 0;
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (device >= 0 && device < 64)
    cache[static_cast<size_t>(device)].store(bytes, std::memory_order_relaxed);
  return bytes;
}

}  // namespace

engine::Status CheckGemmNormArgs(const GemmNormArgs& args) {
  const std::string what = "gemm_norm: ";
  if (args.m < 1 || args.m > kMaxInt)
    return engine::MakeError(what + "m: expected 1 .. 2147483647 rows, got " + Str(args.m));
  STOF_RETURN_IF_ERROR(CheckN(args.n));
  if (args.k < 8 || args.k % 8 != 0 || args.k > kMaxInt) {
    return engine::MakeError(what +
                             "k: expected a positive multiple of 8 (16-byte rows of a) "
                             "below 2^31, got " +
                             Str(args.k));
  }
  struct Pointer {
    const char* name;
    const void* p;
    bool required;
    uintptr_t align;
    const char* why;
  };
  const Pointer pointers[] = {
      {"a", args.a, true, 16, "16-byte cp.async copies"},
      {"w", args.w, true, 16, "16-byte cp.async copies"},
      {"bias", args.bias, false, 4, "half2 loads"},
      {"residual", args.residual, false, 16, "16-byte cp.async copies"},
      {"gamma", args.gamma, true, 4, "half2 loads"},
      {"beta", args.beta, false, 4, "half2 loads"},
      {"out", args.out, true, 16, "16-byte stores"},
  };
  for (const Pointer& p : pointers) {
    if (p.p == nullptr) {
      if (p.required) return engine::MakeError(what + p.name + ": must not be null");
      continue;
    }
    if (!Aligned(p.p, p.align)) {
      return engine::MakeError(what + p.name + ": must be " + Str(static_cast<int64_t>(p.align)) +
                               "-byte aligned (" + p.why + ")");
    }
  }
  if (args.out == args.a)
    return engine::MakeError(what + "out: must not alias a (a is read until the last k step)");
  if (!std::isfinite(args.eps) || args.eps < 0.f) {
    return engine::MakeError(what + "eps: expected a finite value >= 0, got " +
                             std::to_string(args.eps));
  }
  return engine::Status::Ok();
}

int64_t GemmNormSmemBytes(int64_t n, const GemmNormParams& p) {
  if (!SupportedN(n) || (p.bm != 16 && p.bm != 32 && p.bm != 64) || (p.bk != 32 && p.bk != 64) ||
      (p.warps != 4 && p.warps != 8) || p.stages < 2 || p.stages > 4 || n % p.warps != 0 ||
      VariantWarpCols(p.bm, n / p.warps) == 0) {
    return 0;
  }
  return static_cast<int64_t>(
      detail::GemmNormSmemBytesFor(p.bm, p.bk, static_cast<int>(n), p.warps, p.stages, false));
}

engine::Status CheckGemmNormParams(const GemmNormArgs& args, const GemmNormParams& params,
                                   int64_t smem_optin_bytes) {
  // Runs on every launch: integer compares; messages are built only on failure.
  const std::string what = "gemm_norm: ";
  STOF_RETURN_IF_ERROR(CheckN(args.n));
  auto at = [&] { return " (params " + ParamsName(params) + ", n " + Str(args.n) + ")"; };
  if (params.bm != 16 && params.bm != 32 && params.bm != 64)
    return engine::MakeError(what + "params.bm: expected 16, 32 or 64, got " + Str(params.bm));
  if (params.bk != 32 && params.bk != 64)
    return engine::MakeError(what + "params.bk: expected 32 or 64, got " + Str(params.bk));
  if (params.warps != 4 && params.warps != 8)
    return engine::MakeError(what + "params.warps: expected 4 or 8, got " + Str(params.warps));
  if (params.stages < 2 || params.stages > 4) {
    return engine::MakeError(what + "params.stages: expected 2, 3 or 4, got " + Str(params.stages));
  }
  if (args.n % (16 * params.warps) != 0) {
    return engine::MakeError(what +
                             "params.warps: n / warps must be a multiple of 16 columns "
                             "(each warp takes whole 16-column blocks)" +
                             at());
  }
  if (VariantWarpCols(params.bm, args.n / params.warps) == 0) {
    return engine::MakeError(
        what + "params.warps: n / warps = " + Str(args.n / params.warps) +
        " columns per warp is more than a warp holds at bm " + Str(params.bm) +
        " (at most 128 columns, 64 at bm 64: bm x columns / 32 fp32 accumulators per thread "
        "must stay <= 128 registers); use more warps or a smaller bm" +
        at());
  }
  const int64_t smem = GemmNormSmemBytes(args.n, params);
  if (smem > smem_optin_bytes) {
    return engine::MakeError(what + "smem_optin_bytes: the setting needs " + Str(smem) +
                             " bytes of shared memory per block, the limit is " +
                             Str(smem_optin_bytes) +
                             "; use fewer stages, a smaller bk or a smaller bm" + at());
  }
  return engine::Status::Ok();
}

std::vector<GemmNormParams> SupportedGemmNormParams(int64_t n, int64_t k,
                                                    int64_t smem_optin_bytes) {
  // Preference order (the first is the default): more rows per block first (W is read from
  // L2 once per block: MMAs per byte grow with bm), 8 warps before 4 (more warps in flight
  // per block; with 128 or more registers a thread, one or two blocks fit an SM), bk 32
  // (smaller stages leave room for depth), then depth 3, 4, 2. bk 64 is left out when k <= 32
  // (one bk-32 step already covers k).
  std::vector<GemmNormParams> out;
  GemmNormArgs shape;
  shape.n = n;
  for (int bm : {64, 32, 16})
    for (int warps : {8, 4})
      for (int bk : {32, 64}) {
        if (bk > 32 && k <= 32) continue;
        for (int stages : {3, 4, 2}) {
          const GemmNormParams p{bm, bk, warps, stages};
          if (CheckGemmNormParams(shape, p, smem_optin_bytes).IsOk()) out.push_back(p);
        }
      }
  return out;
}

engine::Status LaunchGemmNorm(const GemmNormArgs& args, const GemmNormParams& params,
                              void* stream) {
  STOF_RETURN_IF_ERROR(CheckGemmNormArgs(args));
  int device = 0;
  STOF_CUDA_TRY(cudaGetDevice(&device));
  const engine::Expected<int> optin = SmemOptin(device);
  if (!optin.IsOk()) return optin.ToStatus();
  STOF_RETURN_IF_ERROR(CheckGemmNormParams(args, params, *optin));

  detail::GemmNormKernelParams p;
  p.a = args.a;
  p.w = args.w;
  p.bias = args.bias;
  p.residual = args.residual;
  p.gamma = args.gamma;
  p.beta = args.beta;
  p.out = args.out;
  p.m = static_cast<int>(args.m);
  p.n = static_cast<int>(args.n);
  p.k = static_cast<int>(args.k);
  p.bk = params.bk;
  p.stages = params.stages;
  p.warps = params.warps;
  p.warp_cols = p.n / p.warps;
  p.eps = args.eps;
  p.inv_n = 1.0f / static_cast<float>(p.n);
  p.prefetch_residual = UsePrefetch(args, params, *optin);
  const size_t smem = detail::GemmNormSmemBytesFor(params.bm, params.bk, p.n, params.warps,
                                                   params.stages, p.prefetch_residual);
  const int width = VariantWarpCols(params.bm, p.warp_cols);

  switch (params.bm * 1000 + width) {
    case 16064:
      return detail::LaunchGemmNormVariant<16, 64>(p, smem, device, *optin, stream);
    case 16096:
      return detail::LaunchGemmNormVariant<16, 96>(p, smem, device, *optin, stream);
    case 16128:
      return detail::LaunchGemmNormVariant<16, 128>(p, smem, device, *optin, stream);
    case 32064:
      return detail::LaunchGemmNormVariant<32, 64>(p, smem, device, *optin, stream);
    case 32096:
      return detail::LaunchGemmNormVariant<32, 96>(p, smem, device, *optin, stream);
    case 32128:
      return detail::LaunchGemmNormVariant<32, 128>(p, smem, device, *optin, stream);
    case 64064:
      return detail::LaunchGemmNormVariant<64, 64>(p, smem, device, *optin, stream);
    default:
      break;
  }
  // Unreachable after CheckGemmNormParams; kept as an error rather than a crash.
  return engine::MakeError("gemm_norm: no compiled variant for bm " + Str(params.bm) + " and " +
                           Str(p.warp_cols) + " columns per warp");
}

}  // namespace stof::kernels
