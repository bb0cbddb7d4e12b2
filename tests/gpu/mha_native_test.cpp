// GPU: the unfused native MHA baseline (kernels/attention/native_attention.h: cuBLAS Q K^T,
// one scale + mask + softmax kernel, cuBLAS P V) against the fp32 CPU reference, prepared and
// launched through PreparedMha (MhaKernelRequest::kNative), as `stof bench mha --kernel native`
// and the C API run it. Matrix: 9 masks (those of mha_correctness_test.cpp: sliding window,
// dilated, Longformer, BigBird, causal, document, random blocks, random elements, holes) x L in
// {64, 128, 1000, 1024, 2048} x d in {64, 128}, B = 2, H = 3; BigBird at L = 4096, d = 64,
// B = 2, H = 2; ragged L (1, 17, 100, 1001: the softmax kernel's unvectorised path). Each run:
// fresh seeded inputs, output poisoned, then no non-finite element, per-row error < 2e-3 and
// empty rows exactly 0 (st::CheckMhaRun). Also: all-empty masks give zeros, bad inputs come
// back as errors naming the field, a launch with fewer heads than prepared. The NativeMhaChoice
// tests are host-only (no GPU needed): the request, its name, the workspace size.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "engine/device/device_spec.h"
#include "gpu_test_util.h"
#include "kernels/attention/native_attention.h"
#include "kernels/attention/prepared_mha.h"
#include "mha_test_util.h"

namespace {

namespace se = stof::engine;
namespace sk = stof::kernels;
namespace st = stof::testing;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// B x H heads of L x d, fp16.
se::Workload Shape(int64_t B, int64_t H, int64_t L, int64_t d) {
  return st::MhaWorkload(B, H, L, d);
}

// Native choice and PreparedMha for (mask, w) on the shared backend's device.
stof::engine::Expected<std::unique_ptr<sk::PreparedMha>> PrepareNative(const se::Mask& mask,
                                                                       const se::Workload& w) {
  auto c = sk::ChooseMhaConfig(mask, w, st::SharedBackend()->Device(),
                               sk::MhaRequest{sk::MhaKernelRequest::kNative, 0, 0, 0});
  if (!c.IsOk()) return c.ToStatus();
  return sk::PreparedMha::Create(mask, w, *c);
}

// One checked native run of `w` (fresh inputs, the reference) on a plan prepared for
// `prepared_for` (default: w itself).
void CheckNative(const se::Mask& mask, const se::Workload& w, uint64_t seed,
                 const std::string& label, const se::Workload* prepared_for = nullptr) {
  stof::kernels::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr) << "CudaBackend::Create failed";
  const se::Workload& pw = prepared_for ? *prepared_for : w;
  auto p = PrepareNative(mask, pw);
  ASSERT_TRUE(p.IsOk()) << p.Message();
  ASSERT_TRUE((*p)->Choice().native);
  EXPECT_EQ((*p)->Native()->WorkspaceBytes(), pw.batch * pw.heads * pw.seq_len * pw.seq_len * 2);
  const int64_t elements = w.batch * w.heads * w.seq_len * w.head_dim;
  const st::MhaInputs in = st::RandomInputs(elements, seed);
  std::vector<float> ref;
  auto rs = st::ThreadedReference(in, w, mask, ref);
  ASSERT_TRUE(rs.IsOk()) << rs.Message();
  const std::vector<uint8_t> empty_row = st::EmptyRows(mask);
  st::DeviceMhaBuffers buf(*backend, elements);
  ASSERT_TRUE(buf.Ok()) << "device allocation failed";
  ASSERT_TRUE(buf.Upload(in).IsOk());
  const sk::PreparedMha& mha = **p;
  st::MhaError e;
  st::CheckMhaRun(
      *backend, buf, [&] { return mha.Launch(w, buf.Q(), buf.K(), buf.V(), buf.O(), nullptr); },
      ref, w, empty_row, &e);
  int64_t empty = 0;
  for (uint8_t x : empty_row) empty += x;
  std::printf("[ native ] %s: nnz %lld, empty rows %lld, workspace %lld bytes, worst row error "
              "%.2e, global %.2e\n",
              label.c_str(), static_cast<long long>(mask.Count()), static_cast<long long>(empty),
              static_cast<long long>((*p)->DeviceBytes()), e.row_err, e.global_err);
}

std::vector<st::MhaCase> AllCases() {
  std::vector<st::MhaCase> v;
  for (const char* m : {"sliding_window", "dilated", "longformer", "bigbird", "causal", "document",
                        "random_blocks", "random_elements", "holes"})
    for (int64_t L : {64, 128, 1000, 1024, 2048})
      for (int64_t d : {64, 128}) v.push_back({m, L, d});
  v.push_back({"bigbird", 4096, 64});
  return v;
}

class GpuNativeMha : public ::testing::TestWithParam<st::MhaCase> {};

TEST_P(GpuNativeMha, MatchesReference) {
  STOF_REQUIRE_GPU();
  const st::MhaCase& c = GetParam();
  auto mask = st::MakeMask(c.mask, c.seq_len);
  ASSERT_TRUE(mask.IsOk()) << mask.Message();
  const se::Workload w = Shape(2, c.seq_len >= 4096 ? 2 : 3, c.seq_len, c.head_dim);
  const std::string name = st::MhaCaseName(c);
  CheckNative(*mask, w, std::hash<std::string>{}("native " + name), name);
}

INSTANTIATE_TEST_SUITE_P(Masks, GpuNativeMha, ::testing::ValuesIn(AllCases()),
                         st::MhaCaseParamName);

// L not a multiple of 8 takes the softmax kernel's one-half-at-a-time path; 1 and 17 are
// smaller than a warp's share, 1001 spans 16 mask words with a ragged last one.
TEST(GpuNativeMhaEdge, RaggedSequences) {
  STOF_REQUIRE_GPU();
  for (int64_t L : {1, 17, 100, 1001}) {
    for (int64_t d : {64, 128}) {
      for (const char* m : {"causal", "random_elements"}) {
        auto mask = st::MakeMask(m, L);
        ASSERT_TRUE(mask.IsOk()) << mask.Message();
        const std::string label =
            std::string(m) + "_L" + std::to_string(L) + "_d" + std::to_string(d);
        SCOPED_TRACE(label);
        CheckNative(*mask, Shape(2, 3, L, d), static_cast<uint64_t>(L * 1000 + d), label);
      }
    }
  }
}

// Rows with nothing attended give exactly zero: an all-empty mask (ragged L = 200 and
// vectorised L = 256) is all zeros; so are the empty rows among attended ones.
TEST(GpuNativeMhaEdge, EmptyRowsGiveZeros) {
  STOF_REQUIRE_GPU();
  stof::kernels::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  for (int64_t L : {200, 256}) {
    for (int64_t d : {64, 128}) {
      auto mask = se::Mask::Create(L, L);
      ASSERT_TRUE(mask.IsOk());
      const se::Workload w = Shape(2, 3, L, d);
      const std::string label = "empty_L" + std::to_string(L) + "_d" + std::to_string(d);
      SCOPED_TRACE(label);
      // Every row is empty, so CheckMhaRun's "empty rows exactly 0" covers every element.
      CheckNative(*mask, w, 5, label);
    }
  }
  // Some empty rows among attended ones ("holes": single rows and a run of 40).
  auto holes = st::MakeMask("holes", 512);
  ASSERT_TRUE(holes.IsOk());
  CheckNative(*holes, Shape(2, 3, 512, 64), 6, "holes_L512_d64");
}

// A prepared plan runs any batch and head count up to the prepared B * H (here fewer heads,
// the way `stof bench mha` checks a reduced problem), and refuses more.
TEST(GpuNativeMhaEdge, FewerHeadsThanPrepared) {
  STOF_REQUIRE_GPU();
  ASSERT_NE(st::SharedBackend(), nullptr);
  auto mask = st::MakeMask("longformer", 1024);
  ASSERT_TRUE(mask.IsOk());
  const se::Workload prepared_for = Shape(4, 6, 1024, 128);
  CheckNative(*mask, Shape(1, 5, 1024, 128), 31, "longformer_L1024_d128_B1_H5_of_B4_H6",
              &prepared_for);
  auto p = PrepareNative(*mask, prepared_for);
  ASSERT_TRUE(p.IsOk()) << p.Message();
  st::ExpectRefusesMoreHeads(**p, Shape(5, 6, 1024, 128));
}

// Bad inputs come back as errors naming the field; nothing crashes.
TEST(GpuNativeMhaEdge, RefusesBadInput) {
  STOF_REQUIRE_GPU();
  stof::kernels::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  auto mask = st::MakeMask("causal", 128);
  ASSERT_TRUE(mask.IsOk());

  // Head dim 96: refused by the choice and by NativeMha itself.
  auto c96 = sk::ChooseMhaConfig(*mask, Shape(2, 3, 128, 96), backend->Device(),
                                 sk::MhaRequest{sk::MhaKernelRequest::kNative, 0, 0, 0});
  ASSERT_FALSE(c96.IsOk());
  EXPECT_TRUE(Contains(c96.Message(), "head_dim")) << c96.Message();
  auto n96 = sk::NativeMha::Create(*mask, Shape(2, 3, 128, 96));
  ASSERT_FALSE(n96.IsOk());
  EXPECT_TRUE(Contains(n96.Message(), "head_dim")) << n96.Message();
  // f32.
  se::Workload f32 = Shape(2, 3, 128, 64);
  f32.dtype = se::DType::kF32;
  auto nf = sk::NativeMha::Create(*mask, f32);
  ASSERT_FALSE(nf.IsOk());
  EXPECT_TRUE(Contains(nf.Message(), "dtype")) << nf.Message();
  // Mask size mismatch.
  auto nm = sk::NativeMha::Create(*mask, Shape(2, 3, 256, 64));
  ASSERT_FALSE(nm.IsOk());
  EXPECT_TRUE(Contains(nm.Message(), "mask")) << nm.Message();
  stof::kernels::MhaChoice native{};
  native.native = true;
  auto pm = sk::PreparedMha::Create(*mask, Shape(2, 3, 256, 64), native);
  EXPECT_FALSE(pm.IsOk());

  // A workspace that cannot be had: the message names its size.
  const se::Workload huge = Shape(65536, 64, 4096, 64);  // 65536*64*4096^2*2 bytes = 128 TiB
  auto big_mask = se::Mask::Create(4096, 4096);
  ASSERT_TRUE(big_mask.IsOk());
  auto nh = sk::NativeMha::Create(*big_mask, huge);
  ASSERT_FALSE(nh.IsOk());
  EXPECT_TRUE(Contains(nh.Message(), "workspace")) << nh.Message();
  EXPECT_TRUE(Contains(nh.Message(), std::to_string(sk::NativeMha::WorkspaceBytesFor(huge))))
      << nh.Message();
  // The failed allocation left no error behind: a normal plan still works.
  auto ok = sk::NativeMha::Create(*mask, Shape(2, 3, 128, 64));
  ASSERT_TRUE(ok.IsOk()) << ok.Message();

  // Launch: another L or d, null pointers.
  const se::Workload w = Shape(2, 3, 128, 64);
  const int64_t elements = w.batch * w.heads * w.seq_len * w.head_dim;
  st::DeviceMhaBuffers buf(*backend, elements);
  ASSERT_TRUE(buf.Ok());
  st::ExpectLaunchRefusals(**ok, w, buf);  // L 64, d 128, null q
  ASSERT_TRUE(backend->Synchronize().IsOk());
}

// Host-only: the request's spelling, the choice's fields and the workspace size.
TEST(NativeMhaChoice, RequestAndWorkspaceSize) {
  auto r = stof::kernels::ParseMhaKernelRequest("native");
  ASSERT_TRUE(r.IsOk()) << r.Message();
  EXPECT_EQ(*r, sk::MhaKernelRequest::kNative);
  EXPECT_STREQ(stof::kernels::MhaKernelRequestName(*r), "native");
  EXPECT_EQ(*stof::kernels::ParseMhaKernelRequest("auto"), sk::MhaKernelRequest::kAuto);
  EXPECT_EQ(*stof::kernels::ParseMhaKernelRequest("row_wise"), sk::MhaKernelRequest::kRowWise);
  EXPECT_EQ(*stof::kernels::ParseMhaKernelRequest("block_wise"), sk::MhaKernelRequest::kBlockWise);
  auto bad = stof::kernels::ParseMhaKernelRequest("eager");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_TRUE(Contains(bad.Message(), "native")) << bad.Message();

  // 16 x 12 x 4096^2 fp16 = 6.4 GB (docs/kernels.md).
  EXPECT_EQ(sk::NativeMha::WorkspaceBytesFor(Shape(16, 12, 4096, 64)), int64_t{6442450944});
  EXPECT_EQ(sk::NativeMha::WorkspaceBytesFor(Shape(int64_t{1} << 40, int64_t{1} << 20, 32768, 64)),
            -1);

  auto dev = stof::engine::FindBuiltinDevice("h100");
  ASSERT_TRUE(dev.IsOk()) << dev.Message();
  auto mask = st::MakeMask("bigbird", 1024);
  ASSERT_TRUE(mask.IsOk());
  auto c = sk::ChooseMhaConfig(*mask, Shape(8, 12, 1024, 64), *dev,
                               sk::MhaRequest{sk::MhaKernelRequest::kNative, 64, 64, 4});
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_TRUE(c->native);
  EXPECT_STREQ(stof::kernels::MhaChoiceKernelName(*c), "native");
  EXPECT_EQ(c->kernel_source, "user");
  EXPECT_EQ(c->config.block_m, 0);
  EXPECT_TRUE(Contains(c->note, "ignored")) << c->note;
  // Eq. 1 never picks it.
  auto a = sk::ChooseMhaConfig(*mask, Shape(8, 12, 1024, 64), *dev, sk::MhaRequest{});
  ASSERT_TRUE(a.IsOk());
  EXPECT_FALSE(a->native);
}

}  // namespace
