// GPU: the op-by-op memory-intensive kernels (kernels/norm/elementwise_kernels.h) against
// engine/cpu/reference.h: LaunchBiasActAdd (cpu::BiasAdd + cpu::ApplyActivation + residual, every
// activation, bias and residual null/present, rows up to 4096 x cols {64, 512, 768, 1000, 1001,
// 1024, 3072, 4096}), LaunchScale, LaunchApplyMask (bit-exact: x where attended, fp16 -inf
// elsewhere), LaunchApplyMask then LaunchSoftmaxRows == cpu::ScaleMaskSoftmax at scale 1,
// LaunchSoftmaxRows (cpu::Softmax; -inf elements and all -inf rows), LaunchScaleMaskSoftmax
// (cpu::ScaleMaskSoftmax; masks of mha_test_util.h with fully masked rows, an empty and a full
// mask), LaunchSplitHeads / LaunchMergeHeads (bit-exact vs cpu::SplitHeads / MergeHeads, fused
// QKV strides and offsets, a round trip). Every op also in place where allowed and through
// unaligned pointers (the scalar path). Each run: fresh seeded inputs rounded to fp16, output
// poisoned (NaN), then no NaN/inf and every element within tolerance. The ElementwiseHost tests
// need no GPU: bad arguments come back as errors naming the op and the field.
//
// Tolerances (|out - ref| <= rel |ref| + abs):
// - bias/act/add and scale: rel 1e-3, abs 1e-5. fp16 output rounding is at most 2^-11 = 4.9e-4
//   relative (1e-3: 2x headroom). fp32 math: the sums are exact or within 2^-24 relative;
//   GELU uses tanhf (CUDA: <= 2 ulp) and fp32 x^3, ~1e-7 relative of |x| < 3.5 -> < 1e-6
//   absolute, below abs = 1e-5 by 10x (which also covers fp16 subnormal spacing, 6e-8).
// - softmax: rel 1e-3, abs 1e-6. exp2f (<= 2 ulp), the fp32 product x * scale * log2(e) and the
//   fp32 row sum give ~1e-6 relative, far below the fp16 rounding; abs 1e-6 covers the fp16
//   subnormal spacing of tiny probabilities (6e-8) with room. Because tiny probabilities are
//   barely constrained by that, masked elements must also be exactly 0 and each row with
//   something attended must sum to 1 within 1e-3 (fp16 rounding moves the sum by <= 4.9e-4 plus
//   L x 3e-8 of subnormal rounding).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "engine/core/activation.h"
#include "engine/cpu/reference.h"
#include "engine/mask/mask.h"
#include "gpu_test_util.h"
#include "kernels/norm/elementwise_kernels.h"
#include "mi_test_util.h"

namespace {

using stof::engine::Activation;
using stof::engine::Mask;
namespace cpu = stof::engine::cpu;
namespace k = stof::kernels;
namespace st = stof::testing;

constexpr double kEwRel = 1e-3, kEwAbs = 1e-5;
constexpr double kSmRel = 1e-3, kSmAbs = 1e-6, kRowSumTol = 1e-3;
constexpr uint16_t kMinusInf = 0xFC00u;

bool IsZero(uint16_t h) { return h == 0x0000u || h == 0x8000u; }

std::string Shape(int64_t rows, int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// ---- bias + activation + residual ----

struct BaaCase {
  int64_t rows, cols;
  Activation act;
  bool bias, residual, in_place = false;
  size_t misalign = 0;  // bytes added to x and out
};

void RunBiasActAdd(const BaaCase& c, uint64_t seed) {
  const std::string label = std::string(stof::engine::ActivationName(c.act)) + " " +
                            Shape(c.rows, c.cols) + (c.bias ? " +bias" : "") +
                            (c.residual ? " +residual" : "") + (c.in_place ? " in_place" : "") +
                            (c.misalign ? " unaligned" : "");
  SCOPED_TRACE(label);
  const int64_t n = c.rows * c.cols;
  const st::HalfVec x = st::RandomHalfVec(n, seed, -3.f, 3.f);
  const st::HalfVec bias = st::RandomHalfVec(c.cols, seed + 1, -0.5f, 0.5f);
  const st::HalfVec res = st::RandomHalfVec(n, seed + 2, -2.f, 2.f);
  std::vector<float> ref = x.f;
  if (c.bias) cpu::BiasAdd(ref.data(), bias.f.data(), c.rows, c.cols);
  cpu::ApplyActivation(ref.data(), n, c.act);
  if (c.residual)
    for (int64_t i = 0; i < n; ++i) ref[i] += res.f[i];

  st::DeviceBuffer dx(x.Bytes() + c.misalign), db(bias.Bytes()), dr(res.Bytes()),
      dout(x.Bytes() + c.misalign);
  ASSERT_TRUE(dx.Ok() && db.Ok() && dr.Ok() && dout.Ok()) << "device allocation failed";
  ASSERT_TRUE(dx.Upload(x, c.misalign).IsOk());
  ASSERT_TRUE(db.Upload(bias).IsOk());
  ASSERT_TRUE(dr.Upload(res).IsOk());
  ASSERT_TRUE(dout.Poison().IsOk());
  const st::DeviceBuffer& out_buf = c.in_place ? dx : dout;
  const auto s = k::LaunchBiasActAdd(c.rows, c.cols, dx.At(c.misalign),
                                     c.bias ? db.Ptr() : nullptr, c.act,
                                     c.residual ? dr.Ptr() : nullptr, out_buf.At(c.misalign),
                                     nullptr);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  auto out = out_buf.Download(n, c.misalign);
  ASSERT_TRUE(out.IsOk()) << out.Message();
  st::ExpectClose(st::CompareHalves(*out, ref, kEwRel, kEwAbs), c.cols, label);
}

const Activation kActs[] = {Activation::kNone, Activation::kGelu, Activation::kRelu};

TEST(GpuBiasActAdd, MatchesReference) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 1;
  for (int64_t cols : {64, 512, 768, 1000, 1001, 1024, 3072, 4096})
    for (int64_t rows : {1, 100})
      for (Activation act : kActs)
        for (bool bias : {false, true})
          for (bool res : {false, true}) RunBiasActAdd({rows, cols, act, bias, res}, seed++);
}

TEST(GpuBiasActAdd, ManyRows) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 200;
  for (int64_t cols : {768, 1001, 3072, 4096})
    for (Activation act : {Activation::kGelu, Activation::kNone})
      RunBiasActAdd({4096, cols, act, true, true}, seed++);
}

TEST(GpuBiasActAdd, InPlaceAndUnaligned) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 300;
  for (int64_t cols : {768, 1001})
    for (Activation act : kActs) {
      RunBiasActAdd({65, cols, act, true, true, /*in_place=*/true}, seed++);
      RunBiasActAdd({65, cols, act, true, true, false, /*misalign=*/2}, seed++);
      RunBiasActAdd({65, cols, act, true, true, true, 2}, seed++);
    }
}

// ---- scale ----

TEST(GpuScale, MatchesReference) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 400;
  for (int64_t n : {1, 7, 8, 9, 1000, 1001, (1 << 20) + 3})
    for (float scale : {0.125f, -3.f})
      for (bool in_place : {false, true})
        for (size_t misalign : {size_t{0}, size_t{2}}) {
          const std::string label = "n " + std::to_string(n) + " scale " +
                                    std::to_string(scale) + (in_place ? " in_place" : "") +
                                    (misalign ? " unaligned" : "");
          SCOPED_TRACE(label);
          const st::HalfVec x = st::RandomHalfVec(n, seed++, -4.f, 4.f);
          std::vector<float> ref(x.f.size());
          for (size_t i = 0; i < ref.size(); ++i)
            ref[i] = static_cast<float>(static_cast<double>(x.f[i]) * scale);
          st::DeviceBuffer dx(x.Bytes() + misalign), dout(x.Bytes() + misalign);
          ASSERT_TRUE(dx.Ok() && dout.Ok());
          ASSERT_TRUE(dx.Upload(x, misalign).IsOk());
          ASSERT_TRUE(dout.Poison().IsOk());
          const st::DeviceBuffer& ob = in_place ? dx : dout;
          const auto s = k::LaunchScale(n, dx.At(misalign), scale, ob.At(misalign), nullptr);
          ASSERT_TRUE(s.IsOk()) << s.Message();
          auto out = ob.Download(n, misalign);
          ASSERT_TRUE(out.IsOk()) << out.Message();
          st::ExpectClose(st::CompareHalves(*out, ref, kEwRel, kEwAbs), 0, label);
        }
}

// ---- masks ----

// The masks of the MHA tests (holes: single and runs of fully masked rows; random_elements:
// scattered columns and, at small L, empty rows) plus an empty and a full mask.
stof::engine::Expected<Mask> TestMask(const std::string& name, int64_t L) {
  if (name == "empty") return Mask::Create(L, L);
  if (name == "full") {
    auto m = Mask::Create(L, L);
    if (m.IsOk()) m->SetRect(0, L, 0, L);
    return m;
  }
  return st::MakeMask(name, L);
}

struct DeviceMask {
  explicit DeviceMask(const Mask& m) : buf(m.Words().size() * sizeof(uint64_t)) {
    ok = buf.Ok() && buf.Upload(m.Words().data(), m.Words().size() * sizeof(uint64_t)).IsOk();
  }
  st::DeviceBuffer buf;
  bool ok = false;
};

TEST(GpuApplyMask, BitExact) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 500;
  for (int64_t L : {1, 17, 64, 100, 128, 1000, 1001, 1024})
    for (const char* name : {"causal", "random_elements", "holes", "empty", "full"})
      for (int mode = 0; mode < 3; ++mode) {  // 0 out of place, 1 in place, 2 unaligned
        const int64_t bh = 3;
        const size_t misalign = mode == 2 ? 2 : 0;
        const std::string label = std::string(name) + " L " + std::to_string(L) +
                                  (mode == 1 ? " in_place" : mode == 2 ? " unaligned" : "");
        SCOPED_TRACE(label);
        auto mask = TestMask(name, L);
        ASSERT_TRUE(mask.IsOk()) << mask.Message();
        const int64_t n = bh * L * L;
        const st::HalfVec x = st::RandomHalfVec(n, seed++, -8.f, 8.f);
        DeviceMask dm(*mask);
        st::DeviceBuffer dx(x.Bytes() + misalign), dout(x.Bytes() + misalign);
        ASSERT_TRUE(dm.ok && dx.Ok() && dout.Ok());
        ASSERT_TRUE(dx.Upload(x, misalign).IsOk());
        ASSERT_TRUE(dout.Poison().IsOk());
        const st::DeviceBuffer& ob = mode == 1 ? dx : dout;
        const auto s =
            k::LaunchApplyMask(bh, L, dx.At(misalign), dm.buf.Ptr(), ob.At(misalign), nullptr);
        ASSERT_TRUE(s.IsOk()) << s.Message();
        auto out = ob.Download(n, misalign);
        ASSERT_TRUE(out.IsOk()) << out.Message();
        int64_t wrong = 0, first = -1;
        for (int64_t h = 0; h < bh; ++h)
          for (int64_t i = 0; i < L; ++i)
            for (int64_t j = 0; j < L; ++j) {
              const int64_t e = (h * L + i) * L + j;
              const uint16_t want = mask->Get(i, j) ? x.bits[e] : kMinusInf;
              if ((*out)[e] != want && wrong++ == 0) first = e;
            }
        EXPECT_EQ(wrong, 0) << "first wrong element: head " << first / (L * L) << " row "
                            << first / L % L << " col " << first % L;
      }
}

// Softmax results: within tolerance, exactly 0 where `masked`, each row with something
// attended summing to 1, rows whose reference is all zeros exactly zero.
void CheckSoftmax(const std::vector<uint16_t>& out, const std::vector<float>& ref, int64_t rows,
                  int64_t cols, const std::function<bool(int64_t, int64_t)>& masked,
                  const std::string& label) {
  st::ExpectClose(st::CompareHalves(out, ref, kSmRel, kSmAbs), cols, label);
  int64_t nonzero_masked = 0, bad_sums = 0, bad_row = -1;
  double worst_sum = 1.0;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, ref_sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const uint16_t h = out[r * cols + c];
      sum += stof::kernels::HalfToFloat(h);
      ref_sum += ref[r * cols + c];
      if (masked(r, c) && !IsZero(h)) ++nonzero_masked;
    }
    const double want = ref_sum > 0 ? 1.0 : 0.0;  // 0: nothing attended, all exact zeros
    if (!(std::fabs(sum - want) <= (want > 0 ? kRowSumTol : 0.0))) {
      if (bad_sums++ == 0) bad_row = r;
      worst_sum = sum;
    }
  }
  EXPECT_EQ(nonzero_masked, 0) << label << ": masked elements must be exactly 0";
  EXPECT_EQ(bad_sums, 0) << label << ": rows not summing to 1 (or not exactly 0 when nothing "
                         << "is attended), first row " << bad_row << " sums to " << worst_sum;
}

// LaunchApplyMask then LaunchSoftmaxRows is the unfused form of scale + mask + softmax at scale 1.
TEST(GpuMaskThenSoftmax, EqualsScaleMaskSoftmaxAtScaleOne) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 600;
  for (int64_t L : {1, 17, 64, 100, 1000, 1001, 1024, 2048})
    for (const char* name : {"causal", "random_elements", "holes", "bigbird", "empty"}) {
      const int64_t bh = 2;
      const std::string label = std::string(name) + " L " + std::to_string(L);
      SCOPED_TRACE(label);
      auto mask = TestMask(name, L);
      ASSERT_TRUE(mask.IsOk()) << mask.Message();
      const int64_t n = bh * L * L;
      const st::HalfVec x = st::RandomHalfVec(n, seed++, -4.f, 4.f);
      std::vector<float> ref = x.f;
      ASSERT_TRUE(cpu::ScaleMaskSoftmax(ref.data(), bh, L, *mask, 1.f).IsOk());
      DeviceMask dm(*mask);
      st::DeviceBuffer dx(x.Bytes()), dtmp(x.Bytes()), dout(x.Bytes());
      ASSERT_TRUE(dm.ok && dx.Ok() && dtmp.Ok() && dout.Ok());
      ASSERT_TRUE(dx.Upload(x).IsOk());
      ASSERT_TRUE(dtmp.Poison().IsOk());
      ASSERT_TRUE(dout.Poison().IsOk());
      auto s = k::LaunchApplyMask(bh, L, dx.Ptr(), dm.buf.Ptr(), dtmp.Ptr(), nullptr);
      ASSERT_TRUE(s.IsOk()) << s.Message();
      s = k::LaunchSoftmaxRows(bh * L, L, dtmp.Ptr(), dout.Ptr(), nullptr);
      ASSERT_TRUE(s.IsOk()) << s.Message();
      auto out = dout.Download(n);
      ASSERT_TRUE(out.IsOk()) << out.Message();
      CheckSoftmax(*out, ref, bh * L, L,
                   [&](int64_t r, int64_t c) { return !mask->Get(r % L, c); }, label);
    }
}

// ---- softmax rows ----

TEST(GpuSoftmaxRows, MatchesReference) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 700;
  for (int64_t cols : {1, 7, 64, 512, 768, 1000, 1001, 1024, 4096, 30000})
    for (int64_t rows : {1, 100, 4096})
      for (bool in_place : {false, true}) {
        if (cols == 30000 && rows > 100) continue;
        const std::string label = Shape(rows, cols) + (in_place ? " in_place" : "");
        SCOPED_TRACE(label);
        const int64_t n = rows * cols;
        st::HalfVec x = st::RandomHalfVec(n, seed++, -8.f, 8.f);
        // -inf inputs: row 1 entirely, row 2 every third element (when there are such rows).
        for (int64_t c = 0; c < cols; ++c) {
          if (rows > 1) x.bits[cols + c] = kMinusInf;
          if (rows > 2 && c % 3 == 0) x.bits[2 * cols + c] = kMinusInf;
        }
        x = st::FromBits(x.bits);
        std::vector<float> ref = x.f;
        for (int64_t r = 0; r < rows; ++r) {
          float* row = ref.data() + r * cols;
          if (std::all_of(row, row + cols, [](float v) { return std::isinf(v) && v < 0; }))
            std::fill(row, row + cols, 0.f);  // no finite element: zeros (cpu::Softmax: NaN)
          else
            cpu::Softmax(row, 1, cols);
        }
        st::DeviceBuffer dx(x.Bytes()), dout(x.Bytes());
        ASSERT_TRUE(dx.Ok() && dout.Ok());
        ASSERT_TRUE(dx.Upload(x).IsOk());
        ASSERT_TRUE(dout.Poison().IsOk());
        const st::DeviceBuffer& ob = in_place ? dx : dout;
        const auto s = k::LaunchSoftmaxRows(rows, cols, dx.Ptr(), ob.Ptr(), nullptr);
        ASSERT_TRUE(s.IsOk()) << s.Message();
        auto out = ob.Download(n);
        ASSERT_TRUE(out.IsOk()) << out.Message();
        CheckSoftmax(*out, ref, rows, cols,
                     [&](int64_t r, int64_t c) { return x.bits[r * cols + c] == kMinusInf; },
                     label);
      }
}

// ---- scale + mask + softmax ----

void RunScaleMaskSoftmax(const std::string& name, int64_t bh, int64_t L, float scale,
                         bool in_place, size_t misalign, uint64_t seed) {
  const std::string label = name + " bh " + std::to_string(bh) + " L " + std::to_string(L) +
                            " scale " + std::to_string(scale) + (in_place ? " in_place" : "") +
                            (misalign ? " unaligned" : "");
  SCOPED_TRACE(label);
  auto mask = TestMask(name, L);
  ASSERT_TRUE(mask.IsOk()) << mask.Message();
  const int64_t n = bh * L * L;
  const st::HalfVec x = st::RandomHalfVec(n, seed, -16.f, 16.f);  // times 1/8: +-2
  std::vector<float> ref = x.f;
  ASSERT_TRUE(cpu::ScaleMaskSoftmax(ref.data(), bh, L, *mask, scale).IsOk());
  DeviceMask dm(*mask);
  st::DeviceBuffer dx(x.Bytes() + misalign), dout(x.Bytes() + misalign);
  ASSERT_TRUE(dm.ok && dx.Ok() && dout.Ok());
  ASSERT_TRUE(dx.Upload(x, misalign).IsOk());
  ASSERT_TRUE(dout.Poison().IsOk());
  const st::DeviceBuffer& ob = in_place ? dx : dout;
  const auto s = k::LaunchScaleMaskSoftmax(bh, L, dx.At(misalign), scale, dm.buf.Ptr(),
                                           ob.At(misalign), nullptr);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  auto out = ob.Download(n, misalign);
  ASSERT_TRUE(out.IsOk()) << out.Message();
  CheckSoftmax(*out, ref, bh * L, L, [&](int64_t r, int64_t c) { return !mask->Get(r % L, c); },
               label);
}

TEST(GpuScaleMaskSoftmax, MatchesReference) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 800;
  for (int64_t L : {1, 17, 64, 100, 128, 1000, 1001, 1024, 2048})
    for (const char* name : {"causal", "random_elements", "holes", "bigbird", "empty", "full"})
      for (bool in_place : {false, true})
        RunScaleMaskSoftmax(name, 3, L, 0.125f, in_place, 0, seed++);
  RunScaleMaskSoftmax("bigbird", 2, 4096, 0.125f, true, 0, seed++);
  RunScaleMaskSoftmax("longformer", 2, 4096, 0.125f, false, 0, seed++);
}

TEST(GpuScaleMaskSoftmax, OtherScalesAndUnaligned) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 900;
  const float d128 = static_cast<float>(1.0 / std::sqrt(128.0));
  for (float scale : {d128, 1.f, 0.f})
    RunScaleMaskSoftmax("causal", 2, 256, scale, false, 0, seed++);
  for (bool in_place : {false, true}) RunScaleMaskSoftmax("holes", 2, 256, 0.125f, in_place, 2, seed++);
}

// ---- split / merge heads ----

struct HeadsCase {
  int64_t batch, seq_len, heads, head_dim, stride, offset;
  size_t misalign = 0;  // bytes added to src and dst
};

std::string HeadsText(const HeadsCase& c) {
  return "B " + std::to_string(c.batch) + " L " + std::to_string(c.seq_len) + " H " +
         std::to_string(c.heads) + " d " + std::to_string(c.head_dim) + " stride " +
         std::to_string(c.stride) + " offset " + std::to_string(c.offset) +
         (c.misalign ? " unaligned" : "");
}

void ExpectBitsEqual(const std::vector<uint16_t>& out, const std::vector<float>& ref,
                     const std::string& label) {
  int64_t wrong = 0, first = -1;
  for (size_t i = 0; i < out.size(); ++i)
    if (stof::kernels::FloatToHalf(ref[i]) != out[i] && wrong++ == 0) first = static_cast<int64_t>(i);
  EXPECT_EQ(wrong, 0) << label << ": " << wrong << " elements differ, first at " << first;
}

TEST(GpuHeads, SplitMergeMatchReference) {
  STOF_REQUIRE_GPU();
  const std::vector<HeadsCase> cases = {
      {2, 128, 12, 64, 3 * 768, 0},     {2, 128, 12, 64, 3 * 768, 768},  // fused QKV: q, k
      {2, 128, 12, 64, 3 * 768, 1536},  {1, 1, 1, 64, 64, 0},           // v; one token
      {2, 17, 3, 8, 24, 0},             {3, 33, 4, 5, 20, 0},           // ragged head_dim
      {2, 16, 2, 64, 136, 3},           {2, 16, 4, 16, 100, 8},         // ragged offset, stride
      {2, 64, 16, 128, 2048, 0},        {2, 64, 8, 64, 512, 0, 2},      // d128; unaligned
  };
  uint64_t seed = 1000;
  for (const HeadsCase& c : cases) {
    const std::string label = HeadsText(c);
    SCOPED_TRACE(label);
    const int64_t src_n = c.batch * c.seq_len * c.stride;
    const int64_t heads_n = c.batch * c.heads * c.seq_len * c.head_dim;
    const st::HalfVec src = st::RandomHalfVec(src_n, seed++, -1.f, 1.f);
    std::vector<float> split_ref(static_cast<size_t>(heads_n));
    cpu::SplitHeads(src.f.data(), c.stride, c.offset, split_ref.data(), c.batch, c.seq_len,
                    c.heads, c.head_dim);
    st::DeviceBuffer dsrc(src.Bytes() + c.misalign), dheads(heads_n * 2 + c.misalign),
        dmerged(heads_n * 2 + c.misalign);
    ASSERT_TRUE(dsrc.Ok() && dheads.Ok() && dmerged.Ok());
    ASSERT_TRUE(dsrc.Upload(src, c.misalign).IsOk());
    ASSERT_TRUE(dheads.Poison().IsOk());
    ASSERT_TRUE(dmerged.Poison().IsOk());
    auto s = k::LaunchSplitHeads(c.batch, c.seq_len, c.heads, c.head_dim, dsrc.At(c.misalign),
                                 c.stride, c.offset, dheads.At(c.misalign), nullptr);
    ASSERT_TRUE(s.IsOk()) << s.Message();
    auto split = dheads.Download(heads_n, c.misalign);
    ASSERT_TRUE(split.IsOk()) << split.Message();
    ExpectBitsEqual(*split, split_ref, label + " split");

    std::vector<float> merge_ref(static_cast<size_t>(heads_n));
    cpu::MergeHeads(split_ref.data(), merge_ref.data(), c.batch, c.seq_len, c.heads, c.head_dim);
    s = k::LaunchMergeHeads(c.batch, c.seq_len, c.heads, c.head_dim, dheads.At(c.misalign),
                            dmerged.At(c.misalign), nullptr);
    ASSERT_TRUE(s.IsOk()) << s.Message();
    auto merged = dmerged.Download(heads_n, c.misalign);
    ASSERT_TRUE(merged.IsOk()) << merged.Message();
    ExpectBitsEqual(*merged, merge_ref, label + " merge");
    if (c.stride == c.heads * c.head_dim && c.offset == 0)  // round trip gives src back
      ExpectBitsEqual(*merged, src.f, label + " round trip");
  }
}

// ---- host only (no GPU needed): bad input ----

TEST(ElementwiseHost, BadInputNamesTheField) {
  const st::ArgPointers p;
  void* x = p[0];
  void* out = p[1];
  void* mask = p[2];
  const Activation kGelu = Activation::kGelu;
  // bias_act_add
  STOF_EXPECT_ERROR_NAMES(k::LaunchBiasActAdd(4, 768, nullptr, nullptr, kGelu, nullptr, out, nullptr),
                          "bias_act_add", "x");
  STOF_EXPECT_ERROR_NAMES(k::LaunchBiasActAdd(4, 768, x, nullptr, kGelu, nullptr, nullptr, nullptr),
                          "bias_act_add", "out");
  STOF_EXPECT_ERROR_NAMES(k::LaunchBiasActAdd(4, 0, x, nullptr, kGelu, nullptr, out, nullptr),
                          "bias_act_add", "cols");
  STOF_EXPECT_ERROR_NAMES(k::LaunchBiasActAdd(-1, 768, x, nullptr, kGelu, nullptr, out, nullptr),
                          "bias_act_add", "rows");
  STOF_EXPECT_ERROR_NAMES(k::LaunchBiasActAdd(4, 768, x, nullptr, static_cast<Activation>(7),
                                              nullptr, out, nullptr),
                          "bias_act_add", "act");
  STOF_EXPECT_ERROR_NAMES(k::LaunchBiasActAdd(int64_t{1} << 40, int64_t{1} << 40, x, nullptr,
                                              kGelu, nullptr, out, nullptr),
                          "bias_act_add", "rows * cols");
  EXPECT_TRUE(k::LaunchBiasActAdd(0, 768, x, nullptr, kGelu, nullptr, out, nullptr).IsOk());
  // scale
  STOF_EXPECT_ERROR_NAMES(k::LaunchScale(8, nullptr, 2.f, out, nullptr), "scale", "x");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScale(8, x, 2.f, nullptr, nullptr), "scale", "out");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScale(-8, x, 2.f, out, nullptr), "scale", "n");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScale(8, x, INFINITY, out, nullptr), "scale: scale");
  EXPECT_TRUE(k::LaunchScale(0, x, 2.f, out, nullptr).IsOk());
  // apply_mask
  STOF_EXPECT_ERROR_NAMES(k::LaunchApplyMask(2, 64, nullptr, mask, out, nullptr), "apply_mask", "x");
  STOF_EXPECT_ERROR_NAMES(k::LaunchApplyMask(2, 64, x, nullptr, out, nullptr), "apply_mask",
                          "mask_words");
  STOF_EXPECT_ERROR_NAMES(k::LaunchApplyMask(2, 64, x, mask, nullptr, nullptr), "apply_mask", "out");
  STOF_EXPECT_ERROR_NAMES(k::LaunchApplyMask(2, 0, x, mask, out, nullptr), "apply_mask", "seq_len");
  STOF_EXPECT_ERROR_NAMES(k::LaunchApplyMask(2, 32769, x, mask, out, nullptr), "seq_len", "32768");
  STOF_EXPECT_ERROR_NAMES(k::LaunchApplyMask(-2, 64, x, mask, out, nullptr), "apply_mask", "bh");
  EXPECT_TRUE(k::LaunchApplyMask(0, 64, x, mask, out, nullptr).IsOk());
  // softmax_rows
  STOF_EXPECT_ERROR_NAMES(k::LaunchSoftmaxRows(4, 64, nullptr, out, nullptr), "softmax_rows", "x");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSoftmaxRows(4, 64, x, nullptr, nullptr), "softmax_rows", "out");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSoftmaxRows(4, 0, x, out, nullptr), "softmax_rows", "cols");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSoftmaxRows(-4, 64, x, out, nullptr), "softmax_rows", "rows");
  EXPECT_TRUE(k::LaunchSoftmaxRows(0, 64, x, out, nullptr).IsOk());
  // scale_mask_softmax
  const char* sms = "scale_mask_softmax";
  STOF_EXPECT_ERROR_NAMES(k::LaunchScaleMaskSoftmax(2, 64, nullptr, 0.1f, mask, out, nullptr), sms, "x");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScaleMaskSoftmax(2, 64, x, 0.1f, nullptr, out, nullptr), sms,
                          "mask_words");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScaleMaskSoftmax(2, 64, x, 0.1f, mask, nullptr, nullptr), sms, "out");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScaleMaskSoftmax(2, 0, x, 0.1f, mask, out, nullptr), sms, "seq_len");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScaleMaskSoftmax(-1, 64, x, 0.1f, mask, out, nullptr), sms, "bh");
  STOF_EXPECT_ERROR_NAMES(k::LaunchScaleMaskSoftmax(2, 64, x, NAN, mask, out, nullptr), sms, "scale");
  EXPECT_TRUE(k::LaunchScaleMaskSoftmax(0, 64, x, 0.1f, mask, out, nullptr).IsOk());
  // split_heads / merge_heads
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 4, 64, nullptr, 256, 0, out, nullptr),
                          "split_heads", "src");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 4, 64, x, 256, 0, nullptr, nullptr),
                          "split_heads", "dst");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(-1, 16, 4, 64, x, 256, 0, out, nullptr),
                          "split_heads", "batch");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 0, 4, 64, x, 256, 0, out, nullptr),
                          "split_heads", "seq_len");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 0, 64, x, 256, 0, out, nullptr),
                          "split_heads", "heads");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 4, 0, x, 256, 0, out, nullptr),
                          "split_heads", "head_dim");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 4, 64, x, 256, -8, out, nullptr),
                          "split_heads", "col_offset");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 4, 64, x, 255, 0, out, nullptr),
                          "split_heads", "src_row_stride");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 4, 64, x, 768, 520, out, nullptr),
                          "split_heads", "src_row_stride");
  STOF_EXPECT_ERROR_NAMES(k::LaunchSplitHeads(2, 16, 4, 64, x, 256, 0, x, nullptr),
                          "split_heads", "dst");
  EXPECT_TRUE(k::LaunchSplitHeads(0, 16, 4, 64, x, 256, 0, out, nullptr).IsOk());
  STOF_EXPECT_ERROR_NAMES(k::LaunchMergeHeads(2, 16, 4, 64, nullptr, out, nullptr), "merge_heads",
                          "src");
  STOF_EXPECT_ERROR_NAMES(k::LaunchMergeHeads(2, 16, 4, 64, x, nullptr, nullptr), "merge_heads",
                          "dst");
  STOF_EXPECT_ERROR_NAMES(k::LaunchMergeHeads(2, 16, -4, 64, x, out, nullptr), "merge_heads",
                          "heads");
  STOF_EXPECT_ERROR_NAMES(k::LaunchMergeHeads(2, 16, 4, 64, x, x, nullptr), "merge_heads", "dst");
  EXPECT_TRUE(k::LaunchMergeHeads(0, 16, 4, 64, x, out, nullptr).IsOk());
}

}  // namespace
