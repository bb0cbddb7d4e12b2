// GPU: PoisonBuffer makes every element non-finite for each dtype, and CountNonFinite counts
// exactly the planted NaN/inf values in otherwise finite data.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "device_buffer.h"
#include "gpu_test_util.h"
#include "kernels/util/finite_check.h"

using stof::engine::DType;
using stof::kernels::CountNonFinite;
using stof::kernels::PoisonBuffer;
using stof::testing::DeviceBuffer;

TEST(GpuFiniteCheck, PoisonIsNonFiniteForEveryDtype) {
  STOF_REQUIRE_GPU();
  const int64_t n = 1'000'003;  // not a multiple of the block size
  DeviceBuffer dev(n * 4);
  ASSERT_TRUE(dev.Ok());
  void* buf = dev.Ptr();
  ASSERT_TRUE(PoisonBuffer(buf, n * 4).IsOk());
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32}) {
    const int64_t count = n * 4 / stof::engine::DTypeBytes(t);
    auto bad = CountNonFinite(buf, count, t);
    ASSERT_TRUE(bad.IsOk()) << bad.Message();
    EXPECT_EQ(*bad, count) << stof::engine::DTypeName(t);
  }
}

TEST(GpuFiniteCheck, CountsPlantedValuesExactly) {
  STOF_REQUIRE_GPU();
  const int64_t n = 300'001;
  // fp16: 0x3C00 = 1.0, 0x7C00 = +inf, 0xFE00 = NaN, 0x7BFF = 65504 (largest finite).
  std::vector<uint16_t> h(n, 0x3C00);
  h[0] = 0x7C00;
  h[n / 2] = 0xFE00;
  h[n - 1] = 0x7C01;  // NaN
  h[7] = 0x7BFF;      // finite
  DeviceBuffer dev(n * 2);
  ASSERT_TRUE(dev.Ok());
  void* d = dev.Ptr();
  ASSERT_TRUE(dev.Upload(h).IsOk());
  auto bad = CountNonFinite(d, n, DType::kF16);
  ASSERT_TRUE(bad.IsOk()) << bad.Message();
  EXPECT_EQ(*bad, 3);
  // fp32 view of the same bytes: every word pairs two fp16 values of 1.0 except planted ones.
  std::vector<float> f(1000, 1.5f);
  f[10] = std::numeric_limits<float>::quiet_NaN();
  f[999] = -std::numeric_limits<float>::infinity();
  f[500] = std::numeric_limits<float>::max();
  ASSERT_TRUE(dev.Upload(f.data(), f.size() * 4).IsOk());
  auto bad32 = CountNonFinite(d, 1000, DType::kF32);
  ASSERT_TRUE(bad32.IsOk()) << bad32.Message();
  EXPECT_EQ(*bad32, 2);
  auto zero = CountNonFinite(d, 0, DType::kF32);
  ASSERT_TRUE(zero.IsOk());
  EXPECT_EQ(*zero, 0);
  EXPECT_FALSE(CountNonFinite(d, -1, DType::kF32).IsOk());
}
