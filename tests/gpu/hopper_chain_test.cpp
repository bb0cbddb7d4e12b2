// GPU: the Hopper GEMM chain (kernels/gemm_chain_hopper/hopper_chain.h) against the CPU
// reference of chain_test_util.h (fp16 inputs, C rounded to fp16, E poisoned with a guard
// tail, every written element within tolerance, nothing else written). Cases: MCFuser's Table
// II shapes G1-G12 at every cluster size that runs them (the partial sums of a cluster's CTAs
// reduced through distributed shared memory, pushed and pulled); ragged tiles in every
// dimension with both biases and GELU; the FFN form at h = 256 with ReLU; batches with shared
// weights, padded strides and ragged rows (m = 1, 100); the FFN past h = 256 (E tiles) over
// 1-128 rows with split groups (each launch twice on one workspace, which must be left zero);
// the launch through CudaBackend::RunGemmChain (params "cluster", "reduce", "splits") and every
// Hopper setting its GemmChainParamChoices offers the tuner; bad parameters and a missing
// workspace refused by name. Tests named *Host* need no GPU (the checks, the cluster lists
// and the tuner's settings); the others skip on a GPU that is not compute capability 9.0.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
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

// The backend's call for `a` (every field) with `params`.
se::GemmChainCall CallOf(const sk::GemmChainArgs& a, se::ParamMap params) {
  se::GemmChainCall c;
  c.batch = a.batch, c.m = a.m, c.n = a.n, c.k = a.k, c.h = a.h;
  c.a = a.a, c.b = a.b, c.d = a.d, c.e = a.e;
  c.stride_a = a.stride_a, c.stride_b = a.stride_b, c.stride_d = a.stride_d;
  c.stride_e = a.stride_e;
  c.bias1 = a.bias1, c.bias2 = a.bias2, c.act = a.act;
  c.params = std::move(params);
  return c;
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
                    return st::SharedBackend()->RunGemmChain(
                        CallOf(a, {{"cluster", cluster}, {"reduce", cluster == 4 ? 0 : 1}}));
                  });
  }
  auto s = st::SharedBackend()->RunGemmChain(CallOf(dev.Args(x), {{"cluster", 2}, {"bm", 64}}));
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

// A zero-filled device workspace of `bytes` (the split groups' sums).
std::unique_ptr<st::DeviceBuffer> ZeroWorkspace(int64_t bytes) {
  auto ws = std::make_unique<st::DeviceBuffer>(static_cast<size_t>(bytes));
  if (!ws->Ok()) return nullptr;
  const std::vector<uint16_t> zeros(ws->Bytes() / 2, 0);
  if (!ws->Upload(zeros).IsOk()) return nullptr;
  return ws;
}

// The FFN past h = 256 (several E tiles, each recomputing its chunks of C) and over few rows
// (split groups summed in a workspace): bert-base's and bert-large's FFN (hidden 768 / 1024,
// 4x) at m = 1, 16, 100 and 128, GELU and both biases, at cluster 1 and the default cluster,
// split groups 1, 2, the default and the most; every launch runs twice on the same workspace,
// which must be left zero (a second launch summed onto leftovers would be off by E).
TEST(HopperChain, FfnWideHiddenAndSplitGroups) {
  STOF_REQUIRE_SM90();
  ASSERT_NE(st::SharedBackend(), nullptr);
  const int sms = static_cast<int>(st::SharedBackend()->Device().sm_count);
  uint64_t seed = 161;
  for (int64_t hidden : {768, 1024}) {
    for (int64_t m : {1, 16, 100, 128}) {
      const ChainCase c = Case("ffn_" + std::to_string(hidden) + "_m" + std::to_string(m), 1, m,
                               4 * hidden, hidden, hidden, se::Activation::kGelu, true, true);
      const ChainData x = MakeData(c, seed++);
      DeviceChain dev(x);
      ASSERT_TRUE(dev.Upload(x));
      for (int cluster : {1, 0}) {
        sk::HopperChainParams p;
        p.cluster = cluster;
        auto dflt = sk::ResolveHopperChain(dev.Args(x), p, sms);
        ASSERT_TRUE(dflt.IsOk()) << dflt.Message();
        const int most = static_cast<int>(hidden * 4 / 64 / dflt->cluster);
        for (int splits : {1, 2, dflt->splits, most}) {
          p.splits = splits;
          auto l = sk::ResolveHopperChain(dev.Args(x), p, sms);
          ASSERT_TRUE(l.IsOk()) << l.Message();
          auto ws = ZeroWorkspace(l->workspace_bytes);
          ASSERT_NE(ws, nullptr);
          p.workspace = ws->Ptr(), p.workspace_bytes = static_cast<int64_t>(ws->Bytes());
          for (int run = 0; run < 2; ++run)
            CheckChainRun(x, dev,
                          "cluster " + std::to_string(l->cluster) + ", " +
                              std::to_string(l->splits) + " split groups, run " +
                              std::to_string(run + 1),
                          [&](const sk::GemmChainArgs& a) {
                            return sk::LaunchHopperGemmChain(a, p, nullptr);
                          });
        }
      }
    }
  }
}

TEST(HopperChain, SplitGroupsThroughTheBackendAndMissingWorkspace) {
  STOF_REQUIRE_SM90();
  ASSERT_NE(st::SharedBackend(), nullptr);
  const ChainData x = MakeData(Ffn(se::Activation::kGelu), 171);  // bert-base, 256 rows
  DeviceChain dev(x);
  ASSERT_TRUE(dev.Upload(x));
  for (int splits : {0, 3}) {
    CheckChainRun(x, dev, "backend, splits " + std::to_string(splits),
                  [&](const sk::GemmChainArgs& a) {
                    return st::SharedBackend()->RunGemmChain(
                        CallOf(a, {{"cluster", 4}, {"splits", splits}}));
                  });
  }
  sk::HopperChainParams p;
  p.cluster = 4, p.splits = 3;  // no workspace given
  auto s = sk::LaunchHopperGemmChain(dev.Args(x), p, nullptr);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "params.workspace: 3 split groups need")) << s.Message();
}

// Every setting the tuner gets from CudaBackend::GemmChainParamChoices on this GPU runs and is
// correct: the mhnk tilings and, on sm_90, the Hopper chain's clusters and split groups.
TEST(HopperChain, TunerChoicesRunThroughTheBackend) {
  STOF_REQUIRE_SM90();
  ASSERT_NE(st::SharedBackend(), nullptr);
  const ChainData x = MakeData(Ffn(se::Activation::kGelu), 173);  // bert-base, 256 rows
  DeviceChain dev(x);
  ASSERT_TRUE(dev.Upload(x));
  auto choices = st::SharedBackend()->GemmChainParamChoices(CallOf(dev.Args(x), {}));
  ASSERT_TRUE(choices.IsOk()) << choices.Message();
  int hopper = 0;
  for (const se::ParamMap& p : *choices) {
    if (p.count("cluster") == 0) continue;  // the mhnk tilings have their own tests
    ++hopper;
    CheckChainRun(x, dev, "tuner choice " + se::ParamMapText(p), [&](const sk::GemmChainArgs& a) {
      return st::SharedBackend()->RunGemmChain(CallOf(a, p));
    });
  }
  EXPECT_GE(hopper, 4) << "clusters 1, 2, 4, 8 at least";
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
  EXPECT_TRUE(sk::CheckHopperChainArgs(Shape(1, 128, 3072, 768, 768)).IsOk());  // BERT's FFN
  // 65535 row tiles of 64 fit the grid; with 3 E tiles of 256 they do not.
  EXPECT_TRUE(sk::CheckHopperChainArgs(Shape(1, 64 * 65535, 64, 64, 256)).IsOk());
  auto tall = sk::CheckHopperChainArgs(Shape(1, 64 * 21846, 64, 64, 768));
  ASSERT_FALSE(tall.IsOk());
  EXPECT_TRUE(Contains(tall.Message(), "m: 1398144 rows make 21846 tiles of 64, times 3 E tiles"))
      << tall.Message();
  auto odd = sk::CheckHopperChainArgs(Shape(1, 128, 512, 256, 100));  // the shared rules first
  ASSERT_FALSE(odd.IsOk());
  EXPECT_TRUE(Contains(odd.Message(), "gemm_chain: h:")) << odd.Message();
  EXPECT_EQ(sk::HopperChainClusters(Shape(1, 128, 3072, 768, 768)),
            (std::vector<int>{1, 2, 4, 8}));

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
  // BERT-base's FFN over 128 tokens: 2 row tiles x 3 E tiles of 256 columns, cluster 8.
  EXPECT_EQ(sk::HopperChainClusterFor(Shape(1, 128, 3072, 768, 768), 132), 8);
}

// The tuner's settings: the default cluster's first, every cluster with its default split
// groups, and one group where the default is more.
TEST(HopperChainHost, ParamChoicesForTheTuner) {
  // BERT-base's FFN over one token: cluster 8 with 5 groups (the default), then 8 x 1, then
  // clusters 1, 2 and 4, each with its default groups and with one.
  const auto ffn = sk::HopperChainParamChoices(Shape(1, 1, 3072, 768, 768), 132);
  ASSERT_GE(ffn.size(), 2u);
  EXPECT_EQ(ffn[0].cluster, 8);
  EXPECT_EQ(ffn[0].splits, 5);
  EXPECT_EQ(ffn[1].cluster, 8);
  EXPECT_EQ(ffn[1].splits, 1);
  std::vector<int> clusters;
  for (const sk::HopperChainParams& p : ffn) {
    if (clusters.empty() || clusters.back() != p.cluster) clusters.push_back(p.cluster);
    auto l = sk::ResolveHopperChain(Shape(1, 1, 3072, 768, 768), p, 132);
    ASSERT_TRUE(l.IsOk()) << l.Message();
    EXPECT_EQ(l->splits, p.splits);
    EXPECT_EQ(p.reduce, sk::HopperChainReduce::kPull);
  }
  EXPECT_EQ(clusters, (std::vector<int>{8, 1, 2, 4}));
  // G4 (8 row tiles, 8 chunks): its default cluster 8 fills 64 CTAs, one group; the smaller
  // clusters leave SMs idle, so they come with their default groups (8 chunks / cluster, at
  // most 132 / CTAs) and with one.
  std::vector<std::pair<int, int>> g4;
  for (const auto& p : sk::HopperChainParamChoices(Shape(1, 512, 512, 256, 256), 132))
    g4.emplace_back(p.cluster, p.splits);
  EXPECT_EQ(g4, (std::vector<std::pair<int, int>>{
                    {8, 1}, {1, 8}, {1, 1}, {2, 4}, {2, 1}, {4, 2}, {4, 1}}));
  // A shape the kernel does not run: nothing.
  EXPECT_TRUE(sk::HopperChainParamChoices(Shape(1, 128, 512, 256, 100), 132).empty());
}

TEST(HopperChainHost, SplitGroupsAndWorkspace) {
  // BERT-base's FFN over one token: 3 E tiles x cluster 8 = 24 CTAs, so 132 / 24 = 5 split
  // groups (at most 48 chunks / 8 = 6), a workspace of 1 x 768 fp32 sums and 3 counts.
  auto one = sk::ResolveHopperChain(Shape(1, 1, 3072, 768, 768), {}, 132);
  ASSERT_TRUE(one.IsOk()) << one.Message();
  EXPECT_EQ(one->cluster, 8);
  EXPECT_EQ(one->splits, 5);
  EXPECT_EQ(one->h_tiles, 3);
  EXPECT_EQ(one->row_tiles, 1);
  EXPECT_EQ(one->workspace_bytes, 768 * 4 + 16);
  // 128 tokens: 2 x 3 x 8 = 48 CTAs, 2 groups; 4096 tokens fill the GPU: one, no workspace.
  EXPECT_EQ(sk::ResolveHopperChain(Shape(1, 128, 3072, 768, 768), {}, 132)->splits, 2);
  auto many = sk::ResolveHopperChain(Shape(1, 4096, 3072, 768, 768), {}, 132);
  EXPECT_EQ(many->splits, 1);
  EXPECT_EQ(many->workspace_bytes, 0);
  // G1-G12 keep one group at their default cluster (their grids reach 0.45 x 132, or their
  // chunks are all taken by the cluster).
  for (const ChainCase& c : TableII())
    EXPECT_EQ(sk::ResolveHopperChain(Shape(c.shape.batch, c.shape.m, c.shape.n, c.shape.k,
                                           c.shape.h), {}, 132)->splits, 1) << c.name;
  // Explicit: cluster 1 and 48 groups; 7 groups of 8 are more than the 48 chunks.
  sk::HopperChainParams p;
  p.cluster = 1, p.splits = 48;
  EXPECT_EQ(sk::ResolveHopperChain(Shape(1, 1, 3072, 768, 768), p, 132)->splits, 48);
  p.cluster = 8, p.splits = 7;
  auto over = sk::ResolveHopperChain(Shape(1, 1, 3072, 768, 768), p, 132);
  ASSERT_FALSE(over.IsOk());
  EXPECT_TRUE(Contains(over.Message(), "params.splits: expected 0 (default) or 1..6 (cluster 8"))
      << over.Message();
  p.splits = -1;
  EXPECT_FALSE(sk::ResolveHopperChain(Shape(1, 1, 3072, 768, 768), p, 132).IsOk());
}

}  // namespace
