// The fused GEMM + bias + residual + LayerNorm / RMSNorm kernel (kernels/gemm_norm/) against
// the fp32 CPU reference: cpu::LinearEpilogue (the GEMM, accumulated in double) then
// cpu::BiasAddNorm (bias, residual, LayerNorm or RMSNorm). GPU tests (GpuGemmNorm.*) skip
// without a GPU; the argument and parameter checks (GemmNormChecks.*) touch no device and run
// everywhere.
// Method: fresh seeded inputs with a real layer's magnitudes (a, residual ~ U(-1, 1),
// w ~ U(-1, 1) / sqrt(k), bias ~ U(-0.1, 0.1), gamma ~ U(0.5, 1.5), beta ~ U(-0.5, 0.5)),
// rounded to fp16 on the host so the reference sees exactly what the GPU sees; the output
// poisoned (0xFF bytes = NaN) with kGuardRows poisoned rows past m that must stay untouched;
// no NaN/inf in the m rows; every row (sampled rows for m > 1024) within kRelTol |ref| +
// kAbsTol of the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device_buffer.h"
#include "engine/core/activation.h"
#include "engine/cpu/reference.h"
#include "gpu_test_util.h"
#include "kernels/gemm_norm/gemm_norm.h"
#include "kernels/util/finite_check.h"

namespace {

using stof::engine::Status;
using stof::kernels::GemmNormArgs;
using stof::kernels::GemmNormParams;
namespace st = stof::testing;

// Tolerance. The kernel's fp32 result differs from the double reference by ~1e-6 of the
// output scale (exact fp16 x fp16 products, fp32 sums over k <= 4096 of terms <= 1/sqrt(k),
// two-pass fp32 statistics, rsqrtf within 2 ulp); the output is then rounded to fp16, at most
// half an ulp = 2^-11 = 4.9e-4 of |y|. kRelTol = 1e-3 is twice that; kAbsTol covers outputs
// near zero, where the fp32 error times rstd (<= ~4 here) and gamma (<= 1.5) is ~1e-5. A
// wrong column, row, k step or statistic moves outputs by O(0.1 .. 1).
constexpr double kRelTol = 1e-3;
constexpr double kAbsTol = 2e-4;
constexpr int64_t kGuardRows = 2;       // poisoned rows after m that must stay poisoned
constexpr int64_t kAllRowsUpTo = 1024;  // larger m: the reference runs on sampled rows
constexpr uint16_t kPoison = 0xFFFF;    // PoisonBuffer's fp16 pattern (a NaN)

std::string Name(const GemmNormParams& p) {
  return "{bm " + std::to_string(p.bm) + ", bk " + std::to_string(p.bk) + ", warps " +
         std::to_string(p.warps) + ", stages " + std::to_string(p.stages) + "}";
}

// Host inputs: a and residual as fp16 bits only (converted per reference row, so m = 32768
// needs no float copy of them); w and the per-column vectors with their floats.
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  std::vector<uint16_t> a, residual;
  st::HalfVec w, bias, gamma, beta;
};

// Values uniform in [lo, hi) for st::RandomBits / st::RandomHalves.
auto Uniform(double lo, double hi) {
  return [lo, hi](double u) { return lo + (hi - lo) * u; };
}

Problem MakeProblem(int64_t m, int64_t n, int64_t k, uint64_t seed) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 7;
  const double ws = 1.0 / std::sqrt(static_cast<double>(k));
  p.a = st::RandomBits(m * k, state, Uniform(-1.0, 1.0));
  p.w = st::RandomHalves(k * n, state, Uniform(-ws, ws));
  p.bias = st::RandomHalves(n, state, Uniform(-0.1, 0.1));
  p.residual = st::RandomBits(m * n, state, Uniform(-1.0, 1.0));
  p.gamma = st::RandomHalves(n, state, Uniform(0.5, 1.5));
  p.beta = st::RandomHalves(n, state, Uniform(-0.5, 0.5));
  return p;
}

// Which inputs a run uses.
struct Mode {
  bool bias = true;
  bool residual = true;
  bool layer_norm = true;  // false: RMSNorm (beta = null)
  bool out_is_residual = false;
  float eps = 1e-5f;
};

std::string Name(const Mode& md) {
  std::string s = md.layer_norm ? "LayerNorm" : "RMSNorm";
  s += md.bias ? " +bias" : " no-bias";
  s += md.residual ? (md.out_is_residual ? " +residual (out == residual)" : " +residual")
                   : " no-residual";
  return s;
}

// All rows up to kAllRowsUpTo; beyond, the first 64, the last 64 and 128 spread between
// (every block position and the ragged last block are among them).
std::vector<int64_t> SampleRows(int64_t m) {
  std::vector<int64_t> rows;
  if (m <= kAllRowsUpTo) {
    for (int64_t r = 0; r < m; ++r) rows.push_back(r);
    return rows;
  }
  for (int64_t r = 0; r < 64; ++r) rows.push_back(r);
  for (int64_t i = 0; i < 128; ++i) rows.push_back(64 + (m - 128) * i / 128 + i % 7);
  for (int64_t r = m - 64; r < m; ++r) rows.push_back(r);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// The reference for `rows`: [rows.size(), n], one thread per slice of rows.
std::vector<float> Reference(const Problem& p, const Mode& md, const std::vector<int64_t>& rows) {
  const int64_t n = p.n, k = p.k;
  std::vector<float> ref(rows.size() * static_cast<size_t>(n));
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t per = (rows.size() + hw - 1) / hw;
  std::vector<std::thread> threads;
  for (size_t first = 0; first < rows.size(); first += per) {
    threads.emplace_back([&, first] {
      std::vector<float> a_row(static_cast<size_t>(k)), res_row(static_cast<size_t>(n)),
          x(static_cast<size_t>(n));
      for (size_t i = first; i < std::min(rows.size(), first + per); ++i) {
        const int64_t r = rows[i];
        for (int64_t c = 0; c < k; ++c)
          a_row[static_cast<size_t>(c)] = st::HalfToFloat(p.a[static_cast<size_t>(r * k + c)]);
        for (int64_t c = 0; c < n; ++c)
          res_row[static_cast<size_t>(c)] =
              st::HalfToFloat(p.residual[static_cast<size_t>(r * n + c)]);
        stof::engine::cpu::LinearEpilogue(a_row.data(), p.w.f.data(), nullptr,
                                          stof::engine::Activation::kNone, nullptr, x.data(), 1, n,
                                          k);
        stof::engine::cpu::BiasAddNorm(x.data(), md.bias ? p.bias.f.data() : nullptr,
                                       md.residual ? res_row.data() : nullptr, p.gamma.f.data(),
                                       md.layer_norm ? p.beta.f.data() : nullptr,
                                       ref.data() + i * static_cast<size_t>(n), 1, n, md.eps);
      }
    });
  }
  for (auto& t : threads) t.join();
  return ref;
}

// Device copies of a Problem; out has kGuardRows extra rows. Ok(): all allocated and uploaded.
struct DeviceProblem {
  explicit DeviceProblem(const Problem& p)
      : a(p.a.size() * 2), w(p.w.Bytes()), bias(p.bias.Bytes()), residual(p.residual.size() * 2),
        gamma(p.gamma.Bytes()), beta(p.beta.Bytes()),
        out(static_cast<size_t>((p.m + kGuardRows) * p.n) * 2) {
    ok = a.Upload(p.a).IsOk() && w.Upload(p.w).IsOk() && bias.Upload(p.bias).IsOk() &&
         residual.Upload(p.residual).IsOk() && gamma.Upload(p.gamma).IsOk() &&
         beta.Upload(p.beta).IsOk() && out.Ok();
  }
  bool Ok() const { return ok; }

  st::DeviceBuffer a, w, bias, residual, gamma, beta, out;
  bool ok = false;
};

int64_t SmemOptin() { return st::SharedBackend()->Device().smem_per_block_bytes; }

// One checked run of `params` in mode `md`; `ref` holds the reference for `rows`.
void RunAndCheck(const Problem& p, DeviceProblem& d, const GemmNormParams& params, const Mode& md,
                 const std::vector<int64_t>& rows, const std::vector<float>& ref) {
  const size_t n = static_cast<size_t>(p.n);
  const size_t out_elems = static_cast<size_t>(p.m + kGuardRows) * n;
  const std::string what = "m " + std::to_string(p.m) + ", n " + std::to_string(p.n) + ", k " +
                           std::to_string(p.k) + ", " + Name(md) + ", params " + Name(params);
  SCOPED_TRACE(what);

  ASSERT_TRUE(d.out.Poison().IsOk());
  if (md.out_is_residual) {  // out starts as the residual; the guard rows stay poisoned
    ASSERT_TRUE(d.out.Upload(p.residual).IsOk());
  }
  GemmNormArgs args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.a = d.a.Ptr();
  args.w = d.w.Ptr();
  args.bias = md.bias ? d.bias.Ptr() : nullptr;
  args.residual = md.residual ? (md.out_is_residual ? d.out.Ptr() : d.residual.Ptr()) : nullptr;
  args.gamma = d.gamma.Ptr();
  args.beta = md.layer_norm ? d.beta.Ptr() : nullptr;
  args.eps = md.eps;
  args.out = d.out.Ptr();
  const Status launched = stof::kernels::LaunchGemmNorm(args, params, nullptr);
  ASSERT_TRUE(launched.IsOk()) << launched.Message();
  const Status sync = st::SharedBackend()->Synchronize();
  ASSERT_TRUE(sync.IsOk()) << sync.Message();

  auto bad = stof::kernels::CountNonFinite(d.out.Ptr(), p.m * p.n, stof::engine::DType::kF16);
  ASSERT_TRUE(bad.IsOk()) << bad.Message();
  EXPECT_EQ(*bad, 0) << "NaN/inf or unwritten (still poisoned) outputs among the m rows";

  auto out = d.out.Download(static_cast<int64_t>(out_elems));
  ASSERT_TRUE(out.IsOk()) << out.Message();
  int64_t guard_written = 0;
  for (size_t i = static_cast<size_t>(p.m) * n; i < out_elems; ++i)
    guard_written += (*out)[i] != kPoison;
  EXPECT_EQ(guard_written, 0) << "the kernel wrote past row m - 1";

  // The checked rows side by side, against their reference rows.
  std::vector<uint16_t> checked(rows.size() * n);
  for (size_t i = 0; i < rows.size(); ++i)
    std::copy_n(out->data() + static_cast<size_t>(rows[i]) * n, n, checked.data() + i * n);
  st::ExpectClose(st::CompareHalves(checked, ref, kRelTol, kAbsTol), p.n,
                  "|out - ref| <= kRelTol |ref| + kAbsTol", rows);
}

// Inputs, device copies and references (per mode) for one shape.
struct Case {
  explicit Case(int64_t m, int64_t n, int64_t k, uint64_t seed)
      : problem(MakeProblem(m, n, k, seed)), rows(SampleRows(m)), device(problem) {}
  void Run(const GemmNormParams& params, const Mode& md) {
    const std::string key = Name(md) + std::to_string(md.eps);
    auto it = std::find(ref_keys.begin(), ref_keys.end(), key);
    if (it == ref_keys.end()) {
      ref_keys.push_back(key);
      refs.push_back(Reference(problem, md, rows));
      it = ref_keys.end() - 1;
    }
    RunAndCheck(problem, device, params, md, rows,
                refs[static_cast<size_t>(it - ref_keys.begin())]);
  }
  Problem problem;
  std::vector<int64_t> rows;
  DeviceProblem device;
  std::vector<std::string> ref_keys;
  std::vector<std::vector<float>> refs;
};

// The first supported setting of each bm, the default (first) and the last: a subset that
// covers every bm and both ends of the preference order.
std::vector<GemmNormParams> SubsetOf(const std::vector<GemmNormParams>& all) {
  std::vector<GemmNormParams> out;
  auto add = [&](const GemmNormParams& p) {
    for (const auto& q : out)
      if (q.bm == p.bm && q.bk == p.bk && q.warps == p.warps && q.stages == p.stages) return;
    out.push_back(p);
  };
  if (all.empty()) return out;
  add(all.front());
  for (int bm : {16, 32, 64}) {
    for (const auto& p : all) {
      if (p.bm == bm) {
        add(p);
        break;
      }
    }
  }
  add(all.back());
  return out;
}

#define STOF_REQUIRE_BACKEND()                                                            \
  do {                                                                                    \
    STOF_REQUIRE_GPU();                                                                   \
    ASSERT_NE(st::SharedBackend(), nullptr) << "a GPU is present but CudaBackend failed"; \
  } while (0)

}  // namespace

// Every supported setting at BERT-base's out-projection shape, LayerNorm with bias and
// residual, and RMSNorm with neither.
TEST(GpuGemmNorm, EverySupportedParamsAtBertBase) {
  STOF_REQUIRE_BACKEND();
  const auto all = stof::kernels::SupportedGemmNormParams(768, 768, SmemOptin());
  ASSERT_FALSE(all.empty()) << "no supported setting for n 768 with " << SmemOptin()
                            << " bytes of shared memory";
  Case c(512, 768, 768, 1);
  ASSERT_TRUE(c.device.Ok());
  Mode rms;
  rms.bias = false;
  rms.residual = false;
  rms.layer_norm = false;
  rms.eps = 1e-6f;
  for (const auto& params : all) {
    c.Run(params, Mode{});
    c.Run(params, rms);
  }
}

// The other hidden sizes with FFN-down depths (k 3072, 4096): a subset of the settings.
TEST(GpuGemmNorm, WideAndDeep) {
  STOF_REQUIRE_BACKEND();
  for (int64_t n : {512, 1024}) {
    for (int64_t k : {3072, 4096}) {
      const auto subset = SubsetOf(stof::kernels::SupportedGemmNormParams(n, k, SmemOptin()));
      ASSERT_FALSE(subset.empty()) << "n " << n;
      Case c(200, n, k, static_cast<uint64_t>(n + k));
      ASSERT_TRUE(c.device.Ok());
      Mode rms;
      rms.layer_norm = false;
      for (const auto& params : subset) {
        c.Run(params, Mode{});
        c.Run(params, rms);
      }
    }
  }
}

// Ragged m: one row, a partial second block, and many blocks with a partial last one; the
// guard rows past m must stay poisoned.
TEST(GpuGemmNorm, RaggedRows) {
  STOF_REQUIRE_BACKEND();
  const auto subset = SubsetOf(stof::kernels::SupportedGemmNormParams(768, 1024, SmemOptin()));
  for (int64_t m : {1, 33, 1000}) {
    Case c(m, 768, 1024, static_cast<uint64_t>(m));
    ASSERT_TRUE(c.device.Ok());
    Mode rms;
    rms.layer_norm = false;
    for (const auto& params : subset) {
      c.Run(params, Mode{});
      c.Run(params, rms);
    }
  }
}

// Bias and residual present or absent, with both norms.
TEST(GpuGemmNorm, OptionalBiasAndResidual) {
  STOF_REQUIRE_BACKEND();
  const auto all = stof::kernels::SupportedGemmNormParams(512, 512, SmemOptin());
  ASSERT_FALSE(all.empty());
  Case c(100, 512, 512, 5);
  ASSERT_TRUE(c.device.Ok());
  for (bool layer_norm : {true, false})
    for (bool bias : {true, false})
      for (bool residual : {true, false}) {
        Mode md;
        md.layer_norm = layer_norm;
        md.bias = bias;
        md.residual = residual;
        c.Run(all.front(), md);
        c.Run(all.back(), md);
      }
}

// out == residual (the in-place residual stream of a transformer layer).
TEST(GpuGemmNorm, OutAliasesResidual) {
  STOF_REQUIRE_BACKEND();
  for (int64_t n : {768, 1024}) {
    const auto subset = SubsetOf(stof::kernels::SupportedGemmNormParams(n, 768, SmemOptin()));
    Case c(77, n, 768, static_cast<uint64_t>(n) + 3);
    ASSERT_TRUE(c.device.Ok());
    for (const auto& params : subset) {
      Mode md;
      md.out_is_residual = true;
      c.Run(params, md);
      md.layer_norm = false;
      c.Run(params, md);
    }
  }
}

// Widths that leave part of a warp's compiled column range unused (n 64: 16 of 64 columns;
// 384 at 8 warps: 48 of 64; 640: 80 of 96; 896: 112 of 128) and k that is not a multiple of
// bk (the zero-filled k tail): every supported setting.
TEST(GpuGemmNorm, PartialWarpWidthsAndKTail) {
  STOF_REQUIRE_BACKEND();
  for (int64_t n : {64, 384, 640, 896}) {
    for (int64_t k : {72, 200}) {
      const auto all = stof::kernels::SupportedGemmNormParams(n, k, SmemOptin());
      ASSERT_FALSE(all.empty()) << "n " << n;
      Case c(45, n, k, static_cast<uint64_t>(n * 10 + k));
      ASSERT_TRUE(c.device.Ok());
      for (const auto& params : all) c.Run(params, Mode{});
    }
  }
}

// Large m (many waves of blocks): sampled rows against the reference.
TEST(GpuGemmNorm, LargeM) {
  STOF_REQUIRE_BACKEND();
  const auto all = stof::kernels::SupportedGemmNormParams(768, 3072, SmemOptin());
  ASSERT_FALSE(all.empty());
  Case c(32768 - 5, 768, 3072, 9);
  ASSERT_TRUE(c.device.Ok());
  for (const auto& params : SubsetOf(all)) c.Run(params, Mode{});
}

// LaunchGemmNorm checks the parameters against the device's own shared-memory limit.
TEST(GpuGemmNorm, LaunchRejectsUnsupportedParams) {
  STOF_REQUIRE_BACKEND();
  GemmNormArgs args;  // valid shape; nothing is launched, so no buffers are needed
  args.m = 64;
  args.n = 768;
  args.k = 768;
  args.a = args.w = args.gamma = reinterpret_cast<void*>(0x10000);
  args.out = reinterpret_cast<void*>(0x20000);
  const auto launch = [&](GemmNormParams p) {
    return stof::kernels::LaunchGemmNorm(args, p, nullptr);
  };
  for (const auto& [params, field] :
       std::vector<std::pair<GemmNormParams, std::string>>{{{48, 32, 8, 2}, "params.bm"},
                                                           {{32, 48, 8, 2}, "params.bk"},
                                                           {{32, 32, 6, 2}, "params.warps"},
                                                           {{32, 32, 4, 2}, "params.warps"},
                                                           {{32, 32, 8, 7}, "params.stages"},
                                                           {{32, 64, 8, 4}, "smem_optin_bytes"}}) {
    const Status s = launch(params);
    ASSERT_FALSE(s.IsOk()) << Name(params);
    EXPECT_NE(s.Message().find("gemm_norm: " + field + ":"), std::string::npos) << s.Message();
  }
}

// ---- Checks: no device needed (the pointers are never dereferenced). ----

namespace {

void* Fake(uintptr_t address) { return reinterpret_cast<void*>(address); }

GemmNormArgs ValidArgs() {
  GemmNormArgs a;
  a.m = 1000;
  a.n = 768;
  a.k = 3072;
  a.a = Fake(0x10000);
  a.w = Fake(0x20000);
  a.bias = Fake(0x30000);
  a.residual = Fake(0x40000);
  a.gamma = Fake(0x50000);
  a.beta = Fake(0x60000);
  a.out = Fake(0x70000);
  return a;
}

void ExpectError(const Status& s, const std::string& field) {
  ASSERT_FALSE(s.IsOk()) << "expected an error naming " << field;
  EXPECT_NE(s.Message().find("gemm_norm: " + field + ":"), std::string::npos) << s.Message();
}

constexpr int64_t kH100Optin = 227 * 1024;

}  // namespace

TEST(GemmNormChecks, ValidArgsPass) {
  const Status s = stof::kernels::CheckGemmNormArgs(ValidArgs());
  EXPECT_TRUE(s.IsOk()) << s.Message();
  GemmNormArgs rms = ValidArgs();
  rms.beta = nullptr;
  rms.bias = nullptr;
  rms.residual = nullptr;
  EXPECT_TRUE(stof::kernels::CheckGemmNormArgs(rms).IsOk());
  GemmNormArgs in_place = ValidArgs();
  in_place.out = const_cast<void*>(in_place.residual);
  EXPECT_TRUE(stof::kernels::CheckGemmNormArgs(in_place).IsOk());
  for (int64_t n : {64, 256, 384, 512, 640, 768, 896, 1024}) {
    GemmNormArgs a = ValidArgs();
    a.n = n;
    EXPECT_TRUE(stof::kernels::CheckGemmNormArgs(a).IsOk()) << "n " << n;
  }
}

TEST(GemmNormChecks, BadArgsNameTheField) {
  using stof::kernels::CheckGemmNormArgs;
  auto with = [](auto change) {
    GemmNormArgs a = ValidArgs();
    change(a);
    return CheckGemmNormArgs(a);
  };
  ExpectError(with([](GemmNormArgs& a) { a.m = 0; }), "m");
  ExpectError(with([](GemmNormArgs& a) { a.m = -3; }), "m");
  ExpectError(with([](GemmNormArgs& a) { a.m = int64_t{1} << 31; }), "m");
  for (int64_t n : {0, -64, 32, 100, 576, 960, 1152, 2048}) {
    ExpectError(with([n](GemmNormArgs& a) { a.n = n; }), "n");
  }
  for (int64_t k : {int64_t{0}, int64_t{-8}, int64_t{4}, int64_t{100}, int64_t{1} << 31}) {
    ExpectError(with([k](GemmNormArgs& a) { a.k = k; }), "k");
  }
  ExpectError(with([](GemmNormArgs& a) { a.a = nullptr; }), "a");
  ExpectError(with([](GemmNormArgs& a) { a.w = nullptr; }), "w");
  ExpectError(with([](GemmNormArgs& a) { a.gamma = nullptr; }), "gamma");
  ExpectError(with([](GemmNormArgs& a) { a.out = nullptr; }), "out");
  ExpectError(with([](GemmNormArgs& a) { a.a = Fake(0x10008); }), "a");
  ExpectError(with([](GemmNormArgs& a) { a.w = Fake(0x20002); }), "w");
  ExpectError(with([](GemmNormArgs& a) { a.residual = Fake(0x40004); }), "residual");
  ExpectError(with([](GemmNormArgs& a) { a.bias = Fake(0x30002); }), "bias");
  ExpectError(with([](GemmNormArgs& a) { a.gamma = Fake(0x50002); }), "gamma");
  ExpectError(with([](GemmNormArgs& a) { a.beta = Fake(0x60002); }), "beta");
  ExpectError(with([](GemmNormArgs& a) { a.out = Fake(0x70008); }), "out");
  ExpectError(with([](GemmNormArgs& a) { a.out = const_cast<void*>(a.a); }), "out");
  ExpectError(with([](GemmNormArgs& a) { a.eps = -1e-5f; }), "eps");
  ExpectError(with([](GemmNormArgs& a) { a.eps = std::nanf(""); }), "eps");
  ExpectError(with([](GemmNormArgs& a) { a.eps = INFINITY; }), "eps");
}

TEST(GemmNormChecks, BadParamsNameTheField) {
  using stof::kernels::CheckGemmNormParams;
  const GemmNormArgs args = ValidArgs();  // n 768
  auto with = [&](auto change, const GemmNormArgs& a = ValidArgs()) {
    GemmNormParams p{32, 32, 8, 3};
    change(p);
    return CheckGemmNormParams(a, p, kH100Optin);
  };
  EXPECT_TRUE(with([](GemmNormParams&) {}).IsOk());
  ExpectError(with([](GemmNormParams& p) { p.bm = 48; }), "params.bm");
  ExpectError(with([](GemmNormParams& p) { p.bm = 128; }), "params.bm");
  ExpectError(with([](GemmNormParams& p) { p.bk = 16; }), "params.bk");
  ExpectError(with([](GemmNormParams& p) { p.bk = 128; }), "params.bk");
  ExpectError(with([](GemmNormParams& p) { p.warps = 2; }), "params.warps");
  ExpectError(with([](GemmNormParams& p) { p.warps = 16; }), "params.warps");
  ExpectError(with([](GemmNormParams& p) { p.stages = 1; }), "params.stages");
  ExpectError(with([](GemmNormParams& p) { p.stages = 5; }), "params.stages");
  // n 768 at 4 warps: 192 columns a warp, more than its registers hold at any bm.
  ExpectError(with([](GemmNormParams& p) { p.warps = 4; }), "params.warps");
  // bm 64 holds at most 64 columns a warp: n 768 / 8 = 96.
  ExpectError(with([](GemmNormParams& p) { p.bm = 64; }), "params.warps");
  // n 384 at 8 warps is 48 columns (fine), at 4 warps 96 (fine); n 640 at 4 warps is 160.
  GemmNormArgs n640 = ValidArgs();
  n640.n = 640;
  ExpectError(with([](GemmNormParams& p) { p.warps = 4; }, n640), "params.warps");
  // Shared memory: bk 64 with 3 stages at n 768 needs more than an H100 block may use.
  ExpectError(with([](GemmNormParams& p) { p.bk = 64; }), "smem_optin_bytes");
  ExpectError(CheckGemmNormParams(args, GemmNormParams{16, 32, 8, 2}, 48 * 1024),
              "smem_optin_bytes");
  // An unsupported n is reported as such, not as a parameter problem.
  GemmNormArgs bad_n = ValidArgs();
  bad_n.n = 1000;
  ExpectError(CheckGemmNormParams(bad_n, GemmNormParams{}, kH100Optin), "n");
}

TEST(GemmNormChecks, SupportedListIsValidAndOrdered) {
  for (int64_t n : {64, 256, 384, 512, 640, 768, 896, 1024}) {
    for (int64_t k : {64, 768, 4096}) {
      const auto all = stof::kernels::SupportedGemmNormParams(n, k, kH100Optin);
      ASSERT_FALSE(all.empty()) << "n " << n << " k " << k;
      GemmNormArgs args = ValidArgs();
      args.n = n;
      args.k = k;
      for (const auto& p : all) {
        const Status s = stof::kernels::CheckGemmNormParams(args, p, kH100Optin);
        EXPECT_TRUE(s.IsOk()) << s.Message();
        EXPECT_GT(stof::kernels::GemmNormSmemBytes(n, p), 0);
        EXPECT_LE(stof::kernels::GemmNormSmemBytes(n, p), kH100Optin);
      }
      for (size_t i = 1; i < all.size(); ++i)
        EXPECT_LE(all[i].bm, all[i - 1].bm) << "more rows per block first";
    }
  }
  // The defaults at the transformer widths on an H100 (227 KiB per block).
  auto first = [](int64_t n) {
    return stof::kernels::SupportedGemmNormParams(n, 768, kH100Optin).front();
  };
  EXPECT_EQ(Name(first(768)), Name(GemmNormParams{32, 32, 8, 3}));
  EXPECT_EQ(Name(first(1024)), Name(GemmNormParams{32, 32, 8, 3}));
  EXPECT_EQ(Name(first(512)), Name(GemmNormParams{64, 32, 8, 3}));
  // Unsupported n, or too little shared memory: nothing.
  EXPECT_TRUE(stof::kernels::SupportedGemmNormParams(1000, 768, kH100Optin).empty());
  EXPECT_TRUE(stof::kernels::SupportedGemmNormParams(768, 768, 16 * 1024).empty());
  // Less shared memory drops only settings, never adds one.
  EXPECT_LT(stof::kernels::SupportedGemmNormParams(768, 768, 100 * 1024).size(),
            stof::kernels::SupportedGemmNormParams(768, 768, kH100Optin).size());
}

// LaunchGemmNorm validates before it touches the device, so bad input fails the same way with
// or without a GPU.
TEST(GemmNormChecks, LaunchRejectsBadArgsBeforeTheDevice) {
  GemmNormArgs a = ValidArgs();
  a.gamma = nullptr;
  ExpectError(stof::kernels::LaunchGemmNorm(a, GemmNormParams{}, nullptr), "gamma");
  a = ValidArgs();
  a.n = 1000;
  ExpectError(stof::kernels::LaunchGemmNorm(a, GemmNormParams{}, nullptr), "n");
  a = ValidArgs();
  a.m = 0;
  ExpectError(stof::kernels::LaunchGemmNorm(a, GemmNormParams{}, nullptr), "m");
}
