// Fuzz target: a plan lowered to the work a run does, on the CPU (the path of `stof run --plan
// FILE --device cpu`, app/cli/run_common.cpp, and of the studio's "run plan"): LoadPlan, the
// plan's mask (PlanMaskToMask), its layer graph (PlanGraph), CheckPlanFor, PlanToRun, then the
// one-layer ModelRunner with its bound backend calls, and for tiny layers a run of it. Large
// shapes stop early (bounds below): a legal BERT-large layer at L = 32768 takes minutes and
// gigabytes, which is slow, not a bug.
#include "engine/cpu/cpu_backend.h"
#include "engine/plan/plan.h"
#include "engine/plan/plan_choices.h"
#include "engine/run/model_runner.h"
#include "tests/fuzz/fuzz_input.h"

namespace {
constexpr int64_t kMaxMaskLen = 2048;             // masks generated
constexpr int64_t kMaxLayerBytes = int64_t{64} << 20;  // OpGraph::TotalBytes of a built runner
constexpr int64_t kMaxRunFlops = 20'000'000;      // OpGraph::TotalFlops of a layer that is run
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  const std::string name = "fuzz.plan.json";
  auto plan = engine::LoadPlan(fuzz::WriteInput(data, size, name));
  if (!plan.IsOk() || plan->mask.seq_len > kMaxMaskLen) return 0;
  auto mask = engine::PlanMaskToMask(plan->mask, name);
  if (!mask.IsOk()) return 0;
  auto graph = engine::PlanGraph(*plan, engine::DType::kF16, name);
  if (!graph.IsOk()) return 0;
  engine::CpuBackend cpu;
  auto compat = engine::CheckPlanFor(*plan, *graph, *mask, cpu.Device(), name);
  if (!compat.IsOk()) return 0;
  auto run = engine::PlanToRun(*plan, *graph, name);
  if (!run.IsOk()) return 0;
  fuzz::Require(run->choices.size() == run->scheme.Segments().size(),
                "PlanToRun gives one choice per segment");
  if (graph->TotalBytes() > kMaxLayerBytes) return 0;
  engine::ModelRunOptions options;
  options.choices = run->choices;
  auto model = engine::ModelRunner::Create(cpu, *graph, *mask, run->scheme, options);
  if (!model.IsOk() || graph->TotalFlops() > kMaxRunFlops) return 0;
  (void)(*model)->Run(nullptr);
  return 0;
}
