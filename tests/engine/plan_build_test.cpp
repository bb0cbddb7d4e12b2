// Tests of MakeAnalyticalPlan (engine/plan/plan_build.h): a plan from a generated mask keeps
// its spec, one from an edited mask carries it inline; both pass the loader's validation and
// give back the exact mask; the MHA choice is the selection's.
#include "engine/plan/plan_build.h"

#include <gtest/gtest.h>

using stof::engine::MaskSpec;
using stof::engine::Plan;
using stof::engine::Workload;

namespace {

TEST(PlanBuild, SpecAndInlineMasksValidateAndReplay) {
  MaskSpec spec;
  spec.pattern = "bigbird";
  spec.seq_len = 512;
  spec.seed = 7;
  auto resolved = Resolve(spec);
  ASSERT_TRUE(resolved.IsOk());
  auto mask = Generate(*resolved);
  ASSERT_TRUE(mask.IsOk());
  Workload w;
  w.seq_len = 512;
  auto dev = stof::engine::FindBuiltinDevice("h100");
  ASSERT_TRUE(dev.IsOk());
  auto sel = SelectKernel(*mask, w, *dev);
  ASSERT_TRUE(sel.IsOk()) << sel.Message();

  const Plan with_spec = MakeAnalyticalPlan(*mask, &*resolved, w, *dev, *sel, "stof-studio");
  EXPECT_TRUE(with_spec.mask.has_spec);
  EXPECT_EQ(with_spec.tuning.seed, 7u);
  EXPECT_EQ(with_spec.created_by, "stof-studio");
  EXPECT_EQ(with_spec.mha.block_m, sel->block_m);
  EXPECT_EQ(with_spec.mha.num_warps, sel->num_warps);
  EXPECT_EQ(with_spec.mha.kernel, sel->kernel);

  auto edited = *mask;
  edited.Set(3, 400, !edited.Get(3, 400));
  const Plan inline_plan = MakeAnalyticalPlan(edited, nullptr, w, *dev, *sel, "stof-studio");
  EXPECT_FALSE(inline_plan.mask.has_spec);
  EXPECT_EQ(inline_plan.tuning.seed, 0u);

  for (const Plan* p : {&with_spec, &inline_plan}) {
    auto back = stof::engine::PlanFromJson(stof::engine::PlanToJson(*p), "plan");
    ASSERT_TRUE(back.IsOk()) << back.Message();
    auto replay = stof::engine::PlanMaskToMask(back->mask, "plan");
    ASSERT_TRUE(replay.IsOk()) << replay.Message();
    EXPECT_EQ(*replay, p == &with_spec ? *mask : edited);
  }
}

}  // namespace
