// Tests of CpuBackend through the engine::Backend interface and of ValidateMhaCall: RunMha
// equals cpu::MaskedAttention, and bad calls are refused with messages naming the field.
#include "engine/cpu/cpu_backend.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/cpu/reference.h"

using namespace stof::engine;

namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Host buffers and a valid call over them.
struct Fixture {
  Workload w;
  Mask mask;
  std::vector<float> q, k, v, o;
  MhaCall call;

  Fixture() {
    w.batch = 2;
    w.heads = 3;
    w.seq_len = 96;
    w.head_dim = 32;
    w.dtype = DType::kF32;
    mask = *Mask::Create(w.seq_len, w.seq_len);
    for (int64_t i = 0; i < w.seq_len; ++i) mask.SetRange(i, i - 8, i + 9);  // band
    const size_t n = static_cast<size_t>(w.batch * w.heads * w.seq_len * w.head_dim);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (auto* t : {&q, &k, &v}) {
      t->resize(n);
      for (float& x : *t) x = dist(rng);
    }
    o.assign(n, 0.0f);
    call.workload = w;
    call.mask = &mask;
    call.q = q.data();
    call.k = k.data();
    call.v = v.data();
    call.o = o.data();
  }
};

}  // namespace

TEST(CpuBackend, RunMhaThroughInterfaceEqualsReference) {
  Fixture f;
  std::unique_ptr<Backend> be = std::make_unique<CpuBackend>();
  EXPECT_EQ(be->Name(), "cpu");
  EXPECT_TRUE(be->Supports(DType::kF32));
  EXPECT_FALSE(be->Supports(DType::kF16));

  const size_t bytes = f.q.size() * sizeof(float);
  void* bufs[4];
  for (void*& b : bufs) {
    auto p = be->Allocate(bytes);
    ASSERT_TRUE(p.IsOk()) << p.Message();
    b = *p;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
  }
  ASSERT_TRUE(be->CopyToDevice(bufs[0], f.q.data(), bytes).IsOk());
  ASSERT_TRUE(be->CopyToDevice(bufs[1], f.k.data(), bytes).IsOk());
  ASSERT_TRUE(be->CopyToDevice(bufs[2], f.v.data(), bytes).IsOk());
  MhaCall call = f.call;
  call.q = bufs[0];
  call.k = bufs[1];
  call.v = bufs[2];
  call.o = bufs[3];
  Status s = be->RunMha(call);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  ASSERT_TRUE(be->Synchronize().IsOk());
  std::vector<float> got(f.q.size());
  ASSERT_TRUE(be->CopyToHost(got.data(), bufs[3], bytes).IsOk());
  for (void* b : bufs) be->Free(b);

  std::vector<float> want(f.q.size());
  ASSERT_TRUE(
      cpu::MaskedAttention(f.q.data(), f.k.data(), f.v.data(), want.data(), f.w, f.mask).IsOk());
  EXPECT_EQ(got, want);  // same code path: bit-identical
}

TEST(CpuBackend, DeviceIsTheH100BuiltIn) {
  CpuBackend be;
  DeviceSpec d = be.Device();
  EXPECT_EQ(d.name, "H100-SXM-80GB");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_TRUE(d.Validate().IsOk());
}

TEST(CpuBackend, AllocateRefusesZeroAndAbsurdSizes) {
  CpuBackend be;
  auto zero = be.Allocate(0);
  ASSERT_FALSE(zero.IsOk());
  EXPECT_TRUE(Contains(zero.Message(), "bytes")) << zero.Message();
  auto huge = be.Allocate((size_t{64} << 30) + 1);
  ASSERT_FALSE(huge.IsOk());
  EXPECT_TRUE(Contains(huge.Message(), "64 GiB")) << huge.Message();
  be.Free(nullptr);  // no-op
  EXPECT_FALSE(be.CopyToDevice(nullptr, &be, 4).IsOk());
  EXPECT_FALSE(be.CopyToHost(&be, nullptr, 4).IsOk());
  EXPECT_TRUE(be.CopyToHost(nullptr, nullptr, 0).IsOk());
}

TEST(CpuBackend, BadCallsNameTheField) {
  CpuBackend be;
  Backend& b = be;
  // Each: one change to a valid call, and what the refusal's message must contain.
  struct BadCall {
    std::function<void(MhaCall&)> edit;
    std::vector<std::string> parts;
  };
  Mask small = *Mask::Create(64, 64);
  const BadCall bad_calls[] = {
      {[](MhaCall& c) { c.q = nullptr; }, {"q: must not be null"}},
      {[](MhaCall& c) { c.o = nullptr; }, {"o: must not be null"}},
      {[](MhaCall& c) { c.mask = nullptr; }, {"mask: must not be null"}},
      {[](MhaCall& c) { c.workload.dtype = DType::kF16; }, {"workload.dtype", "f16"}},
      {[&](MhaCall& c) { c.mask = &small; }, {"mask: size 64 x 64", "workload.seq_len 96"}},
      {[](MhaCall& c) { c.workload.heads = 0; }, {"workload: heads"}},
      {[](MhaCall& c) { c.config.block_m = 48; }, {"config.block_m", "48"}},
      {[](MhaCall& c) { c.config.block_n = 256; }, {"config.block_n"}},
      {[](MhaCall& c) { c.config.num_warps = 3; }, {"config.num_warps"}},
  };
  for (const BadCall& bad : bad_calls) {
    Fixture f;
    bad.edit(f.call);
    Status s = b.RunMha(f.call);
    ASSERT_FALSE(s.IsOk()) << "accepted; expected an error naming " << bad.parts[0];
    for (const std::string& part : bad.parts)
      EXPECT_TRUE(Contains(s.Message(), part)) << s.Message();
  }
  {
    Fixture f;  // the valid baseline really is valid
    EXPECT_TRUE(ValidateMhaCall(f.call).IsOk());
    f.call.config.kernel = MhaKernel::kRowWise;
    f.call.config.block_m = 16;
    f.call.config.num_warps = 8;
    EXPECT_TRUE(b.RunMha(f.call).IsOk());
  }
}
