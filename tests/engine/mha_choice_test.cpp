// Tests of the MHA choice as engine logic (engine/select/mha_choice.h) with capabilities of its
// own, not the kernels': the choice takes only what the capabilities accept, says why when Eq.
// 2's pick is not among them, and passes their refusal (naming the field) through for a
// Hopper-only shape and for SD / SDF. The kernels' capabilities are tested with the kernels
// (tests/gpu/mha_choice_test.cpp, hopper_shapes_test.cpp).
#include "engine/select/mha_choice.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/device/device_spec.h"
#include "engine/mask/mask_spec.h"

namespace {

namespace e = stof::engine;

// A build whose block-wise kernel runs 64 x 64 with 4 warps only, and no Hopper kernel, SD or
// SDF.
class OnlyOneTile final : public e::MhaKernelCapabilities {
 public:
  e::Status CheckBlockWise(int64_t, int64_t bm, int64_t bn, int64_t warps,
                           int64_t) const override {
    if (bm == 64 && bn == 64 && warps == 4) return e::Status::Ok();
    return e::MakeError("test kernel: only 64x64 with 4 warps");
  }
  bool PreferredBlockWise(int64_t, int64_t, int64_t, int64_t, int64_t) const override {
    return false;
  }
  std::string DescribeBlockWise(int64_t, int64_t) const override { return "64x64 warps 4"; }
  e::Status CheckHopper(int64_t, int64_t, int64_t, int64_t, int64_t) const override {
    return e::MakeError("test kernel: no Hopper kernel in this build");
  }
  e::Status CheckRecompose(const e::RecomposeParams&, int64_t, e::RecomposeVariant,
                           int64_t) const override {
    return e::MakeError("test kernel: no SD / SDF");
  }
};

e::Mask Causal(int64_t L) {
  e::MaskSpec s;
  s.pattern = "causal";
  s.seq_len = L;
  return *e::Generate(s);
}

e::Workload Square(int64_t L, int64_t d) {
  e::Workload w;
  w.batch = 1, w.heads = 4, w.seq_len = L, w.head_dim = d;
  return w;
}

}  // namespace

TEST(EngineMhaChoice, TakesOnlyWhatTheCapabilitiesRun) {
  const OnlyOneTile caps;
  auto a100 = e::FindBuiltinDevice("a100");
  ASSERT_TRUE(a100.IsOk());
  e::MhaRequest block;
  block.kernel = e::MhaKernelRequest::kBlockWise;
  auto c = e::ChooseMhaConfig(Causal(512), Square(512, 64), *a100, block, caps);
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_EQ(c->config.block_m, 64);
  EXPECT_EQ(c->config.block_n, 64);
  EXPECT_EQ(c->config.num_warps, 4);
  EXPECT_EQ(c->kernel_source, "user");
  // A tile the capabilities refuse, all fields given: their message.
  block.block_m = block.block_n = 128;
  block.num_warps = 8;
  auto refused = e::ChooseMhaConfig(Causal(512), Square(512, 64), *a100, block, caps);
  ASSERT_FALSE(refused.IsOk());
  EXPECT_EQ(refused.Message(), "test kernel: only 64x64 with 4 warps");
  // Only a block size given: none of Eq. 2's candidates at it runs, and the message lists what
  // the capabilities describe.
  block.num_warps = 0;
  auto none = e::ChooseMhaConfig(Causal(512), Square(512, 64), *a100, block, caps);
  ASSERT_FALSE(none.IsOk());
  EXPECT_NE(none.Message().find("(supported: 64x64 warps 4)"), std::string::npos)
      << none.Message();
}

TEST(EngineMhaChoice, PassesTheCapabilitiesRefusalsThrough) {
  const OnlyOneTile caps;
  auto h100 = e::FindBuiltinDevice("h100");
  ASSERT_TRUE(h100.IsOk());
  e::MhaRequest sdf;
  sdf.kernel = e::MhaKernelRequest::kRecomposed;
  auto r = e::ChooseMhaConfig(Causal(256), Square(256, 64), *h100, sdf, caps);
  ASSERT_FALSE(r.IsOk());
  EXPECT_EQ(r.Message(), "test kernel: no SD / SDF");
  // A grouped shape runs on the Hopper kernel only; a request naming its tile is checked by
  // the capabilities.
  e::Workload grouped = Square(256, 64);
  grouped.heads = 8, grouped.kv_heads = 2;
  e::MhaRequest hopper;
  hopper.kernel = e::MhaKernelRequest::kBlockWise;
  hopper.num_warps = e::kHopperMhaWarps64;
  auto g = e::ChooseMhaConfig(Causal(256), grouped, *h100, hopper, caps);
  ASSERT_FALSE(g.IsOk());
  EXPECT_EQ(g.Message(), "test kernel: no Hopper kernel in this build");
}
