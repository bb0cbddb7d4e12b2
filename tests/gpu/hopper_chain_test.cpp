// GPU: the Hopper GEMM chain (kernels/gemm_chain_hopper/hopper_chain.h) against the CPU
// reference of chain_test_util.h (fp16 inputs, C rounded to fp16, E poisoned with a guard
// tail, every written element within tolerance, nothing else written). Cases: MCFuser's Table
// II shapes G1-G12 at every cluster size that runs them (the partial sums of a cluster's CTAs
// reduced through distributed shared memory, pushed and pulled); ragged tiles in every
// dimension with both biases and GELU; the FFN form at h = 256 with ReLU; batches with shared
// weights, padded strides and ragged rows (m = 1, 100); the launch through
// CudaBackend::RunGemmChain (params "cluster", "reduce"); bad parameters refused by name. Tests
// named *Host* need no GPU (the checks and the cluster lists); the others skip on a GPU that is
// not compute capability 9.0.
#include <cstdint>
#include <string>
#include <vector>

#include "chain_test_util.h"
#include "device_buffer.h"
#include "engine/core/activation.h"
#include "engine/layer_ops.h"
#include "gpu_test_util.h"
#include "kernels/common/hopper/device_check.h"
#include "kernels/gemm_chain_hopper/hopper_chain.h"

#define STOF_REQUIRE_SM90()                                                        \
  do {                                                                             \
    STOF_REQUIRE_GPU();                                                            \
    auto stof_dev_ = ::stof::kernels::hopper::CheckSm90aDevice("Hopper chain: "); \
    if (!stof_dev_.IsOk()) GTEST_SKIP() << "SKIPPED: " << stof_dev_.Message();    \
  } while (0)

namespace {

using namespace stof::testing::chain;  // NOLINT: the cases and checks of chain_test_util.h

// Every cluster size that runs `c` (or only the default one with `default_only`).
void CheckClusters(const ChainCase& c, uint64_t seed, bool default_only) {
  const ChainData x = MakeData(c, seed);
  DeviceChain dev(x);
  ASSERT_TRUE(dev.Upload(x));
  std::vector<int> clusters = sk::HopperChainClusters(dev.Args(x));
  ASSERT_FALSE(clusters.empty()) << c.name << ": no cluster size runs it";
  if (default_only) clusters = {0};
  for (int cluster : clusters) {
    for (auto reduce : {sk::HopperChainReduce::kPush, sk::HopperChainReduce::kPull}) {
      const sk::HopperChainParams p{cluster, reduce};
      CheckChainRun(x, dev,
                    "Hopper cluster " + std::to_string(cluster) +
                        (reduce == sk::HopperChainReduce::kPush ? " push" : " pull"),
                    [&](const sk::GemmChainArgs& a) {
                      return sk::LaunchHopperGemmChain(a, p, nullptr);
                    });
    }
  }
}

TEST(HopperChain, TableIIShapesEveryCluster) {
  STOF_REQUIRE_SM90();
  uint64_t seed = 101;
  for (const ChainCase& c : TableII()) CheckClusters(c, seed++, false);
}

TEST(HopperChain, RaggedTilesBiasesGelu) {
  STOF_REQUIRE_SM90();
  // m = 100 (a partial row tile), n = 208 (a partial chunk: zero-filled B columns, guarded
  // bias1), k = 80 (a partial k step), h = 144 (the 256-column E tile, columns past h never
  // stored).
  CheckClusters(Case("ragged_tiles", 1, 100, 208, 80, 144, se::Activation::kGelu, true, true),
                111, false);
}

TEST(HopperChain, FfnFormRelu) {
  STOF_REQUIRE_SM90();
  CheckClusters(Case("ffn_relu", 1, 256, 1024, 256, 256, se::Activation::kRelu, true, true), 121,
                false);
}

TEST(HopperChain, BatchesStridesAndRaggedRows) {
  STOF_REQUIRE_SM90();
  CheckClusters(SharedWeights(), 131, false);
  CheckClusters(SharedA(), 132, true);
  CheckClusters(PaddedStrides(), 133, false);
  CheckClusters(Case("m1", 1, 1, 512, 256, 256, se::Activation::kGelu, true, true), 134, false);
  CheckClusters(Case("m100_h64", 2, 100, 512, 128, 64), 135, false);
}

TEST(HopperChain, ThroughTheBackend) {
  STOF_REQUIRE_SM90();
  ASSERT_NE(st::SharedBackend(), nullptr) << "CudaBackend::Create failed";
  const ChainData x = MakeData(TableII()[3], 141);  // G4
  DeviceChain dev(x);
  ASSERT_TRUE(dev.Upload(x));
  for (int cluster : {0, 4}) {
    CheckChainRun(x, dev, "backend cluster " + std::to_string(cluster),
                  [&](const sk::GemmChainArgs& a) {
                    se::GemmChainCall c;
                    c.batch = a.batch, c.m = a.m, c.n = a.n, c.k = a.k, c.h = a.h;
                    c.a = a.a, c.b = a.b, c.d = a.d, c.e = a.e;
                    c.params = {{"cluster", cluster}, {"reduce", cluster == 4 ? 0 : 1}};
                    return st::SharedBackend()->RunGemmChain(c);
                  });
  }
  se::GemmChainCall bad;
  const sk::GemmChainArgs a = dev.Args(x);
  bad.batch = a.batch, bad.m = a.m, bad.n = a.n, bad.k = a.k, bad.h = a.h;
  bad.a = a.a, bad.b = a.b, bad.d = a.d, bad.e = a.e;
  bad.params = {{"cluster", 2}, {"bm", 64}};
  auto s = st::SharedBackend()->RunGemmChain(bad);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "bm")) << s.Message();
}

TEST(HopperChain, LaunchRejectsBadClusters) {
  STOF_REQUIRE_SM90();
  const ChainData x = MakeData(TableII()[0], 151);  // G1: n = 256, four chunks
  DeviceChain dev(x);
  ASSERT_TRUE(dev.Upload(x));
  for (int cluster : {3, 8, -1, 16}) {
    auto s = sk::LaunchHopperGemmChain(dev.Args(x), sk::HopperChainParams{cluster}, nullptr);
    ASSERT_FALSE(s.IsOk()) << "cluster " << cluster;
    EXPECT_TRUE(Contains(s.Message(), "params.cluster: " + std::to_string(cluster)))
        << s.Message();
    EXPECT_TRUE(Contains(s.Message(), "1, 2, 4")) << s.Message();
  }
  auto s = sk::LaunchHopperGemmChain(
      dev.Args(x), sk::HopperChainParams{2, static_cast<sk::HopperChainReduce>(2)}, nullptr);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "params.reduce: expected 0 (push) or 1 (pull), got 2"))
      << s.Message();
}

// ---- host only (no GPU needed) ----

sk::GemmChainArgs Shape(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t h) {
  alignas(16) static char fake[64];
  sk::GemmChainArgs a;
  a.batch = batch, a.m = m, a.n = n, a.k = k, a.h = h;
  a.a = fake, a.b = fake, a.d = fake, a.e = fake;
  return a;
}

TEST(HopperChainHost, ArgsAndClusters) {
  EXPECT_TRUE(sk::CheckHopperChainArgs(Shape(1, 512, 512, 256, 256)).IsOk());
  auto wide = sk::CheckHopperChainArgs(Shape(1, 128, 3072, 768, 768));  // BERT's FFN
  ASSERT_FALSE(wide.IsOk());
  EXPECT_TRUE(Contains(wide.Message(), "h: at most 256")) << wide.Message();
  EXPECT_TRUE(Contains(wide.Message(), "768")) << wide.Message();
  auto odd = sk::CheckHopperChainArgs(Shape(1, 128, 512, 256, 100));  // the shared rules first
  ASSERT_FALSE(odd.IsOk());
  EXPECT_TRUE(Contains(odd.Message(), "gemm_chain: h:")) << odd.Message();
  EXPECT_TRUE(sk::HopperChainClusters(Shape(1, 128, 3072, 768, 768)).empty());

  EXPECT_EQ(sk::HopperChainClusters(Shape(1, 512, 256, 64, 64)), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(sk::HopperChainClusters(Shape(1, 512, 1024, 128, 128)),
            (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(sk::HopperChainClusters(Shape(1, 512, 48, 64, 64)), (std::vector<int>{1}));
  sk::GemmChainArgs unallocated = Shape(1, 512, 256, 64, 64);  // a tuner asks before it allocates
  unallocated.a = unallocated.b = unallocated.d = nullptr;
  unallocated.e = nullptr;
  EXPECT_EQ(sk::HopperChainClusters(unallocated), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(sk::HopperChainClusterFor(unallocated, 132), 4);
  EXPECT_EQ(sk::HopperChainParams{}.reduce, sk::HopperChainReduce::kPull);
  // On 132 SMs the grid should reach 0.45 x 132 = 59.4 CTAs, with a cluster of at least 2:
  // G4's 8 row tiles take 8; G8's 16 take 4; G9's 32 take 2; G12's 1024 take 2 all the same.
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(1, 512, 512, 256, 256), 132), 8);
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(1, 1024, 512, 128, 128), 132), 4);
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(1, 2048, 512, 128, 128), 132), 2);
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(8, 1024, 1024, 128, 128), 132), 2);
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(1, 512, 256, 64, 64), 132), 4);  // capped by chunks
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(1, 512, 48, 64, 64), 132), 1);   // one chunk
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(1, 128, 3072, 768, 768), 132), 0);
}

}  // namespace
