// Shared by the GEMM-chain GPU tests (gemm_chain_test.cpp: the mhnk kernel;
// hopper_chain_test.cpp: the Hopper kernel): the cases (MCFuser's Table II, the FFN form),
// seeded fp16 inputs with the CPU reference, the device buffers with E poisoned and a guard
// tail, and the check of one run against the reference.
// Reference: per batch, cpu::LinearEpilogue twice in double: C = act(A B + bias1), rounded to
// fp16 (as the kernels round C before GEMM 2), then E = C D + bias2.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device_buffer.h"
#include "engine/core/activation.h"
#include "engine/core/status.h"
#include "engine/cpu/reference.h"
#include "kernels/gemm_chain/gemm_chain.h"

namespace stof::testing::chain {

namespace se = stof::engine;
namespace sk = stof::kernels;
namespace st = stof::testing;

// Tolerance: |out - ref| <= kRelTol |ref| + kAbsTol max|ref of that batch|.
// Expected error: E's rounding to fp16 (unit roundoff u = 2^-11 = 4.9e-4 of |E|) dominates.
// C is rounded to fp16 on both sides; fp32 (kernel) and double (reference) accumulations of C
// differ by ~k 2^-24 |terms|, far below an fp16 ulp, so the two roundings agree except next
// to a rounding boundary, where C differs by one ulp (~5e-4 |C|) and moves E by ~5e-4 |C| |D|
// (|D| <= 3 / sqrt(n) here): a few 1e-5 of E's scale. GELU in fp32 (tanhf) vs double: a few
// fp32 ulps, the same effect. fp32 accumulation of E over n <= 3072 terms: ~1e-6. So 4 u
// relative, plus 1e-3 of the batch's largest |E| for elements near zero, where cancellation
// leaves relative error unbounded. A dropped or doubled tile of n or k moves E by tens of
// percent of its scale, a wrong bias or activation likewise.
inline constexpr double kRelTol = 2e-3;
inline constexpr double kAbsTol = 1e-3;
inline constexpr uint16_t kPoison = 0xFFFF;  // fp16 NaN
inline constexpr int64_t kGuard = 256;       // poisoned elements after E: nothing may land there

struct ChainCase {
  std::string name;
  sk::GemmChainArgs shape;  // batch, m, n, k, h, strides, act (pointers unset)
  bool bias1 = false, bias2 = false;
};

inline ChainCase Case(std::string name, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t h,
               se::Activation act = se::Activation::kNone, bool bias1 = false, bool bias2 = false) {
  ChainCase c;
  c.name = std::move(name);
  c.shape.batch = batch;
  c.shape.m = m;
  c.shape.n = n;
  c.shape.k = k;
  c.shape.h = h;
  c.shape.act = act;
  c.bias1 = bias1;
  c.bias2 = bias2;
  return c;
}

// MCFuser Table II, (batch, M, N, K, H).
inline std::vector<ChainCase> TableII() {
  return {Case("G1", 1, 512, 256, 64, 64),     Case("G2", 1, 512, 256, 64, 128),
          Case("G3", 1, 512, 256, 64, 256),    Case("G4", 1, 512, 512, 256, 256),
          Case("G5", 1, 512, 512, 512, 256),   Case("G6", 1, 512, 512, 1024, 256),
          Case("G7", 1, 512, 512, 128, 128),   Case("G8", 1, 1024, 512, 128, 128),
          Case("G9", 1, 2048, 512, 128, 128),  Case("G10", 1, 1024, 1024, 128, 128),
          Case("G11", 4, 1024, 1024, 128, 128), Case("G12", 8, 1024, 1024, 128, 128)};
}

// BERT-base FFN at B * L = 256 rows: E = act(A W1 + b1) W2 + b2.
inline ChainCase Ffn(se::Activation act) {
  return Case(std::string("ffn_") + stof::engine::ActivationName(act), 1, 256, 3072, 768, 768,
              act, true, true);
}

// Three sequences of 96 rows through one FFN: W1 and W2 (b, d) shared with stride 0.
inline ChainCase SharedWeights() {
  ChainCase c = Case("shared_weights", 3, 96, 512, 256, 256, se::Activation::kGelu, true, true);
  c.shape.stride_b = 0;
  c.shape.stride_d = 0;
  return c;
}

// Only A shared (one input, batched weights): stride_a = 0.
inline ChainCase SharedA() {
  ChainCase c = Case("shared_a", 2, 64, 256, 128, 128);
  c.shape.stride_a = 0;
  return c;
}

// Gaps between batches in A, B, D and E; E's gaps must keep their poison.
inline ChainCase PaddedStrides() {
  ChainCase c = Case("padded_strides", 3, 80, 256, 128, 128, se::Activation::kRelu, true, false);
  c.shape.stride_a = 80 * 128 + 64;
  c.shape.stride_b = 128 * 256 + 8;
  c.shape.stride_d = 256 * 128 + 256;
  c.shape.stride_e = 80 * 128 + 136;
  return c;
}

inline int64_t Resolved(int64_t stride, int64_t packed) { return stride == -1 ? packed : stride; }

// Elements of a [batch] x `size` buffer with `stride` (-1 packed, 0 shared).
inline int64_t Span(int64_t batch, int64_t stride, int64_t size) {
  const int64_t s = Resolved(stride, size);
  return s == 0 ? size : (batch - 1) * s + size;
}

// n values uniform in [-scale, scale), rounded to fp16, drawn from `state`.
inline st::HalfVec Fill(int64_t n, double scale, uint64_t& state) {
  return st::RandomHalves(n, state, [scale](double u) { return scale * (2.0 * u - 1.0); });
}

// Host inputs and the reference of one case.
struct ChainData {
  ChainCase c;
  st::HalfVec a, b, d, bias1, bias2;
  std::vector<float> ref;  // [batch][m][h], packed
};

// A in [-1, 1); B in [-3 / sqrt(k), 3 / sqrt(k)) so C has a standard deviation near 1 (the
// activations see both signs and GELU's curved part); D likewise over n; biases in
// [-0.5, 0.5).
inline ChainData MakeData(const ChainCase& c, uint64_t seed) {
  ChainData x;
  x.c = c;
  const sk::GemmChainArgs& s = c.shape;
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 7;
  x.a = Fill(Span(s.batch, s.stride_a, s.m * s.k), 1.0, state);
  x.b = Fill(Span(s.batch, s.stride_b, s.k * s.n), 3.0 / std::sqrt(double(s.k)), state);
  x.d = Fill(Span(s.batch, s.stride_d, s.n * s.h), 3.0 / std::sqrt(double(s.n)), state);
  if (c.bias1) x.bias1 = Fill(s.n, 0.5, state);
  if (c.bias2) x.bias2 = Fill(s.h, 0.5, state);

  // The reference, threaded over (batch, row chunk): rows are independent in both GEMMs.
  x.ref.assign(static_cast<size_t>(s.batch * s.m * s.h), 0.f);
  const int64_t hw = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t chunk = std::max<int64_t>(16, (s.batch * s.m + hw - 1) / hw);
  std::vector<std::thread> threads;
  for (int64_t bi = 0; bi < s.batch; ++bi) {
    for (int64_t r0 = 0; r0 < s.m; r0 += chunk) {
      threads.emplace_back([&x, &s, bi, r0, chunk] {
        const int64_t rows = std::min(chunk, s.m - r0);
        const float* a = x.a.f.data() + bi * Resolved(s.stride_a, s.m * s.k) + r0 * s.k;
        const float* b = x.b.f.data() + bi * Resolved(s.stride_b, s.k * s.n);
        const float* d = x.d.f.data() + bi * Resolved(s.stride_d, s.n * s.h);
        std::vector<float> cm(static_cast<size_t>(rows * s.n));
        stof::engine::cpu::LinearEpilogue(a, b, x.c.bias1 ? x.bias1.f.data() : nullptr, s.act,
                                          nullptr, cm.data(), rows, s.n, s.k);
        for (float& v : cm) v = st::HalfToFloat(st::FloatToHalf(v));  // the kernel's fp16 C
        stof::engine::cpu::LinearEpilogue(cm.data(), d, x.c.bias2 ? x.bias2.f.data() : nullptr,
                                          se::Activation::kNone, nullptr,
                                          x.ref.data() + (bi * s.m + r0) * s.h, rows, s.h, s.n);
      });
      if (static_cast<int64_t>(threads.size()) >= hw) {
        for (auto& t : threads) t.join();
        threads.clear();
      }
    }
  }
  for (auto& t : threads) t.join();
  return x;
}

// The inputs of one case on the device (an absent bias: an unused 16-byte buffer), and E
// with its guard tail.
struct DeviceChain {
  explicit DeviceChain(const ChainData& x)
      : a(x.a.Bytes()), b(x.b.Bytes()), d(x.d.Bytes()), bias1(x.bias1.Bytes()),
        bias2(x.bias2.Bytes()),
        e_elems(Span(x.c.shape.batch, x.c.shape.stride_e, x.c.shape.m * x.c.shape.h) + kGuard),
        e(static_cast<size_t>(e_elems) * 2) {}
  ::testing::AssertionResult Upload(const ChainData& x) {
    for (const auto& [buf, host] :
         {std::pair{&a, &x.a}, std::pair{&b, &x.b}, std::pair{&d, &x.d},
          std::pair{&bias1, &x.bias1}, std::pair{&bias2, &x.bias2}}) {
      if (!buf->Ok()) return ::testing::AssertionFailure() << "allocation failed";
      auto s = buf->Upload(*host);
      if (!s.IsOk()) return ::testing::AssertionFailure() << s.Message();
    }
    if (!e.Ok()) return ::testing::AssertionFailure() << "allocation failed";
    return ::testing::AssertionSuccess();
  }
  sk::GemmChainArgs Args(const ChainData& x) const {
    sk::GemmChainArgs g = x.c.shape;
    g.a = a.Ptr();
    g.b = b.Ptr();
    g.d = d.Ptr();
    g.e = e.Ptr();
    g.bias1 = x.c.bias1 ? bias1.Ptr() : nullptr;
    g.bias2 = x.c.bias2 ? bias2.Ptr() : nullptr;
    return g;
  }
  st::DeviceBuffer a, b, d, bias1, bias2;
  int64_t e_elems;
  st::DeviceBuffer e;
};

// One checked run: E poisoned, `launch(args)` (a kernel family's launch of the case on the
// default stream), synchronised, compared; `label` names the kernel and its parameters.
inline void CheckChainRun(const ChainData& x, DeviceChain& dev, const std::string& label,
                          const std::function<se::Status(const sk::GemmChainArgs&)>& launch) {
  const sk::GemmChainArgs& s = x.c.shape;
  SCOPED_TRACE(x.c.name + " (batch " + std::to_string(s.batch) + ", m " + std::to_string(s.m) +
               ", n " + std::to_string(s.n) + ", k " + std::to_string(s.k) + ", h " +
               std::to_string(s.h) + ", act " + stof::engine::ActivationName(s.act) +
               (x.c.bias1 ? ", bias1" : "") + (x.c.bias2 ? ", bias2" : "") + ") at " + label);
  ASSERT_TRUE(dev.e.Poison().IsOk());
  auto run = launch(dev.Args(x));
  ASSERT_TRUE(run.IsOk()) << run.Message();
  auto downloaded = dev.e.Download(dev.e_elems);  // synchronises first
  ASSERT_TRUE(downloaded.IsOk()) << downloaded.Message();
  const std::vector<uint16_t>& out = *downloaded;

  const int64_t se = Resolved(s.stride_e, s.m * s.h);
  std::vector<uint8_t> written(out.size(), 0);
  int64_t bad = 0, non_finite = 0;
  double worst = 0;  // worst |out - ref| / allowed
  std::string worst_at;
  for (int64_t bi = 0; bi < s.batch; ++bi) {
    const float* ref = x.ref.data() + bi * s.m * s.h;
    double scale = 0;
    for (int64_t i = 0; i < s.m * s.h; ++i) scale = std::max(scale, std::fabs(double(ref[i])));
    for (int64_t r = 0; r < s.m; ++r) {
      for (int64_t c = 0; c < s.h; ++c) {
        const size_t idx = static_cast<size_t>(bi * se + r * s.h + c);
        written[idx] = 1;
        const float o = st::HalfToFloat(out[idx]);
        const double rv = ref[r * s.h + c];
        if (!std::isfinite(o)) {
          if (non_finite++ == 0)
            worst_at = "first non-finite at batch " + std::to_string(bi) + " row " +
                       std::to_string(r) + " col " + std::to_string(c);
          continue;
        }
        const double allowed = kRelTol * std::fabs(rv) + kAbsTol * scale;
        const double ratio = std::fabs(o - rv) / allowed;
        if (ratio > 1) ++bad;
        if (non_finite == 0 && ratio > worst) {
          worst = ratio;
          std::ostringstream os;
          os << "batch " << bi << " row " << r << " col " << c << ": out " << o << " ref " << rv
             << " (batch max |ref| " << scale << ")";
          worst_at = os.str();
        }
      }
    }
  }
  int64_t clobbered = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (!written[i] && out[i] != kPoison) ++clobbered;
  EXPECT_EQ(non_finite, 0) << "non-finite or unwritten outputs; " << worst_at;
  EXPECT_EQ(bad, 0) << bad << " elements beyond |out - ref| <= " << kRelTol << " |ref| + "
                    << kAbsTol << " max|ref|; worst " << worst << "x the allowance at "
                    << worst_at;
  EXPECT_EQ(clobbered, 0) << "elements outside E (batch gaps, the guard tail) were written";
}

inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace stof::testing::chain
