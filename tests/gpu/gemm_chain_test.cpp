// GPU: the fused GEMM chain (kernels/gemm_chain/gemm_chain.h, MCFuser's mhnk expression)
// against the CPU reference. Cases: MCFuser's Table II shapes G1-G12 with the default (first
// supported) params; every supported params for G2, G6, G10 and a shape with ragged tiles in
// every dimension; the BERT FFN form (k 768, n 3072, h 768: bh < h, so GEMM 1 is recomputed)
// with bias1 + GELU + bias2 under every supported params, and with ReLU; batch > 1 with
// shared weights (stride 0); padded batch strides (the gaps must stay untouched); ragged m
// (1, 100). Each run: fresh seeded inputs rounded to fp16 on the host, E poisoned (0xFF bytes
// = NaN) with a guard tail, then every written element finite and within tolerance, every
// other element (gaps, guard) still poisoned (the cases, reference and check:
// chain_test_util.h).
// The tests named *Host* need no GPU (argument/parameter checks, the supported lists): they
// run wherever the kernels build.
#include <cstdint>
#include <string>
#include <vector>

#include "chain_test_util.h"
#include "device_buffer.h"
#include "engine/core/activation.h"
#include "gpu_test_util.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/gemm_chain/gemm_chain.h"

namespace {

namespace se = stof::engine;
namespace sk = stof::kernels;
namespace st = stof::testing;

using namespace stof::testing::chain;  // NOLINT: the cases and checks of chain_test_util.h

// One checked run of the mhnk kernel at `p`.
void CheckRun(const ChainData& x, DeviceChain& dev, const sk::GemmChainParams& p) {
  CheckChainRun(x, dev, sk::GemmChainParamsName(p),
                [&](const sk::GemmChainArgs& args) { return sk::LaunchGemmChain(args, p, nullptr); });
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
  CheckCase(SharedWeights(), 41, false);
  CheckCase(SharedA(), 42, true);
}

TEST(GemmChain, PaddedBatchStrides) {
  STOF_REQUIRE_GPU();
  CheckCase(PaddedStrides(), 51, false);
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
