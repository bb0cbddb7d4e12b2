// Fuzz target: plan files, load and validate (engine::LoadPlan, then PlanMaskToMask as `stof
// plan validate` does; also `stof run --plan`, `stof-studio --open-plan`). A loaded plan must
// keep the documented round trip PlanToJson -> PlanFromJson -> PlanToJson. Masks longer than
// kMaxMaskLen are not generated (a legal L = 32768 mask takes seconds: slow, not a bug).
#include "engine/plan/plan.h"
#include "tests/fuzz/fuzz_input.h"

namespace {
constexpr int64_t kMaxMaskLen = 2048;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  auto plan = engine::LoadPlan(fuzz::WriteInput(data, size, "fuzz.plan.json"));
  if (!plan.IsOk()) return 0;
  const nlohmann::json j = engine::PlanToJson(*plan);
  auto again = engine::PlanFromJson(j, "again");
  fuzz::Require(again.IsOk() && engine::PlanToJson(*again) == j,
                "PlanToJson -> PlanFromJson -> PlanToJson is the same JSON");
  if (plan->mask.seq_len <= kMaxMaskLen) (void)engine::PlanMaskToMask(plan->mask, "fuzz");
  return 0;
}
