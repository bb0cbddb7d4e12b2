// GPU: QueryDeviceSpec against the runtime's own properties and, on an H100/H200, against
// the built-in data-sheet entry.
#include <cuda_runtime.h>

#include <string>

#include "engine/device/device_spec.h"
#include "gpu_test_util.h"

using stof::kernels::QueryDeviceSpec;

TEST(GpuDeviceQuery, MatchesRuntimeProperties) {
  STOF_REQUIRE_GPU();
  auto spec = QueryDeviceSpec(0);
  ASSERT_TRUE(spec.IsOk()) << spec.Message();
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  EXPECT_EQ(spec->name, std::string(p.name));
  EXPECT_EQ(spec->sm_count, p.multiProcessorCount);
  EXPECT_EQ(spec->max_warps_per_sm, p.maxThreadsPerMultiProcessor / 32);
  EXPECT_LE(spec->smem_per_block_bytes, spec->smem_per_sm_bytes);
  EXPECT_EQ(spec->source, "queried");
  EXPECT_TRUE(spec->Validate().IsOk());
}

TEST(GpuDeviceQuery, HopperAgreesWithBuiltin) {
  STOF_REQUIRE_GPU();
  auto spec = QueryDeviceSpec(0);
  ASSERT_TRUE(spec.IsOk()) << spec.Message();
  const bool h100 = spec->name.find("H100") != std::string::npos;
  const bool h200 = spec->name.find("H200") != std::string::npos;
  if (!h100 && !h200) GTEST_SKIP() << "not an H100/H200: " << spec->name;
  auto builtin = stof::engine::FindBuiltinDevice(h100 ? "H100-SXM-80GB" : "H200");
  ASSERT_TRUE(builtin.IsOk());
  EXPECT_EQ(spec->sm_count, builtin->sm_count);
  EXPECT_EQ(spec->smem_per_sm_bytes, builtin->smem_per_sm_bytes);
  EXPECT_EQ(spec->smem_per_block_bytes, builtin->smem_per_block_bytes);
  EXPECT_EQ(spec->max_warps_per_sm, builtin->max_warps_per_sm);
  // Peak bandwidth from clocks x bus width within 10% of the data sheet (PCIe parts differ).
  EXPECT_NEAR(spec->dram_bytes_per_s / builtin->dram_bytes_per_s, 1.0, 0.10)
      << spec->dram_bytes_per_s;
  // Tensor rate from the boost clock is an upper bound of the data sheet (1980 vs 1830 MHz).
  EXPECT_GE(spec->fp16_tensor_flops, 0.9 * builtin->fp16_tensor_flops);
  EXPECT_LE(spec->fp16_tensor_flops, 1.15 * builtin->fp16_tensor_flops);
}

TEST(GpuDeviceQuery, BadOrdinalIsAnError) {
  STOF_REQUIRE_GPU();
  auto spec = QueryDeviceSpec(1000);
  ASSERT_FALSE(spec.IsOk());
  EXPECT_NE(spec.Message().find("device 1000"), std::string::npos) << spec.Message();
}
