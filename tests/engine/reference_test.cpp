// Tests of the CPU reference ops (engine/cpu/reference.h) against naive double-precision
// loops written here, and against known values (GELU, LayerNorm, softmax).
#include "engine/cpu/reference.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace stof::engine;

namespace {

std::vector<float> RandomVec(size_t n, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Each element attended with probability `density`; rows in `empty_rows` fully masked.
Mask RandomMask(int64_t L, double density, std::mt19937_64& rng,
                const std::vector<int64_t>& empty_rows) {
  Mask m = *Mask::Create(L, L);
  std::bernoulli_distribution on(density);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j)
      if (on(rng)) m.Set(i, j);
  for (int64_t r : empty_rows) m.SetRange(r, 0, L, false);
  return m;
}

// Textbook masked attention, in double, for rows i0, i0 + step, ... of every (batch, head):
// masked scores are -inf, softmax over the row, and a fully masked row is zeros by definition.
std::vector<double> NaiveAttention(const std::vector<float>& q, const std::vector<float>& k,
                                   const std::vector<float>& v, const Workload& w,
                                   const Mask& mask, int64_t step = 1) {
  const int64_t L = w.seq_len, d = w.head_dim;
  std::vector<double> o(q.size(), 0.0);
  std::vector<double> s(static_cast<size_t>(L));
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (int64_t bh = 0; bh < w.batch * w.heads; ++bh) {
    const size_t base = static_cast<size_t>(bh * L * d);
    for (int64_t i = 0; i < L; i += step) {
      bool any = false;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < L; ++j) {
        if (!mask.Get(i, j)) {
          s[static_cast<size_t>(j)] = -std::numeric_limits<double>::infinity();
          continue;
        }
        any = true;
        double dot = 0;
        for (int64_t t = 0; t < d; ++t)
          dot += static_cast<double>(q[base + static_cast<size_t>(i * d + t)]) *
                 static_cast<double>(k[base + static_cast<size_t>(j * d + t)]);
        s[static_cast<size_t>(j)] = dot * scale;
        mx = std::max(mx, s[static_cast<size_t>(j)]);
      }
      if (!any) continue;  // zeros
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) {
        s[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - mx);  // exp(-inf) = 0
        sum += s[static_cast<size_t>(j)];
      }
      for (int64_t t = 0; t < d; ++t) {
        double acc = 0;
        for (int64_t j = 0; j < L; ++j)
          acc += s[static_cast<size_t>(j)] * v[base + static_cast<size_t>(j * d + t)];
        o[base + static_cast<size_t>(i * d + t)] = acc / sum;
      }
    }
  }
  return o;
}

// max over checked elements of |got - want| / max(|want|, 1e-6).
double MaxRelError(const std::vector<float>& got, const std::vector<double>& want,
                   const Workload& w, int64_t step = 1) {
  double worst = 0;
  const int64_t L = w.seq_len, d = w.head_dim;
  for (int64_t bh = 0; bh < w.batch * w.heads; ++bh)
    for (int64_t i = 0; i < L; i += step)
      for (int64_t t = 0; t < d; ++t) {
        const size_t e = static_cast<size_t>((bh * L + i) * d + t);
        const double err = std::abs(got[e] - want[e]) / std::max(std::abs(want[e]), 1e-6);
        worst = std::max(worst, std::isnan(got[e]) ? std::numeric_limits<double>::infinity() : err);
      }
  return worst;
}

}  // namespace

TEST(ReferenceAttention, MatchesNaiveOnRandomMasksWithEmptyRows) {
  std::mt19937_64 rng(1234);
  for (int64_t L : {1, 7, 64, 130, 200}) {
    for (double density : {0.05, 0.5, 1.0}) {
      Workload w;
      w.batch = 2;
      w.heads = 2;
      w.seq_len = L;
      w.head_dim = 24;
      w.dtype = DType::kF32;
      const size_t n = static_cast<size_t>(w.batch * w.heads * L * w.head_dim);
      auto q = RandomVec(n, rng), k = RandomVec(n, rng), v = RandomVec(n, rng);
      std::vector<int64_t> empty = {0};
      if (L > 5) empty.push_back(L / 2);
      if (L > 2) empty.push_back(L - 1);
      Mask mask = RandomMask(L, density, rng, empty);
      std::vector<float> o(n, std::numeric_limits<float>::quiet_NaN());  // poisoned
      ASSERT_TRUE(cpu::MaskedAttention(q.data(), k.data(), v.data(), o.data(), w, mask).IsOk());
      auto want = NaiveAttention(q, k, v, w, mask);
      EXPECT_LT(MaxRelError(o, want, w), 1e-5) << "L=" << L << " density=" << density;
      // Fully masked rows are exactly zero, in every (batch, head).
      for (int64_t bh = 0; bh < w.batch * w.heads; ++bh)
        for (int64_t r : empty)
          for (int64_t t = 0; t < w.head_dim; ++t)
            EXPECT_EQ(o[static_cast<size_t>((bh * L + r) * w.head_dim + t)], 0.0f);
    }
  }
}

TEST(ReferenceAttention, LargeScoresDoNotOverflow) {
  // Scores around 400 overflow exp() in float without max subtraction.
  Workload w;
  w.batch = 1;
  w.heads = 1;
  w.seq_len = 70;
  w.head_dim = 16;
  std::mt19937_64 rng(5);
  const size_t n = static_cast<size_t>(w.seq_len * w.head_dim);
  auto q = RandomVec(n, rng, 9.0f, 11.0f), k = RandomVec(n, rng, 9.0f, 11.0f);
  auto v = RandomVec(n, rng);
  Mask mask = RandomMask(w.seq_len, 0.7, rng, {3});
  std::vector<float> o(n);
  ASSERT_TRUE(cpu::MaskedAttention(q.data(), k.data(), v.data(), o.data(), w, mask).IsOk());
  EXPECT_LT(MaxRelError(o, NaiveAttention(q, k, v, w, mask), w), 1e-5);
}

TEST(ReferenceAttention, L1024IsFast) {
  // L = 1024, d = 64, B*H = 4, half-dense mask: the reference must stay well under a second
  // (it runs inside many tests). Checked against the naive version on every 16th row.
  Workload w;
  w.batch = 2;
  w.heads = 2;
  w.seq_len = 1024;
  w.head_dim = 64;
  std::mt19937_64 rng(99);
  const size_t n = static_cast<size_t>(w.batch * w.heads * w.seq_len * w.head_dim);
  auto q = RandomVec(n, rng), k = RandomVec(n, rng), v = RandomVec(n, rng);
  Mask mask = RandomMask(w.seq_len, 0.5, rng, {32, 1000});
  std::vector<float> o(n);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(cpu::MaskedAttention(q.data(), k.data(), v.data(), o.data(), w, mask).IsOk());
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#ifdef NDEBUG  // optimised builds only: -O0 is several times slower and says nothing
  EXPECT_LT(secs, 1.0);
#else
  (void)secs;
#endif
  EXPECT_LT(MaxRelError(o, NaiveAttention(q, k, v, w, mask, 16), w, 16), 1e-5);
}

TEST(ReferenceAttention, ErrorsNameTheInput) {
  Workload w;
  w.batch = 1;
  w.heads = 1;
  w.seq_len = 8;
  w.head_dim = 4;
  std::vector<float> buf(32, 1.0f);
  Mask wrong = *Mask::Create(8, 9);
  Status s = cpu::MaskedAttention(buf.data(), buf.data(), buf.data(), buf.data(), w, wrong);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("mask"), std::string::npos) << s.Message();
  EXPECT_NE(s.Message().find("8 x 9"), std::string::npos) << s.Message();
  Mask ok = *Mask::Create(8, 8);
  s = cpu::MaskedAttention(buf.data(), nullptr, buf.data(), buf.data(), w, ok);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("k: must not be null"), std::string::npos) << s.Message();
  w.head_dim = 0;
  s = cpu::MaskedAttention(buf.data(), buf.data(), buf.data(), buf.data(), w, ok);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("head_dim"), std::string::npos) << s.Message();
}

TEST(ReferenceGemm, AllTransposesWithAlphaBeta) {
  std::mt19937_64 rng(42);
  const int64_t m = 5, n = 7, k = 3;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      auto a = RandomVec(static_cast<size_t>(m * k), rng);
      auto b = RandomVec(static_cast<size_t>(k * n), rng);
      auto c = RandomVec(static_cast<size_t>(m * n), rng);
      const float alpha = 1.5f, beta = -0.5f;
      std::vector<double> want(c.size());
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < k; ++p) {
            const double av = ta ? a[static_cast<size_t>(p * m + i)] : a[static_cast<size_t>(i * k + p)];
            const double bv = tb ? b[static_cast<size_t>(j * k + p)] : b[static_cast<size_t>(p * n + j)];
            acc += av * bv;
          }
          want[static_cast<size_t>(i * n + j)] = alpha * acc + beta * c[static_cast<size_t>(i * n + j)];
        }
      cpu::Gemm(a.data(), b.data(), c.data(), m, n, k, ta, tb, alpha, beta);
      for (size_t e = 0; e < c.size(); ++e)
        EXPECT_NEAR(c[e], want[e], 1e-6 * std::max(1.0, std::abs(want[e])))
            << "trans_a=" << ta << " trans_b=" << tb << " e=" << e;
    }
  }
}

TEST(ReferenceGemm, HandCaseAndBetaZeroIgnoresC) {
  // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50].
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  float c[] = {std::numeric_limits<float>::quiet_NaN(), 1e30f, -1, 2};
  cpu::Gemm(a, b, c, 2, 2, 2);
  EXPECT_EQ(c[0], 19.0f);
  EXPECT_EQ(c[1], 22.0f);
  EXPECT_EQ(c[2], 43.0f);
  EXPECT_EQ(c[3], 50.0f);
}

TEST(ReferenceOps, BiasAdd) {
  float x[] = {1, 2, 3, 4, 5, 6};
  const float bias[] = {10, 20, 30};
  cpu::BiasAdd(x, bias, 2, 3);
  const float want[] = {11, 22, 33, 14, 25, 36};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(x[i], want[i]);
}

TEST(ReferenceOps, GeluKnownValues) {
  // 0.5 x (1 + erf(x / sqrt 2)) = x * Phi(x); Phi(1) = 0.8413447460685429.
  float x[] = {1.0f, -1.0f, 0.0f, 3.0f};
  cpu::Gelu(x, 4);
  EXPECT_FLOAT_EQ(x[0], 0.8413447460685429f);
  EXPECT_FLOAT_EQ(x[1], -0.15865525393145707f);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_FLOAT_EQ(x[3], 2.9959502669431395f);  // 3 * Phi(3) = 3 * 0.9986501019683699
}

TEST(ReferenceOps, LayerNormKnownCase) {
  // x = [1 2 3 4]: mean 2.5, biased var = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25,
  // (x - mean) / sqrt(1.25) = [-1.3416407865, -0.4472135955, 0.4472135955, 1.3416407865];
  // second row with gamma = 2, beta = 1: 2 * that + 1. Constant row -> beta (var 0, eps > 0).
  const float x[] = {1, 2, 3, 4, 7, 7, 7, 7};
  float y[8];
  const float ones[] = {1, 1, 1, 1}, zeros[] = {0, 0, 0, 0};
  cpu::LayerNorm(x, y, ones, zeros, 2, 4, 0.0f);
  EXPECT_FLOAT_EQ(y[0], -1.3416407864998738f);
  EXPECT_FLOAT_EQ(y[1], -0.4472135954999579f);
  EXPECT_FLOAT_EQ(y[2], 0.4472135954999579f);
  EXPECT_FLOAT_EQ(y[3], 1.3416407864998738f);
  const float twos[] = {2, 2, 2, 2};
  cpu::LayerNorm(x, y, twos, ones, 2, 4, 1e-5f);
  EXPECT_NEAR(y[0], 2 * -1.3416407864998738 / std::sqrt(1 + 1e-5 / 1.25) + 1, 1e-6);
  EXPECT_NEAR(y[3], 2 * 1.3416407864998738 / std::sqrt(1 + 1e-5 / 1.25) + 1, 1e-6);
  for (int c = 4; c < 8; ++c) EXPECT_EQ(y[c], 1.0f);
}

TEST(ReferenceOps, SoftmaxHandCaseAndLargeInputs) {
  // softmax([1 2 3]) = e^[-2 -1 0] / (e^-2 + e^-1 + 1).
  float x[] = {1, 2, 3, 1000, 1001, -1000};
  cpu::Softmax(x, 1, 3);
  EXPECT_FLOAT_EQ(x[0], 0.09003057317038046f);
  EXPECT_FLOAT_EQ(x[1], 0.24472847105479767f);
  EXPECT_FLOAT_EQ(x[2], 0.6652409557748219f);
  // [1000, 1001, -1000]: exp(1001) overflows without max subtraction;
  // = [1/(1+e), e/(1+e), ~0] = [0.2689414213699951, 0.7310585786300049, 0].
  cpu::Softmax(x + 3, 1, 3);
  EXPECT_FLOAT_EQ(x[3], 0.2689414213699951f);
  EXPECT_FLOAT_EQ(x[4], 0.7310585786300049f);
  EXPECT_EQ(x[5], 0.0f);

  std::mt19937_64 rng(3);
  auto r = RandomVec(5 * 33, rng, -20.0f, 20.0f);
  cpu::Softmax(r.data(), 5, 33);
  for (int row = 0; row < 5; ++row) {
    double sum = 0;
    for (int c = 0; c < 33; ++c) {
      const float p = r[static_cast<size_t>(row * 33 + c)];
      EXPECT_FALSE(std::isnan(p));
      EXPECT_GE(p, 0.0f);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

// --- The layer ops of the fused kernels (reference.h, second block) ---

TEST(ReferenceOps, ActivationGeluIsTanhForm) {
  // 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))), computed in double by Python's math.
  float x[] = {1.0f, -1.0f, 3.0f, 0.0f};
  cpu::ApplyActivation(x, 4, Activation::kGelu);
  EXPECT_FLOAT_EQ(x[0], 0.8411919906082768f);
  EXPECT_FLOAT_EQ(x[1], -0.15880800939172324f);
  EXPECT_FLOAT_EQ(x[2], 2.996362607918227f);
  EXPECT_EQ(x[3], 0.0f);
  float r[] = {-2.0f, 0.5f};
  cpu::ApplyActivation(r, 2, Activation::kRelu);
  EXPECT_EQ(r[0], 0.0f);
  EXPECT_EQ(r[1], 0.5f);
  EXPECT_TRUE(ParseActivation("gelu", "x").IsOk());
  auto bad = ParseActivation("swish", "plan.json: act");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("plan.json: act"), std::string::npos);
}

TEST(ReferenceOps, RmsNormKnownCase) {
  // x = [1 2 3 4]: mean(x^2) = 7.5, y = x / sqrt(7.5 + eps) * gamma.
  const float x[] = {1, 2, 3, 4};
  const float gamma[] = {1, 1, 2, 2};
  float y[4];
  cpu::RmsNorm(x, y, gamma, 1, 4, 0.0f);
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(1 / std::sqrt(7.5)));
  EXPECT_FLOAT_EQ(y[3], static_cast<float>(8 / std::sqrt(7.5)));
}

TEST(ReferenceOps, LinearEpilogueHandCase) {
  // a = [[1 2]], w = [[1 0 -1], [2 1 0]]: a w = [5 2 -1]; + bias [1 -3 0] = [6 -1 -1];
  // ReLU -> [6 0 0]; + residual [1 1 1] = [7 1 1].
  const float a[] = {1, 2}, w[] = {1, 0, -1, 2, 1, 0}, bias[] = {1, -3, 0}, res[] = {1, 1, 1};
  float out[3];
  cpu::LinearEpilogue(a, w, bias, Activation::kRelu, res, out, 1, 3, 2);
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], 1.0f);
  cpu::LinearEpilogue(a, w, nullptr, Activation::kNone, nullptr, out, 1, 3, 2);
  EXPECT_EQ(out[2], -1.0f);
}

TEST(ReferenceOps, BiasAddNormMatchesSteps) {
  std::mt19937_64 rng(5);
  auto x = RandomVec(3 * 8, rng, -2, 2), res = RandomVec(3 * 8, rng, -2, 2);
  auto bias = RandomVec(8, rng, -1, 1), gamma = RandomVec(8, rng, 0.5f, 1.5f);
  auto beta = RandomVec(8, rng, -1, 1);
  std::vector<float> sum(x), want(24), got(24), want_rms(24);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 8; ++c) sum[r * 8 + c] = x[r * 8 + c] + bias[c] + res[r * 8 + c];
  cpu::LayerNorm(sum.data(), want.data(), gamma.data(), beta.data(), 3, 8, 1e-5f);
  cpu::BiasAddNorm(x.data(), bias.data(), res.data(), gamma.data(), beta.data(), got.data(), 3,
                   8, 1e-5f);
  for (int i = 0; i < 24; ++i) EXPECT_NEAR(got[i], want[i], 1e-5);
  cpu::RmsNorm(sum.data(), want_rms.data(), gamma.data(), 3, 8, 1e-6f);
  cpu::BiasAddNorm(x.data(), bias.data(), res.data(), gamma.data(), nullptr, got.data(), 3, 8,
                   1e-6f);
  for (int i = 0; i < 24; ++i) EXPECT_NEAR(got[i], want_rms[i], 1e-5);
}

TEST(ReferenceOps, ScaleMaskSoftmaxHandCaseAndEmptyRow) {
  // L = 2, mask [[1 1], [0 0]], scale 0.5: row 0 = softmax([2 4] * 0.5) = softmax([1 2]);
  // row 1 attends nothing: zeros.
  Mask m = *Mask::Create(2, 2);
  m.Set(0, 0, true);
  m.Set(0, 1, true);
  float s[] = {2, 4, 7, 9};
  ASSERT_TRUE(cpu::ScaleMaskSoftmax(s, 1, 2, m, 0.5f).IsOk());
  EXPECT_FLOAT_EQ(s[0], 0.2689414213699951f);
  EXPECT_FLOAT_EQ(s[1], 0.7310585786300049f);
  EXPECT_EQ(s[2], 0.0f);
  EXPECT_EQ(s[3], 0.0f);
  Mask wrong = *Mask::Create(3, 3);
  auto st = cpu::ScaleMaskSoftmax(s, 1, 2, wrong, 1.0f);
  ASSERT_FALSE(st.IsOk());
  EXPECT_NE(st.Message().find("mask"), std::string::npos);
}

TEST(ReferenceOps, SplitMergeHeadsRoundTrip) {
  // qkv rows [B=2, L=3] of 3 * H * d (H = 2, d = 4): split K (col offset H*d) then merge back.
  const int64_t B = 2, L = 3, H = 2, d = 4, stride = 3 * H * d;
  std::vector<float> qkv(static_cast<size_t>(B * L * stride));
  for (size_t i = 0; i < qkv.size(); ++i) qkv[i] = static_cast<float>(i);
  std::vector<float> k(static_cast<size_t>(B * H * L * d)), merged(static_cast<size_t>(B * L * H * d));
  cpu::SplitHeads(qkv.data(), stride, H * d, k.data(), B, L, H, d);
  // k[b=1, h=1, l=2, t=3] = qkv[(1*3 + 2) * 24 + 8 + 4 + 3] = 135.
  EXPECT_EQ(k[((1 * H + 1) * L + 2) * d + 3], 135.0f);
  cpu::MergeHeads(k.data(), merged.data(), B, L, H, d);
  for (int64_t r = 0; r < B * L; ++r)
    for (int64_t c = 0; c < H * d; ++c)
      EXPECT_EQ(merged[r * H * d + c], qkv[r * stride + H * d + c]);
}
