// GPU: the fused GEMM chain (kernels/gemm_chain/gemm_chain.h, MCFuser's mhnk expression)
// against the CPU reference. Cases: MCFuser's Table II shapes G1-G12 with the default (first
// supported) params; every supported params for G2, G6, G10 and a shape with ragged tiles in
// every dimension; the BERT FFN form (k 768, n 3072, h 768: bh < h, so GEMM 1 is recomputed)
// with bias1 + GELU + bias2 under every supported params, and with ReLU; batch > 1 with
// shared weights (stride 0); padded batch strides (the gaps must stay untouched); ragged m
// (1, 100). Each run: fresh seeded inputs rounded to fp16 on the host, E poisoned (0xFF bytes
// = NaN) with a guard tail, then every written element finite and within tolerance, every
// other element (gaps, guard) still poisoned.
// Reference: per batch, cpu::LinearEpilogue twice in double: C = act(A B + bias1), rounded to
// fp16 (as the kernel rounds C before GEMM 2), then E = C D + bias2.
// The tests named *Host* need no GPU (argument/parameter checks, the supported lists): they
// run wherever the kernels build.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "device_buffer.h"
#include "engine/core/activation.h"
#include "engine/cpu/reference.h"
#include "gpu_test_util.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/gemm_chain/gemm_chain.h"

namespace {

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
constexpr double kRelTol = 2e-3;
constexpr double kAbsTol = 1e-3;
constexpr uint16_t kPoison = 0xFFFF;  // fp16 NaN
constexpr int64_t kGuard = 256;       // poisoned elements after E: nothing may land there

struct ChainCase {
  std::string name;
  sk::GemmChainArgs shape;  // batch, m, n, k, h, strides, act (pointers unset)
  bool bias1 = false, bias2 = false;
};

ChainCase Case(std::string name, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t h,
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
std::vector<ChainCase> TableII() {
  return {Case("G1", 1, 512, 256, 64, 64),     Case("G2", 1, 512, 256, 64, 128),
          Case("G3", 1, 512, 256, 64, 256),    Case("G4", 1, 512, 512, 256, 256),
          Case("G5", 1, 512, 512, 512, 256),   Case("G6", 1, 512, 512, 1024, 256),
          Case("G7", 1, 512, 512, 128, 128),   Case("G8", 1, 1024, 512, 128, 128),
          Case("G9", 1, 2048, 512, 128, 128),  Case("G10", 1, 1024, 1024, 128, 128),
          Case("G11", 4, 1024, 1024, 128, 128), Case("G12", 8, 1024, 1024, 128, 128)};
}

// BERT-base FFN at B * L = 256 rows: E = act(A W1 + b1) W2 + b2.
ChainCase Ffn(se::Activation act) {
  return Case(std::string("ffn_") + stof::engine::ActivationName(act), 1, 256, 3072, 768, 768,
              act, true, true);
}

int64_t Resolved(int64_t stride, int64_t packed) { return stride == -1 ? packed : stride; }

// Elements of a [batch] x `size` buffer with `stride` (-1 packed, 0 shared).
int64_t Span(int64_t batch, int64_t stride, int64_t size) {
  const int64_t s = Resolved(stride, size);
  return s == 0 ? size : (batch - 1) * s + size;
}

// n values uniform in [-scale, scale), rounded to fp16, drawn from `state`.
st::HalfVec Fill(int64_t n, double scale, uint64_t& state) {
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
ChainData MakeData(const ChainCase& c, uint64_t seed) {
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

// One checked run of `p`: E poisoned, launched, synchronised, compared.
void CheckRun(const ChainData& x, DeviceChain& dev, const sk::GemmChainParams& p) {
  const sk::GemmChainArgs& s = x.c.shape;
  SCOPED_TRACE(x.c.name + " (batch " + std::to_string(s.batch) + ", m " + std::to_string(s.m) +
               ", n " + std::to_string(s.n) + ", k " + std::to_string(s.k) + ", h " +
               std::to_string(s.h) + ", act " + stof::engine::ActivationName(s.act) +
               (x.c.bias1 ? ", bias1" : "") + (x.c.bias2 ? ", bias2" : "") + ") at " +
               sk::GemmChainParamsName(p));
  ASSERT_TRUE(dev.e.Poison().IsOk());
  auto run = sk::LaunchGemmChain(dev.Args(x), p, nullptr);
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

int64_t SmemOptin() { return st::SharedBackend()->Device().smem_per_block_bytes; }

// Every supported params of `c` (or only the first with `default_only`).
void CheckCase(const ChainCase& c, uint64_t seed, bool default_only) {
  ASSERT_NE(st::SharedBackend(), nullptr) << "CudaBackend::Create failed";
  const ChainData x = MakeData(c, seed);
  DeviceChain dev(x);
  ASSERT_TRUE(dev.Upload(x));
  const auto params = sk::SupportedGemmChainParams(dev.Args(x), SmemOptin());
  ASSERT_FALSE(params.empty()) << c.name << ": no supported params";
  for (const sk::GemmChainParams& p : params) {
    CheckRun(x, dev, p);
    if (default_only) break;
  }
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- GPU ----

TEST(GemmChain, TableIIShapesDefaultParams) {
  STOF_REQUIRE_GPU();
  uint64_t seed = 1;
  for (const ChainCase& c : TableII()) CheckCase(c, seed++, true);
}

TEST(GemmChain, EverySupportedParams) {
  STOF_REQUIRE_GPU();
  const auto g = TableII();
  CheckCase(g[1], 21, false);  // G2: K = 64 (A stays), H = 128
  CheckCase(g[5], 22, false);  // G6: K = 1024 (16 k tiles), H = 256
  CheckCase(g[9], 23, false);  // G10: N = 1024, K = H = 128
  // Ragged tiles everywhere: m = 100 (last m tile partial), n = 208, k = 80, h = 144 (none a
  // multiple of 64, so the last n, k and h tiles are partial: zero-filled loads, guarded
  // bias reads, no stores past h), with both biases and GELU.
  CheckCase(Case("ragged_tiles", 1, 100, 208, 80, 144, se::Activation::kGelu, true, true), 24,
            false);
}

TEST(GemmChain, FfnGeluBiasesEverySupportedParams) {
  STOF_REQUIRE_GPU();
  CheckCase(Ffn(se::Activation::kGelu), 31, false);
}

TEST(GemmChain, FfnRelu) {
  STOF_REQUIRE_GPU();
  CheckCase(Ffn(se::Activation::kRelu), 32, true);
}

TEST(GemmChain, BatchWithSharedWeights) {
  STOF_REQUIRE_GPU();
  // Three sequences of 96 rows through one FFN: W1 and W2 (b, d) shared with stride 0.
  ChainCase c = Case("shared_weights", 3, 96, 512, 256, 256, se::Activation::kGelu, true, true);
  c.shape.stride_b = 0;
  c.shape.stride_d = 0;
  CheckCase(c, 41, false);
  // Only A shared (one input, batched weights): stride_a = 0.
  ChainCase c2 = Case("shared_a", 2, 64, 256, 128, 128);
  c2.shape.stride_a = 0;
  CheckCase(c2, 42, true);
}

TEST(GemmChain, PaddedBatchStrides) {
  STOF_REQUIRE_GPU();
  // Gaps between batches in A, B, D and E; E's gaps must keep their poison.
  ChainCase c = Case("padded_strides", 3, 80, 256, 128, 128, se::Activation::kRelu, true, false);
  c.shape.stride_a = 80 * 128 + 64;
  c.shape.stride_b = 128 * 256 + 8;
  c.shape.stride_d = 256 * 128 + 256;
  c.shape.stride_e = 80 * 128 + 136;
  CheckCase(c, 51, false);
}

TEST(GemmChain, RaggedRows) {
  STOF_REQUIRE_GPU();
  // m = 1: only bm = 16 fits (a decode step through an FFN); m = 100: the last m tile holds
  // 4, 36 or 100 rows depending on bm.
  CheckCase(Case("m1", 1, 1, 512, 256, 256, se::Activation::kGelu, true, true), 61, false);
  CheckCase(Case("m100", 1, 100, 512, 256, 256, se::Activation::kGelu, true, true), 62, false);
  CheckCase(Case("m100_g7", 2, 100, 512, 128, 128), 63, false);
}

TEST(GemmChain, LaunchRejectsBadParams) {
  STOF_REQUIRE_GPU();
  ASSERT_NE(st::SharedBackend(), nullptr) << "CudaBackend::Create failed";
  const ChainData x = MakeData(TableII()[0], 71);  // G1: h = 64
  DeviceChain dev(x);
  ASSERT_TRUE(dev.Upload(x));
  auto s = sk::LaunchGemmChain(dev.Args(x), sk::GemmChainParams{64, 64, 64, 256, 8}, nullptr);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "params.bh")) << s.Message();
  s = sk::LaunchGemmChain(dev.Args(x), sk::GemmChainParams{48, 64, 32, 64, 4}, nullptr);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "params:")) << s.Message();
}

// ---- host only (no GPU needed) ----

// A valid G7-like call with fake (aligned, never dereferenced) pointers.
sk::GemmChainArgs ValidArgs() {
  alignas(16) static char fake[64];
  sk::GemmChainArgs a;
  a.m = 512;
  a.n = 512;
  a.k = 128;
  a.h = 128;
  a.a = fake;
  a.b = fake;
  a.d = fake;
  a.e = fake;
  return a;
}

void ExpectArgError(const sk::GemmChainArgs& a, const std::string& field) {
  auto s = sk::CheckGemmChainArgs(a);
  ASSERT_FALSE(s.IsOk()) << "expected an error naming " << field;
  EXPECT_TRUE(Contains(s.Message(), "gemm_chain: " + field + ":")) << s.Message();
  // LaunchGemmChain checks the arguments before touching the device.
  auto l = sk::LaunchGemmChain(a, sk::GemmChainParams{}, nullptr);
  ASSERT_FALSE(l.IsOk());
  EXPECT_EQ(l.Message(), s.Message());
}

TEST(GemmChainHost, BadArgsNameTheField) {
  ASSERT_TRUE(sk::CheckGemmChainArgs(ValidArgs()).IsOk());
  sk::GemmChainArgs a = ValidArgs();
  a.h = 100;  // not a multiple of 16
  ExpectArgError(a, "h");
  a = ValidArgs();
  a.n = 0;
  ExpectArgError(a, "n");
  a = ValidArgs();
  a.k = -16;
  ExpectArgError(a, "k");
  a = ValidArgs();
  a.m = 0;
  ExpectArgError(a, "m");
  a = ValidArgs();
  a.batch = 0;
  ExpectArgError(a, "batch");
  a = ValidArgs();
  a.d = nullptr;
  ExpectArgError(a, "d");
  a = ValidArgs();
  a.e = nullptr;
  ExpectArgError(a, "e");
  a = ValidArgs();
  a.a = static_cast<const char*>(a.a) + 2;  // not 16-byte aligned
  ExpectArgError(a, "a");
  a = ValidArgs();
  a.bias1 = static_cast<const char*>(a.a) + 1;  // not fp16-aligned
  ExpectArgError(a, "bias1");
  a = ValidArgs();
  a.batch = 2;
  a.stride_e = 0;  // every batch writing one E
  ExpectArgError(a, "stride_e");
  a = ValidArgs();
  a.batch = 2;
  a.stride_a = 512 * 128 - 8;  // batches would overlap
  ExpectArgError(a, "stride_a");
  a = ValidArgs();
  a.stride_b = -2;
  ExpectArgError(a, "stride_b");
  a = ValidArgs();
  a.act = static_cast<se::Activation>(7);
  ExpectArgError(a, "act");
}

TEST(GemmChainHost, BadParamsNameTheField) {
  const sk::GemmChainArgs a = ValidArgs();  // m = n = 512, k = h = 128
  auto expect = [&](const sk::GemmChainParams& p, const std::string& field, int64_t smem) {
    auto s = sk::CheckGemmChainParams(a, p, smem);
    ASSERT_FALSE(s.IsOk()) << sk::GemmChainParamsName(p) << ": expected an error naming " << field;
    EXPECT_TRUE(Contains(s.Message(), "gemm_chain: " + field + ":")) << s.Message();
  };
  expect({48, 64, 64, 128, 4}, "params",
         sk::kHopperSmemPerBlock);  // multiple of 16, not instantiated
  expect({64, 64, 20, 128, 4}, "params.bk", sk::kHopperSmemPerBlock);
  expect({64, 64, 64, 128, 2}, "params.warps", sk::kHopperSmemPerBlock);
  expect({64, 64, 64, 256, 8}, "params.bh", sk::kHopperSmemPerBlock);  // bh 256 > h 128
  expect({64, 64, 128, 128, 4}, "params", 100000);  // needs 115712 bytes
  sk::GemmChainArgs one = a;
  one.m = 1;  // only bm = 16 fits
  auto s = sk::CheckGemmChainParams(one, {32, 64, 64, 128, 4}, sk::kHopperSmemPerBlock);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "params.bm")) << s.Message();
  sk::GemmChainArgs small_k = a;
  small_k.k = 32;
  s = sk::CheckGemmChainParams(small_k, {64, 64, 64, 128, 4}, sk::kHopperSmemPerBlock);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "params.bk")) << s.Message();
  EXPECT_TRUE(sk::CheckGemmChainParams(a, {64, 64, 128, 128, 4}, sk::kHopperSmemPerBlock).IsOk());
}

TEST(GemmChainHost, SupportedListsCoverTheTargetShapes) {
  std::vector<ChainCase> cases = TableII();
  cases.push_back(Ffn(se::Activation::kGelu));
  cases.push_back(Case("ffn_b8_l512", 1, 4096, 3072, 768, 768, se::Activation::kGelu, true, true));
  cases.push_back(Case("m1", 1, 1, 512, 256, 256));
  for (const ChainCase& c : cases) {
    const auto list = sk::SupportedGemmChainParams(c.shape, sk::kHopperSmemPerBlock);
    ASSERT_FALSE(list.empty()) << c.name;
    for (const sk::GemmChainParams& p : list) {
      auto s = sk::CheckGemmChainParams(c.shape, p, sk::kHopperSmemPerBlock);
      EXPECT_TRUE(s.IsOk()) << c.name << " " << sk::GemmChainParamsName(p) << ": " << s.Message();
    }
    std::string names;
    for (const sk::GemmChainParams& p : list) {
      names += ' ';  // not " " + string&&: GCC 12 -Wrestrict false positive
      names += sk::GemmChainParamsName(p);
    }
    std::printf("%s:%s\n", c.name.c_str(), names.c_str());  // the default first
  }
  // The FFN needs bh < h: GEMM 1 is recomputed.
  for (const sk::GemmChainParams& p :
       sk::SupportedGemmChainParams(Ffn(se::Activation::kGelu).shape, sk::kHopperSmemPerBlock))
    EXPECT_LT(p.bh, 768);
  // An invalid shape has no supported params.
  sk::GemmChainArgs bad = TableII()[0].shape;
  bad.h = 100;
  EXPECT_TRUE(sk::SupportedGemmChainParams(bad, sk::kHopperSmemPerBlock).empty());
}

// The test's threaded, strided reference against plain loops (so a GPU failure is the kernel's).
TEST(GemmChainHost, ReferenceMatchesPlainLoops) {
  ChainCase c = Case("tiny", 2, 37, 32, 48, 16, se::Activation::kGelu, true, true);
  c.shape.stride_a = 37 * 48 + 40;
  c.shape.stride_b = 0;
  const ChainData x = MakeData(c, 5);
  const sk::GemmChainArgs& s = c.shape;
  double worst = 0;
  for (int64_t bi = 0; bi < s.batch; ++bi) {
    for (int64_t r = 0; r < s.m; ++r) {
      std::vector<double> cr(static_cast<size_t>(s.n));
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = x.bias1.f[static_cast<size_t>(j)];
        for (int64_t p = 0; p < s.k; ++p)
          acc += double(x.a.f[static_cast<size_t>(bi * s.stride_a + r * s.k + p)]) *
                 x.b.f[static_cast<size_t>(p * s.n + j)];
        cr[static_cast<size_t>(j)] =
            st::HalfToFloat(st::FloatToHalf(float(stof::engine::Activate(s.act, acc))));
      }
      for (int64_t col = 0; col < s.h; ++col) {
        double acc = x.bias2.f[static_cast<size_t>(col)];
        for (int64_t j = 0; j < s.n; ++j)
          acc += cr[static_cast<size_t>(j)] *
                 x.d.f[static_cast<size_t>(bi * s.n * s.h + j * s.h + col)];
        const double got = x.ref[static_cast<size_t>((bi * s.m + r) * s.h + col)];
        worst = std::max(worst, std::fabs(got - acc) / std::max(1e-3, std::fabs(acc)));
      }
    }
  }
  EXPECT_LT(worst, 1e-5);
}

TEST(GemmChainHost, SharedBytesFormula) {
  // 2 * [2 bm (bk + 8) + 2 bk (bn + 8) + bm (bn + 8) + 2 bn (bh + 8)] (docs).
  EXPECT_EQ(sk::GemmChainSharedBytes({64, 64, 32, 64, 4}),
            2 * (2 * 64 * 40 + 2 * 32 * 72 + 64 * 72 + 2 * 64 * 72));  // 47104
  EXPECT_EQ(sk::GemmChainSharedBytes({64, 64, 128, 128, 4}), 115712);
  EXPECT_EQ(sk::GemmChainSharedBytes({16, 64, 64, 256, 4}), 92928);
  // Not instantiated but well formed: still answered (the engine's model explores).
  EXPECT_EQ(sk::GemmChainSharedBytes({128, 128, 32, 128, 8}),
            2 * (2 * 128 * 40 + 2 * 32 * 136 + 128 * 136 + 2 * 128 * 136));
  EXPECT_EQ(sk::GemmChainSharedBytes({64, 64, 32, 48, 4}), 0);  // 2 x 2 warps: bh / 2 = 24 columns
  EXPECT_EQ(sk::GemmChainSharedBytes({64, 64, 24, 64, 4}), 0);  // bk not a multiple of 16
  EXPECT_EQ(sk::GemmChainSharedBytes({64, 64, 32, 64, 2}), 0);  // 2 warps
  for (const sk::GemmChainParams& p : sk::AllGemmChainParams()) {
    EXPECT_GT(sk::GemmChainSharedBytes(p), 0) << sk::GemmChainParamsName(p);
    EXPECT_LE(sk::GemmChainSharedBytes(p), sk::kHopperSmemPerBlock) << sk::GemmChainParamsName(p);
  }
  // The struct's default is instantiated.
  EXPECT_NE(std::find(sk::AllGemmChainParams().begin(), sk::AllGemmChainParams().end(),
                      sk::GemmChainParams{}),
            sk::AllGemmChainParams().end());
}

}  // namespace
