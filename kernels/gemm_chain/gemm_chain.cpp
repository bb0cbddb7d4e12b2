// Host side of the mhnk GEMM-chain kernel (gemm_chain.h): argument and parameter checks, the
// supported list with its default ordering, the shared-memory formula, and the dispatch of a
// run-time GemmChainParams to the explicit instantiations (gemm_chain_a.cu, gemm_chain_b.cu)
// through its index in kGemmChainTiles.
#include "kernels/gemm_chain/gemm_chain.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/text_format.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_chain/gemm_chain_configs.h"

namespace stof::kernels {

namespace {

constexpr const char* kWhat = "gemm_chain: ";
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();  // dims are ints in the kernel
constexpr int64_t kMaxGridYZ = 65535;

using engine::Str;

engine::Error Fail(const std::string& field, const std::string& rule) {
  return engine::MakeError(std::string(kWhat) + field + ": " + rule);
}

bool Aligned(const void* p, uintptr_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// n, k, h: positive multiples of 16 that fit an int.
engine::Status CheckDim16(const char* field, int64_t v) {
  if (v <= 0 || v % 16 != 0 || v > kMaxDim)
    return Fail(field, "expected a positive multiple of 16 (at most 2^31 - 1), got " + Str(v));
  return engine::Status::Ok();
}

engine::Status CheckMatrix(const char* field, const void* p) {
  if (p == nullptr) return Fail(field, "must not be null");
  if (!Aligned(p, 16)) return Fail(field, "must be 16-byte aligned (cp.async / 16-byte stores)");
  return engine::Status::Ok();
}

// -1 (packed), 0 (shared, inputs only unless batch == 1), or a multiple of 8 (batches stay
// 16-byte aligned) at least the matrix's size (batches do not overlap).
engine::Status CheckStride(const char* field, int64_t stride, int64_t size, bool allow_shared) {
  if (stride == -1) return engine::Status::Ok();
  if (stride == 0) {
    if (allow_shared) return engine::Status::Ok();
    return Fail(field, "0 (one matrix for every batch) is only allowed for inputs or batch = 1");
  }
  if (stride < 0 || stride % 8 != 0 || stride < size) {
    return Fail(field, "expected -1 (packed), 0 (shared) or a multiple of 8 of at least " +
                           Str(size) + " elements, got " + Str(stride));
  }
  return engine::Status::Ok();
}

// Everything of CheckGemmChainArgs but the buffers: what SupportedGemmChainParams needs (a
// tuner enumerates before it allocates).
int TileIndex(const GemmChainParams& p) {
  for (int i = 0; i < detail::kGemmChainTileCount; ++i)
    if (detail::kGemmChainTiles[i] == p) return i;
  return -1;
}

std::string InstantiatedList() {
  std::string s;
  for (const GemmChainParams& p : detail::kGemmChainTiles)
    s += (s.empty() ? "" : ", ") + GemmChainParamsName(p);
  return s;
}

// The default order of SupportedGemmChainParams: a crude estimate of the busiest SM's time, in
// flop-equivalents. Per block the largest of three limits: its tensor flops (GEMM 1 over the
// padded n x k, GEMM 2 over its bh columns); its L2 -> shared traffic (A once per n tile
// unless the k loop has extent 1, B, D, E once) times the flops one byte of L2 bandwidth costs;
// and its (n, k) iterations times one L2 round trip (the two-stage pipeline hides at most one
// load behind one iteration's compute, and on MCFuser's small shapes an iteration computes
// for less than a round trip). Times the blocks per SM with the grid spread over kSms.
// The constants are assumptions, not measurements: an H100 SXM's 132 SMs at ~5 TFLOP/s each
// with mma.sync (about 2/3 of the 989 TFLOP/s data sheet); L2 bandwidth per SM the smaller of
// its port (~40 flops per byte) and its share of the ~5.5-7 TB/s usually quoted for the whole
// L2 when every SM streams (~100 flops per byte); a round trip of ~0.4 us (2e6 flops). The
// tuner measures; this only orders the candidates so that the first is a sensible default.
double RoughCost(const GemmChainArgs& a, const GemmChainParams& p) {
  constexpr double kSms = 132;
  constexpr double kPortFlopPerByte = 40, kSharedFlopPerByte = 100;
  constexpr double kIterationFlops = 2e6;
  const double nt = static_cast<double>(CeilDiv(a.n, p.bn));
  const double kt = static_cast<double>(CeilDiv(a.k, p.bk));
  const double bm = p.bm, bn = p.bn, bk = p.bk, bh = p.bh;
  const double flops = 2 * bm * nt * bn * kt * bk + 2 * bm * nt * bn * bh;
  const double a_loads = kt == 1 ? 1 : nt * kt;
  const double bytes = 2 * (a_loads * bm * bk + nt * kt * bk * bn + nt * bn * bh + bm * bh);
  const double blocks = static_cast<double>(CeilDiv(a.m, p.bm) * CeilDiv(a.h, p.bh) * a.batch);
  const double active = std::min(blocks, kSms);
  const double flop_per_byte = std::max(kPortFlopPerByte, kSharedFlopPerByte * active / kSms);
  const double per_block =
      std::max({flops, flop_per_byte * bytes, kIterationFlops * nt * kt});
  return std::ceil(blocks / kSms) * per_block;
}

using LaunchFn = engine::Status (*)(const detail::GemmChainKernelParams&, int64_t, int, void*);

template <size_t... I>
constexpr std::array<LaunchFn, sizeof...(I)> MakeLaunchers(std::index_sequence<I...>) {
  return {&detail::LaunchGemmChainConfig<static_cast<int>(I)>...};
}

constexpr auto kLaunchers =
    MakeLaunchers(std::make_index_sequence<static_cast<size_t>(detail::kGemmChainTileCount)>{});

}  // namespace

std::string GemmChainParamsName(const GemmChainParams& p) {
  return Str(p.bm) + "x" + Str(p.bn) + "x" + Str(p.bk) + "x" + Str(p.bh) + "/" + Str(p.warps) +
         "w";
}

engine::Status CheckGemmChainShape(const GemmChainArgs& a) {
  if (a.batch < 1 || a.batch > kMaxGridYZ)
    return Fail("batch", "expected 1 to 65535 (the grid's z extent), got " + Str(a.batch));
  if (a.m < 1 || a.m > kMaxDim) return Fail("m", "expected 1 to 2^31 - 1 rows, got " + Str(a.m));
  STOF_RETURN_IF_ERROR(CheckDim16("n", a.n));
  STOF_RETURN_IF_ERROR(CheckDim16("k", a.k));
  STOF_RETURN_IF_ERROR(CheckDim16("h", a.h));
  if (a.act != engine::Activation::kNone && a.act != engine::Activation::kGelu &&
      a.act != engine::Activation::kRelu) {
    return Fail("act", "expected none, gelu or relu, got value " + Str(static_cast<int64_t>(a.act)));
  }
  STOF_RETURN_IF_ERROR(CheckStride("stride_a", a.stride_a, a.m * a.k, true));
  STOF_RETURN_IF_ERROR(CheckStride("stride_b", a.stride_b, a.k * a.n, true));
  STOF_RETURN_IF_ERROR(CheckStride("stride_d", a.stride_d, a.n * a.h, true));
  STOF_RETURN_IF_ERROR(CheckStride("stride_e", a.stride_e, a.m * a.h, a.batch == 1));
  return engine::Status::Ok();
}

engine::Status CheckGemmChainArgs(const GemmChainArgs& a) {
  STOF_RETURN_IF_ERROR(CheckGemmChainShape(a));
  STOF_RETURN_IF_ERROR(CheckMatrix("a", a.a));
  STOF_RETURN_IF_ERROR(CheckMatrix("b", a.b));
  STOF_RETURN_IF_ERROR(CheckMatrix("d", a.d));
  STOF_RETURN_IF_ERROR(CheckMatrix("e", a.e));
  if (a.bias1 != nullptr && !Aligned(a.bias1, 2))
    return Fail("bias1", "must be 2-byte aligned (fp16)");
  if (a.bias2 != nullptr && !Aligned(a.bias2, 2))
    return Fail("bias2", "must be 2-byte aligned (fp16)");
  return engine::Status::Ok();
}

engine::Status CheckGemmChainParams(const GemmChainArgs& a, const GemmChainParams& p,
                                    int64_t smem_optin_bytes) {
  const std::pair<const char*, int> tiles[] = {
      {"params.bm", p.bm}, {"params.bn", p.bn}, {"params.bk", p.bk}, {"params.bh", p.bh}};
  for (const auto& [field, v] : tiles) {
    if (v <= 0 || v % 16 != 0) return Fail(field, "expected a positive multiple of 16, got " + Str(v));
  }
  if (p.warps != 4 && p.warps != 8) return Fail("params.warps", "expected 4 or 8, got " + Str(p.warps));
  if (TileIndex(p) < 0) {
    return Fail("params", GemmChainParamsName(p) + " (bm x bn x bk x bh / warps) is not "
                          "instantiated; instantiated: " + InstantiatedList());
  }
  const int64_t m16 = CeilDiv(std::max<int64_t>(a.m, 1), 16) * 16;
  if (p.bm > m16) {
    return Fail("params.bm", Str(p.bm) + " is larger than m = " + Str(a.m) +
                                 " rounded up to a multiple of 16 (" + Str(m16) + ")");
  }
  if (p.bn > a.n) return Fail("params.bn", Str(p.bn) + " is larger than n = " + Str(a.n));
  if (p.bk > a.k) return Fail("params.bk", Str(p.bk) + " is larger than k = " + Str(a.k));
  if (p.bh > a.h) return Fail("params.bh", Str(p.bh) + " is larger than h = " + Str(a.h));
  if (CeilDiv(a.h, p.bh) > kMaxGridYZ) {
    return Fail("params.bh", "ceil(h / bh) = " + Str(CeilDiv(a.h, p.bh)) +
                                 " exceeds the grid's y limit 65535");
  }
  const int64_t smem = GemmChainSharedBytes(p);
  if (smem > smem_optin_bytes) {
    return Fail("params", GemmChainParamsName(p) + " needs " + Str(smem) +
                              " bytes of shared memory per block, the limit is " +
                              Str(smem_optin_bytes));
  }
  return engine::Status::Ok();
}

const std::vector<GemmChainParams>& AllGemmChainParams() {
  static const std::vector<GemmChainParams> all(std::begin(detail::kGemmChainTiles),
                                                std::end(detail::kGemmChainTiles));
  return all;
}

std::vector<GemmChainParams> SupportedGemmChainParams(const GemmChainArgs& args,
                                                      int64_t smem_optin_bytes) {
  std::vector<GemmChainParams> out;
  if (!CheckGemmChainShape(args).IsOk()) return out;  // buffers may still be unset while tuning
  for (const GemmChainParams& p : detail::kGemmChainTiles)
    if (CheckGemmChainParams(args, p, smem_optin_bytes).IsOk()) out.push_back(p);
  std::stable_sort(out.begin(), out.end(), [&](const GemmChainParams& x, const GemmChainParams& y) {
    return RoughCost(args, x) < RoughCost(args, y);
  });
  return out;
}

int64_t GemmChainSharedBytes(const GemmChainParams& p) {
  if (!detail::GemmChainParamsWellFormed(p)) return 0;
  return detail::GemmChainLayoutFor(p).bytes;
}

engine::Status LaunchGemmChain(const GemmChainArgs& a, const GemmChainParams& p, void* stream) {
  STOF_RETURN_IF_ERROR(CheckGemmChainArgs(a));
  int device = 0, smem_optin = 0;
  STOF_CUDA_TRY(cudaGetDevice(&device));
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  STOF_RETURN_IF_ERROR(CheckGemmChainParams(a, p, smem_optin));

  detail::GemmChainKernelParams k;
  k.a = a.a;
  k.b = a.b;
  k.d = a.d;
  k.e = a.e;
  k.bias1 = a.bias1;
  k.bias2 = a.bias2;
  auto resolve = [&](int64_t stride, int64_t packed) {
    return a.batch == 1 ? 0 : (stride == -1 ? packed : stride);
  };
  k.stride_a = resolve(a.stride_a, a.m * a.k);
  k.stride_b = resolve(a.stride_b, a.k * a.n);
  k.stride_d = resolve(a.stride_d, a.n * a.h);
  k.stride_e = resolve(a.stride_e, a.m * a.h);
  k.m = static_cast<int>(a.m);
  k.n = static_cast<int>(a.n);
  k.k = static_cast<int>(a.k);
  k.h = static_cast<int>(a.h);
  k.k_tiles = static_cast<int>(CeilDiv(a.k, p.bk));
  k.n_tiles = static_cast<int>(CeilDiv(a.n, p.bn));
  k.act = a.act;
  return kLaunchers[static_cast<size_t>(TileIndex(p))](k, a.batch, device, stream);
}

}  // namespace stof::kernels
