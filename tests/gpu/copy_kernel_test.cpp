// GPU: the built-in copy kernel moves exactly the bytes asked for: aligned sizes with and
// without a 16-byte tail, misaligned pointers (bytewise path), zero bytes, and bad arguments.
#include <cuda_runtime.h>

#include <vector>

#include "device_buffer.h"
#include "gpu_test_util.h"
#include "kernels/util/copy_kernel.h"

namespace sk = stof::kernels;
namespace st = stof::testing;

TEST(GpuCopyKernel, WorkloadCopiesExactly) {
  STOF_REQUIRE_GPU();
  for (size_t bytes : {size_t{1}, size_t{15}, size_t{16}, size_t{1000003}, size_t{8} << 20}) {
    auto w = sk::CopyWorkload::Create(bytes);
    ASSERT_TRUE(w.IsOk()) << w.Message();
    auto before = (*w)->Verify();
    ASSERT_TRUE(before.IsOk());
    EXPECT_EQ(*before, static_cast<int64_t>(bytes)) << "destination must start poisoned";
    ASSERT_TRUE((*w)->Run(nullptr).IsOk());
    auto after = (*w)->Verify();
    ASSERT_TRUE(after.IsOk()) << after.Message();
    EXPECT_EQ(*after, 0) << bytes << " bytes";
  }
}

TEST(GpuCopyKernel, MisalignedAndEdges) {
  STOF_REQUIRE_GPU();
  const size_t n = 4099;
  std::vector<unsigned char> host(n + 8), back(n + 8, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 7 + 3);
  st::DeviceBuffer src_buf(n + 8), dst_buf(n + 8);
  ASSERT_TRUE(src_buf.Ok() && dst_buf.Ok());
  auto* src = static_cast<unsigned char*>(src_buf.Ptr());
  auto* dst = static_cast<unsigned char*>(dst_buf.Ptr());
  ASSERT_TRUE(src_buf.Upload(host.data(), n + 8).IsOk());
  ASSERT_EQ(cudaMemset(dst, 0, n + 8), cudaSuccess);
  ASSERT_TRUE(sk::LaunchCopy(dst + 3, src + 1, n).IsOk());
  ASSERT_TRUE(dst_buf.CopyToHost(back.data(), n + 8).IsOk());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i + 3], host[i + 1]) << i;
  EXPECT_EQ(back[0], 0);
  EXPECT_EQ(back[n + 3], 0);
  EXPECT_TRUE(sk::LaunchCopy(dst, src, 0).IsOk());
  EXPECT_FALSE(sk::LaunchCopy(nullptr, src, 16).IsOk());
  auto overlap = sk::LaunchCopy(src + 8, src, 64);
  ASSERT_FALSE(overlap.IsOk());
  EXPECT_NE(overlap.Message().find("overlap"), std::string::npos);
}
