// GPU: LaunchBiasAddNorm (kernels/norm/norm_kernels.h), y = Norm(x + bias + residual) with
// LayerNorm or RMSNorm, against engine::cpu::BiasAddNorm (fp32 sum, double statistics).
// Matrix: rows {1, 3, 257, 4096} x cols {64, 512, 768, 1000, 1001 (ragged: scalar path), 1024,
// 4096} x {LayerNorm, RMSNorm} at the default params; every SupportedNormParams setting for
// cols 768 (and 64, 512, 1000, 1001, 1024, 4096); bias and residual null/present; in place
// (out == x); sum_out (own buffer or over residual); unaligned pointers (the scalar path at cols % 8 == 0); long rows up to
// kNormMaxCols; constant rows; nothing written past the output. Each run: fresh
// seeded inputs rounded to fp16, output poisoned (NaN), then no NaN/inf and every element
// within tolerance. The NormHost tests need no GPU: bad arguments and params are refused on the
// host with an error naming the field; the tuner's settings are all valid, default first.
//
// Tolerance: |out - ref| <= 1e-3 |ref| + 1e-4. The output is rounded to fp16 (at most half an
// ulp, 2^-11 = 4.9e-4 relative; 1e-3 leaves 2x headroom). The fp32 statistics (sums of up to
// 64 elements per thread, then a shuffle tree; rsqrtf at 2 ulp) move the normalised value by
// ~1e-5 absolute at these magnitudes (|x + bias + residual| < 5.5, |gamma| < 1.5); adding beta
// can cancel, so that part is absolute: 1e-4 leaves 10x headroom, while a lost term (bias,
// residual, beta: uniform in +-0.5 or more) or a wrong statistic moves most elements by 1e-2+.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "engine/cpu/reference.h"
#include "gpu_test_util.h"
#include "kernels/norm/norm_kernels.h"
#include "mi_test_util.h"

namespace {

namespace sk = stof::kernels;
namespace st = stof::testing;

constexpr double kRel = 1e-3;
constexpr double kAbs = 1e-4;
constexpr size_t kGuardBytes = 64;  // poisoned bytes after the output, checked untouched

struct NormCase {
  int64_t rows = 1, cols = 768;
  bool layer_norm = true, bias = true, residual = true, in_place = false;
  size_t misalign = 0;  // bytes added to the x and out pointers (2: not 16-byte aligned)
  bool constant_rows = false;
  // 0: no sum_out; 1: sum_out in its own buffer; 2: sum_out == residual (the residual stream
  // updated in place).
  int sum_out = 0;
};

std::string ParamsText(const sk::NormParams& p) {
  return "rows_per_block " + std::to_string(p.rows_per_block) + ", threads_per_row " +
         std::to_string(p.threads_per_row);
}

std::string CaseText(const NormCase& c) {
  return std::string(c.layer_norm ? "layer_norm" : "rms_norm") + " rows " +
         std::to_string(c.rows) + " cols " + std::to_string(c.cols) +
         (c.bias ? " +bias" : "") + (c.residual ? " +residual" : "") +
         (c.in_place ? " in_place" : "") + (c.misalign ? " unaligned" : "") +
         (c.constant_rows ? " constant_rows" : "") +
         (c.sum_out == 1 ? " +sum_out" : c.sum_out == 2 ? " +sum_out=residual" : "");
}

// One checked run of `c` at `params`.
void RunNorm(const NormCase& c, const sk::NormParams& params, uint64_t seed) {
  const std::string label = CaseText(c) + " (" + ParamsText(params) + ")";
  SCOPED_TRACE(label);
  const int64_t n = c.rows * c.cols;
  st::HalfVec x = st::RandomHalfVec(n, seed, -1.f, 3.f);  // mean ~1: centring matters
  if (c.constant_rows)
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t j = 0; j < c.cols; ++j) {
        x.bits[r * c.cols + j] = x.bits[r * c.cols];
        x.f[r * c.cols + j] = x.f[r * c.cols];
      }
  const st::HalfVec bias = st::RandomHalfVec(c.cols, seed + 1, -0.5f, 0.5f);
  const st::HalfVec residual = st::RandomHalfVec(c.constant_rows ? 0 : n, seed + 2, -2.f, 2.f);
  const st::HalfVec gamma = st::RandomHalfVec(c.cols, seed + 3, 0.5f, 1.5f);
  const st::HalfVec beta = st::RandomHalfVec(c.cols, seed + 4, -0.5f, 0.5f);
  const bool use_bias = c.bias && !c.constant_rows, use_res = c.residual && !c.constant_rows;
  const float eps = c.layer_norm ? 1e-5f : 1e-6f;

  std::vector<float> ref(static_cast<size_t>(n)), sum_ref;
  if (c.sum_out) {
    // sum_out = fp16(x + bias + residual); out = Norm(sum_out), as CpuBackend::RunNorm does.
    sum_ref.resize(static_cast<size_t>(n));
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t j = 0; j < c.cols; ++j) {
        const int64_t i = r * c.cols + j;
        double v = x.f[i];
        if (use_bias) v += bias.f[j];
        if (use_res) v += residual.f[i];
        sum_ref[i] = stof::kernels::HalfToFloat(stof::kernels::FloatToHalf(static_cast<float>(v)));
      }
    stof::engine::cpu::BiasAddNorm(sum_ref.data(), nullptr, nullptr, gamma.f.data(),
                                   c.layer_norm ? beta.f.data() : nullptr, ref.data(), c.rows,
                                   c.cols, eps);
  } else {
    stof::engine::cpu::BiasAddNorm(x.f.data(), use_bias ? bias.f.data() : nullptr,
                                   use_res ? residual.f.data() : nullptr, gamma.f.data(),
                                   c.layer_norm ? beta.f.data() : nullptr, ref.data(), c.rows,
                                   c.cols, eps);
  }

  st::DeviceBuffer dx(x.Bytes() + c.misalign), dbias(bias.Bytes()), dres(residual.Bytes()),
      dgamma(gamma.Bytes()), dbeta(beta.Bytes()), dout(x.Bytes() + c.misalign + kGuardBytes),
      dsum(c.sum_out == 1 ? x.Bytes() : 0);
  ASSERT_TRUE(dx.Ok() && dbias.Ok() && dres.Ok() && dgamma.Ok() && dbeta.Ok() && dout.Ok() &&
              dsum.Ok())
      << "device allocation failed";
  ASSERT_TRUE(dsum.Poison().IsOk());
  ASSERT_TRUE(dx.Upload(x, c.misalign).IsOk());
  ASSERT_TRUE(dbias.Upload(bias).IsOk());
  if (use_res) {
    ASSERT_TRUE(dres.Upload(residual).IsOk());
  }
  ASSERT_TRUE(dgamma.Upload(gamma).IsOk());
  ASSERT_TRUE(dbeta.Upload(beta).IsOk());
  ASSERT_TRUE(dout.Poison().IsOk());

  sk::NormArgs a;
  a.rows = c.rows;
  a.cols = c.cols;
  a.x = dx.At(c.misalign);
  a.bias = use_bias ? dbias.Ptr() : nullptr;
  a.residual = use_res ? dres.Ptr() : nullptr;
  a.gamma = dgamma.Ptr();
  a.beta = c.layer_norm ? dbeta.Ptr() : nullptr;
  a.eps = eps;
  a.out = c.in_place ? dx.At(c.misalign) : dout.At(c.misalign);
  a.sum_out = c.sum_out == 1 ? dsum.Ptr() : c.sum_out == 2 ? dres.Ptr() : nullptr;
  const auto s = sk::LaunchBiasAddNorm(a, params, nullptr);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  if (c.sum_out) {
    auto sum = (c.sum_out == 1 ? dsum : dres).Download(n);
    ASSERT_TRUE(sum.IsOk()) << sum.Message();
    st::ExpectClose(st::CompareHalves(*sum, sum_ref, kRel, kAbs), c.cols, label + " sum_out");
  }
  auto out = (c.in_place ? dx : dout).Download(n, c.misalign);
  ASSERT_TRUE(out.IsOk()) << out.Message();
  const st::HalfDiff d = st::CompareHalves(*out, ref, kRel, kAbs);
  st::ExpectClose(d, c.cols, label);
  if (!c.in_place) {  // nothing written past the last row: the poison there is intact
    auto guard = dout.Download(kGuardBytes / 2, c.misalign + x.Bytes());
    ASSERT_TRUE(guard.IsOk()) << guard.Message();
    for (uint16_t h : *guard) ASSERT_EQ(h, 0xFFFFu) << "written past the last row";
  }
}

void RunNormDefault(const NormCase& c, uint64_t seed) {
  RunNorm(c, sk::DefaultNormParams(c.cols), seed);
}

// 1001 is ragged (not a multiple of 8: the scalar path); 1000 = 125 x 8 is not.
const int64_t kCols[] = {64, 512, 768, 1000, 1001, 1024, 4096};

TEST(GpuNorm, MatchesReferenceAllShapes) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 1;
  for (bool ln : {true, false})
    for (int64_t cols : kCols)
      for (int64_t rows : {1, 3, 257, 4096})
        RunNormDefault({.rows = rows, .cols = cols, .layer_norm = ln}, seed++);
}

// The tuner may pick any supported setting: each must be correct. rows 333 leaves the last
// block partly idle at every rows_per_block > 1.
TEST(GpuNorm, EverySupportedParams) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 100;
  for (int64_t cols : {768, 64, 512, 1000, 1001, 1024, 4096}) {
    const auto all = sk::SupportedNormParams(cols);
    ASSERT_FALSE(all.empty()) << "cols " << cols;
    for (const sk::NormParams& p : all)
      for (bool ln : {true, false}) {
        if (!ln && cols != 768) continue;  // RMSNorm at every setting for 768 only
        RunNorm({.rows = 333, .cols = cols, .layer_norm = ln}, p, seed++);
      }
  }
}

TEST(GpuNorm, OptionalInputs) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 300;
  for (int64_t cols : {768, 1001})
    for (bool ln : {true, false})
      for (bool bias : {false, true})
        for (bool res : {false, true})
          RunNormDefault(
              {.rows = 129, .cols = cols, .layer_norm = ln, .bias = bias, .residual = res},
              seed++);
}

// sum_out (GPT-2's residual stream) in its own buffer and over residual, with and without bias,
// out of place and in place (out == x), vector and scalar paths.
TEST(GpuNorm, SumOut) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 350;
  for (int64_t cols : {768, 1001})
    for (int mode : {1, 2})
      for (bool bias : {false, true})
        for (bool in_place : {false, true})
          RunNormDefault(
              {.rows = 100, .cols = cols, .bias = bias, .in_place = in_place, .sum_out = mode},
              seed++);
}

TEST(GpuNorm, InPlace) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 400;
  for (int64_t cols : {768, 1001, 4096})
    for (bool ln : {true, false})
      RunNormDefault({.rows = 300, .cols = cols, .layer_norm = ln, .in_place = true}, seed++);
}

// x and out 2 bytes off 16-byte alignment: cols % 8 == 0 but the kernel must take the scalar
// path (a 16-byte access there would fault).
TEST(GpuNorm, UnalignedPointersTakeScalarPath) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 500;
  for (int64_t cols : {512, 768})
    for (bool in_place : {false, true})
      RunNormDefault({.rows = 77, .cols = cols, .in_place = in_place, .misalign = 2}, seed++);
}

// Rows longer than the common hidden sizes, up to the limit, vector and scalar.
TEST(GpuNorm, LongRows) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 600;
  for (int64_t cols : {int64_t{8192}, int64_t{12345}, sk::kNormMaxCols})
    for (bool ln : {true, false})
      RunNormDefault({.rows = 65, .cols = cols, .layer_norm = ln}, seed++);
}

// Zero variance: LayerNorm gives beta (the fp32 sum of equal fp16 values is exact and the mean
// a correctly rounded division, so x - mean is exactly 0 and nothing is amplified by
// 1/sqrt(eps)), RMSNorm x / sqrt(x^2 + eps) * gamma.
TEST(GpuNorm, ConstantRows) {
  STOF_REQUIRE_GPU();
  for (int64_t cols : {768, 1001})
    for (bool ln : {true, false})
      RunNormDefault({.rows = 40, .cols = cols, .layer_norm = ln, .constant_rows = true},
                     700 + cols + ln);
}

// ---- host only (no GPU needed) ----

TEST(NormHost, DefaultsAreDocumentedAndSupported) {
  EXPECT_EQ(sk::DefaultNormParams(512).threads_per_row, 32);
  EXPECT_EQ(sk::DefaultNormParams(768).threads_per_row, 32);
  EXPECT_EQ(sk::DefaultNormParams(1024).threads_per_row, 64);
  EXPECT_EQ(sk::DefaultNormParams(4096).threads_per_row, 256);
  for (int64_t cols : std::vector<int64_t>{1, 7, 8, 64, 100, 512, 768, 1000, 1024, 3072, 4096, 1001,
                                           5000, 8192, 12345, sk::kNormMaxCols}) {
    SCOPED_TRACE("cols " + std::to_string(cols));
    const auto all = sk::SupportedNormParams(cols);
    ASSERT_FALSE(all.empty());
    const sk::NormParams def = sk::DefaultNormParams(cols);
    EXPECT_EQ(all.front().rows_per_block, def.rows_per_block);
    EXPECT_EQ(all.front().threads_per_row, def.threads_per_row);
    sk::NormArgs a;
    a.cols = cols;
    for (const sk::NormParams& p : all) {
      const auto s = sk::CheckNormParams(a, p);
      EXPECT_TRUE(s.IsOk()) << ParamsText(p) << ": " << s.Message();
    }
    for (size_t i = 0; i < all.size(); ++i)
      for (size_t j = i + 1; j < all.size(); ++j)
        EXPECT_FALSE(all[i].rows_per_block == all[j].rows_per_block &&
                     all[i].threads_per_row == all[j].threads_per_row)
            << "duplicate " << ParamsText(all[i]);
  }
  // The tuner has a real choice at the hidden sizes that matter.
  for (int64_t cols : {512, 768, 1024}) EXPECT_GE(sk::SupportedNormParams(cols).size(), 4u);
  EXPECT_TRUE(sk::SupportedNormParams(0).empty());
  EXPECT_TRUE(sk::SupportedNormParams(sk::kNormMaxCols + 1).empty());
}

TEST(NormHost, RowsZeroLaunchesNothing) {
  const st::ArgPointers p;
  sk::NormArgs a;
  a.rows = 0;
  a.cols = 768;
  a.x = p[0];
  a.gamma = p[1];
  a.out = p[2];
  const auto s = sk::LaunchBiasAddNorm(a, sk::DefaultNormParams(768), nullptr);
  EXPECT_TRUE(s.IsOk()) << s.Message();
}

TEST(NormHost, BadArgsNameTheField) {
  const st::ArgPointers p;
  sk::NormArgs good;
  good.rows = 4;
  good.cols = 768;
  good.x = p[0];
  good.bias = p[1];
  good.residual = p[2];
  good.gamma = p[3];
  good.beta = p[4];
  good.out = p[5];
  ASSERT_TRUE(sk::CheckNormArgs(good).IsOk()) << sk::CheckNormArgs(good).Message();
  const sk::NormParams def = sk::DefaultNormParams(768);
  auto bad = [&](auto edit) {
    sk::NormArgs a = good;
    edit(a);
    return sk::LaunchBiasAddNorm(a, def, nullptr);
  };
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.x = nullptr; }), "bias_add_norm", "x");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.gamma = nullptr; }), "bias_add_norm",
                          "gamma");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.out = nullptr; }), "bias_add_norm", "out");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.cols = 0; }), "bias_add_norm", "cols");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.cols = -5; }), "bias_add_norm", "cols");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.cols = sk::kNormMaxCols + 1; }), "cols",
                          "16384");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.rows = -1; }), "bias_add_norm", "rows");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.eps = 0.f; }), "eps");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.eps = -1e-5f; }), "eps");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.eps = NAN; }), "eps");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.rows = int64_t{1} << 62; }), "rows * cols");
  STOF_EXPECT_ERROR_NAMES(bad([](sk::NormArgs& a) { a.sum_out = a.out; }), "bias_add_norm",
                          "sum_out");
  // Optional inputs may be null; sum_out may be the residual (updated in place).
  sk::NormArgs res_stream = good;
  res_stream.sum_out = const_cast<void*>(good.residual);
  EXPECT_TRUE(sk::CheckNormArgs(res_stream).IsOk());
  sk::NormArgs opt = good;
  opt.bias = opt.residual = opt.beta = nullptr;
  EXPECT_TRUE(sk::CheckNormArgs(opt).IsOk());
}

TEST(NormHost, BadParamsNameTheField) {
  const st::ArgPointers p;
  sk::NormArgs a;
  a.rows = 4;
  a.cols = 768;
  a.x = p[0];
  a.gamma = p[1];
  a.out = p[2];
  auto launch = [&](int rpb, int tpr) {
    return sk::LaunchBiasAddNorm(a, sk::NormParams{rpb, tpr}, nullptr);
  };
  STOF_EXPECT_ERROR_NAMES(launch(8, 48), "params.threads_per_row", "power of two");
  STOF_EXPECT_ERROR_NAMES(launch(8, 0), "params.threads_per_row");
  STOF_EXPECT_ERROR_NAMES(launch(8, 2), "params.threads_per_row");
  STOF_EXPECT_ERROR_NAMES(launch(1, 2048), "params.threads_per_row");
  // 8 threads hold at most 512 columns.
  STOF_EXPECT_ERROR_NAMES(launch(32, 8), "params.threads_per_row", "512");
  STOF_EXPECT_ERROR_NAMES(launch(0, 32), "params.rows_per_block");
  STOF_EXPECT_ERROR_NAMES(launch(-1, 32), "params.rows_per_block");
  STOF_EXPECT_ERROR_NAMES(launch(64, 32), "params.rows_per_block");  // 2048 threads
  STOF_EXPECT_ERROR_NAMES(launch(3, 16), "params.rows_per_block", "whole warps");
  // 16384 columns over 1024 threads is 16 each: at most 512 threads per block then.
  a.cols = sk::kNormMaxCols;
  STOF_EXPECT_ERROR_NAMES(launch(1, 1024), "params.rows_per_block");
  EXPECT_TRUE(sk::CheckNormParams(a, sk::NormParams{1, 512}).IsOk());
  EXPECT_TRUE(sk::CheckNormParams(a, sk::NormParams{1, 256}).IsOk());
}

}  // namespace
