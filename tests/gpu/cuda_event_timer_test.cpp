// GPU: TimeWithCudaEvents on a 256 MiB device-to-device copy: order statistics are
// consistent, the implied bandwidth is physically plausible (below the device's peak,
// above 10% of it), and errors from the work or bad arguments come back as values.
#include <cuda_runtime.h>

#include "device_buffer.h"
#include "gpu_test_util.h"
#include "profiler/profiler.h"

using stof::engine::Status;

TEST(GpuCudaEventTimer, CopyBandwidthIsPlausible) {
  STOF_REQUIRE_GPU();
  auto spec = stof::kernels::QueryDeviceSpec(0);
  ASSERT_TRUE(spec.IsOk());
  const size_t bytes = size_t{256} << 20;
  stof::testing::DeviceBuffer a(bytes), b(bytes);
  ASSERT_TRUE(a.Ok() && b.Ok());
  auto st = stof::profiler::TimeWithCudaEvents(
      [&](void* stream) -> Status {
        if (cudaMemcpyAsync(b.Ptr(), a.Ptr(), bytes, cudaMemcpyDeviceToDevice,
                            static_cast<cudaStream_t>(stream)) != cudaSuccess)
          return stof::engine::Error{"copy failed"};
        return Status::Ok();
      },
      3, 21);
  ASSERT_TRUE(st.IsOk()) << st.Message();
  EXPECT_EQ(st->runs, 21);
  EXPECT_EQ(st->samples_us.size(), 21u);
  EXPECT_LE(st->min_us, st->median_us);
  EXPECT_LE(st->median_us, st->max_us);
  const double bw = 2.0 * bytes / (st->median_us * 1e-6);  // read + write
  std::printf("256 MiB D2D copy: median %.1f us, %.0f GB/s (read+write), peak %.0f GB/s\n",
              st->median_us, bw / 1e9, spec->dram_bytes_per_s / 1e9);
  EXPECT_LT(bw, 1.05 * spec->dram_bytes_per_s);
  EXPECT_GT(bw, 0.10 * spec->dram_bytes_per_s);
}

TEST(GpuCudaEventTimer, ErrorsAreValues) {
  STOF_REQUIRE_GPU();
  auto ok = [](void*) { return Status::Ok(); };
  EXPECT_FALSE(stof::profiler::TimeWithCudaEvents(ok, 0, 0).IsOk());
  EXPECT_FALSE(stof::profiler::TimeWithCudaEvents(ok, -1, 3).IsOk());
  auto failing = stof::profiler::TimeWithCudaEvents(
      [](void*) -> Status { return stof::engine::Error{"work: planted failure"}; }, 1, 3);
  ASSERT_FALSE(failing.IsOk());
  EXPECT_EQ(failing.Message(), "work: planted failure");
}
