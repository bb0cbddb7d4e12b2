// The block-wise kernel's dispatch table and CudaBackend's refusals. The MhaDispatch tests are
// host-only (no GPU needed: they check which (head_dim, BLOCK_M, BLOCK_N, num_warps) are
// supported and the messages for the rest); the GpuMhaBackend tests need a device and check
// that bad calls come back as errors naming the field, and that layouts are cached.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/mask/mask_spec.h"
#include "gpu_test_util.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention_common/device_layout.h"
#include "mha_test_util.h"

namespace {

namespace se = stof::engine;
namespace sk = stof::kernels;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(MhaDispatch, SupportedSetFollowsTheRules) {
  for (int64_t d : {64, 128}) {
    const auto supported = sk::SupportedBlockSparseConfigs(d);
    for (int64_t bm : {16, 32, 64, 128})
      for (int64_t bn : {16, 32, 64, 128})
        for (int64_t w : {1, 2, 4, 8}) {
          const bool listed = std::find(supported.begin(), supported.end(),
                                        sk::BlockSparseConfig{bm, bn, w}) != supported.end();
          // 16 rows per warp (any split), or 32 rows per warp at d = 64, BLOCK_N <= 64.
          const bool warps_fit = w >= bm / 16 || (d == 64 && bn <= 64 && w == bm / 32);
          const bool rules = warps_fit && static_cast<int64_t>(sk::BlockSparseSmemBytes(
                                              d, bm, bn, w)) <= stof::kernels::kHopperSmemPerBlock;
          EXPECT_EQ(listed, rules) << d << " " << bm << "x" << bn << " w" << w;
          EXPECT_EQ(sk::CheckBlockSparseConfig(d, bm, bn, w).IsOk(), listed)
              << d << " " << bm << "x" << bn << " w" << w;
        }
  }
  // On a 227 KiB device: 45 combinations at d = 64 (36 with 16 rows per warp, 9 with 32),
  // 30 at d = 128 (docs/kernels.md).
  EXPECT_EQ(sk::SupportedBlockSparseConfigs(64).size(), 45u);
  EXPECT_EQ(sk::SupportedBlockSparseConfigs(128).size(), 30u);
  // What Eq. 2 usually picks (16x16, 4 warps) and MhaConfig's default (64x64, 4 warps).
  EXPECT_TRUE(sk::CheckBlockSparseConfig(64, 16, 16, 4).IsOk());
  EXPECT_TRUE(sk::CheckBlockSparseConfig(128, 16, 16, 4).IsOk());
  EXPECT_TRUE(sk::CheckBlockSparseConfig(64, 64, 64, 4).IsOk());
  EXPECT_TRUE(sk::CheckBlockSparseConfig(128, 128, 128, 8).IsOk());
}

TEST(MhaDispatch, SharedMemoryFormula) {
  // Q 64 x 72 halves + 2 stages x (K, V) x 64 x 72 halves, in bytes.
  EXPECT_EQ(sk::BlockSparseSmemBytes(64, 64, 64, 4), 64u * 72 * 2 + 2u * 2 * 64 * 72 * 2);
  // split 4 at 16 x 16, d = 128: the K/V stages (4 groups) outweigh the merge area.
  EXPECT_EQ(sk::BlockSparseSmemBytes(128, 16, 16, 4), 16u * 136 * 2 + 2u * 2 * 4 * 16 * 136 * 2);
  // split 2 at 64 x 16, d = 64: the merge area (2 x 64 rows of 72 floats + max/sum) is larger.
  EXPECT_EQ(sk::BlockSparseSmemBytes(64, 64, 16, 8), 64u * 72 * 2 + 2u * 64 * (72 * 4 + 8));
  // 32 rows per warp: one group, the same tiles as 16 rows per warp with 4 warps.
  EXPECT_EQ(sk::BlockSparseSmemBytes(64, 64, 64, 2), sk::BlockSparseSmemBytes(64, 64, 64, 4));
  EXPECT_EQ(sk::BlockSparseRowsPerWarp(64, 64, 64, 2), 32);
  EXPECT_EQ(sk::BlockSparseRowsPerWarp(64, 64, 64, 4), 16);
  EXPECT_EQ(sk::BlockSparseSmemBytes(64, 64, 128, 2), 0u);  // 32 rows per warp needs BLOCK_N <= 64
  EXPECT_EQ(sk::BlockSparseSmemBytes(128, 64, 64, 2), 0u);  // and head_dim 64
  EXPECT_EQ(sk::BlockSparseSmemBytes(64, 128, 64, 2), 0u);  // fewer warps than 32-row slabs
  EXPECT_EQ(sk::BlockSparseSmemBytes(96, 64, 64, 4), 0u);
}

TEST(MhaDispatch, UnsupportedCombinationsSayWhyAndListTheSupported) {
  auto warps = sk::CheckBlockSparseConfig(64, 128, 64, 2);
  ASSERT_FALSE(warps.IsOk());
  EXPECT_TRUE(Contains(warps.Message(), "BLOCK_M 128, BLOCK_N 64, num_warps 2, head_dim 64"))
      << warps.Message();
  EXPECT_TRUE(Contains(warps.Message(), "num_warps must be at least BLOCK_M / 16 = 8"))
      << warps.Message();
  EXPECT_TRUE(Contains(warps.Message(), "16x{16,32,64,128} warps 1")) << warps.Message();
  EXPECT_TRUE(Contains(warps.Message(), "128x{16,32,64,128} warps 8")) << warps.Message();
  EXPECT_TRUE(Contains(warps.Message(), "128x{16,32,64} warps 4")) << warps.Message();

  auto bn = sk::CheckBlockSparseConfig(64, 64, 256, 4);
  ASSERT_FALSE(bn.IsOk());
  EXPECT_TRUE(Contains(bn.Message(), "BLOCK_N must be one of 16, 32, 64, 128")) << bn.Message();

  auto d = sk::CheckBlockSparseConfig(96, 64, 64, 4);
  ASSERT_FALSE(d.IsOk());
  EXPECT_TRUE(Contains(d.Message(), "head_dim must be 64 or 128")) << d.Message();

  auto smem = sk::CheckBlockSparseConfig(128, 16, 128, 8);  // 8 groups x 128 keys x 2 stages
  ASSERT_FALSE(smem.IsOk());
  EXPECT_TRUE(Contains(smem.Message(), "bytes of shared memory, the limit is 232448"))
      << smem.Message();

  // A smaller device (A100: 163 KiB) loses the largest tiles.
  EXPECT_TRUE(sk::CheckBlockSparseConfig(128, 128, 128, 8, 232448).IsOk());
  EXPECT_FALSE(sk::CheckBlockSparseConfig(128, 128, 128, 8, 166912).IsOk());
}

// ---- with a GPU ------------------------------------------------------------------------------

TEST(GpuMhaBackend, RefusesBadCallsWithTheField) {
  STOF_REQUIRE_GPU();
  auto created = stof::kernels::CudaBackend::Create(0);
  ASSERT_TRUE(created.IsOk()) << created.Message();
  auto& backend = **created;
  EXPECT_TRUE(Contains(backend.Name(), "cuda:0 (")) << backend.Name();
  EXPECT_TRUE(backend.Supports(se::DType::kF16));
  EXPECT_FALSE(backend.Supports(se::DType::kF32));
  stof::engine::MaskSpec spec;
  spec.pattern = "bigbird";
  spec.seq_len = 256;
  auto mask = stof::engine::Generate(spec);
  ASSERT_TRUE(mask.IsOk());
  se::Workload w{1, 256, 2, 64, se::DType::kF16};
  stof::testing::DeviceMhaBuffers buf(backend, 2 * 256 * 128);  // room for head_dim 128 too
  ASSERT_TRUE(buf.Ok());
  se::MhaCall call;
  call.workload = w;
  call.mask = &*mask;
  call.q = buf.Q();
  call.k = buf.K();
  call.v = buf.V();
  call.o = buf.O();

  se::MhaCall f32 = call;
  f32.workload.dtype = se::DType::kF32;
  auto s = backend.RunMha(f32);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "workload.dtype: the cuda backend supports f16 only"))
      << s.Message();

  se::MhaCall d96 = call;
  d96.workload.head_dim = 96;
  s = backend.RunMha(d96);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "workload.head_dim")) << s.Message();

  se::MhaCall warps = call;
  warps.config.block_m = 128;
  warps.config.num_warps = 2;  // fewer than BLOCK_M / 32
  s = backend.RunMha(warps);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "mha call: config: block-wise MHA: unsupported"))
      << s.Message();

  se::MhaCall no_mask = call;
  no_mask.mask = nullptr;
  EXPECT_FALSE(backend.RunMha(no_mask).IsOk());

  se::MhaCall misaligned = call;
  misaligned.q = static_cast<const char*>(call.q) + 2;
  s = backend.RunMha(misaligned);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "16-byte aligned")) << s.Message();
  misaligned.config.kernel = se::MhaKernel::kRowWise;
  s = backend.RunMha(misaligned);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "16-byte aligned")) << s.Message();

  EXPECT_TRUE(backend.RunMha(call).IsOk());
  EXPECT_TRUE(backend.Synchronize().IsOk());
}

TEST(GpuMhaBackend, LayoutsAreBuiltOncePerMaskAndBlockSize) {
  STOF_REQUIRE_GPU();
  auto created = stof::kernels::CudaBackend::Create(0);
  ASSERT_TRUE(created.IsOk()) << created.Message();
  auto& backend = **created;
  stof::engine::MaskSpec spec;
  spec.pattern = "longformer";
  spec.seq_len = 512;
  auto mask = stof::engine::Generate(spec);
  ASSERT_TRUE(mask.IsOk());
  stof::testing::DeviceMhaBuffers buf(backend, 2 * 512 * 64);
  ASSERT_TRUE(buf.Ok());
  se::MhaCall call;
  call.workload = se::Workload{1, 512, 2, 64, se::DType::kF16};
  call.mask = &*mask;
  call.q = buf.Q();
  call.k = buf.K();
  call.v = buf.V();
  call.o = buf.O();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(backend.RunMha(call).IsOk());
  call.config.num_warps = 8;  // same layout, another kernel shape
  ASSERT_TRUE(backend.RunMha(call).IsOk());
  call.config.kernel = se::MhaKernel::kRowWise;
  ASSERT_TRUE(backend.RunMha(call).IsOk());
  ASSERT_TRUE(backend.RunMha(call).IsOk());
  ASSERT_TRUE(backend.Synchronize().IsOk());
  EXPECT_EQ(backend.Layouts().Misses(), 2);  // one block layout (64 x 64), one row layout
  EXPECT_EQ(backend.Layouts().Hits(), 4);
  EXPECT_EQ(backend.Layouts().Size(), 2u);

  auto block = backend.Layouts().GetBlock(*mask, 64, 64);
  ASSERT_TRUE(block.IsOk());
  const auto& t = (*block)->Timing();
  EXPECT_GE(t.host_build_ms, 0.0);
  EXPECT_GT(t.upload_ms, 0.0);
  std::printf("[ mha ] longformer L=512 64x64 layout: build %.3f ms, upload %.3f ms, %lld bytes\n",
              t.host_build_ms, t.upload_ms, static_cast<long long>((*block)->DeviceBytes()));
  auto row = backend.Layouts().GetRow(*mask);
  ASSERT_TRUE(row.IsOk());
  EXPECT_EQ((*row)->Nnz(), mask->Count());
  std::printf("[ mha ] longformer L=512 row layout: build %.3f ms, upload %.3f ms, %lld bytes\n",
              (*row)->Timing().host_build_ms, (*row)->Timing().upload_ms,
              static_cast<long long>((*row)->DeviceBytes()));
}

}  // namespace
