// `stof plan validate FILE`: loads a plan, checks every field against the schema rules and
// the mask it describes, and prints a summary (or the first problem with its JSON path).
#include <cstdio>
#include <memory>

#include "app/cli/cli_common.h"
#include "app/common/option_checks.h"
#include "engine/plan/plan.h"

namespace stof::app {

namespace {
struct PlanArgs {
  std::string file;
  bool json = false;
};

int RunValidate(const PlanArgs& a) {
  auto plan = engine::LoadPlan(a.file);
  if (!plan.IsOk()) {
    if (a.json) PrintJson("plan-check", {{"file", a.file}, {"valid", false}, {"error", plan.Message()}});
    return Fail("plan validate", plan.Message());
  }
  auto mask = engine::PlanMaskToMask(plan->mask, a.file);
  if (!mask.IsOk()) {
    if (a.json) PrintJson("plan-check", {{"file", a.file}, {"valid", false}, {"error", mask.Message()}});
    return Fail("plan validate", mask.Message());
  }
  const engine::Plan& p = *plan;
  if (a.json) {
    PrintJson("plan-check", {{"file", a.file},
               {"valid", true},
               {"schema_version", p.schema_version},
               {"device", p.device.name},
               {"model", p.model ? nlohmann::json(p.model->name) : nlohmann::json(nullptr)},
               {"mask_hash", p.mask.hash},
               {"kernel", engine::MhaKernelName(p.mha.kernel)}});
    return kExitOk;
  }
  std::printf("%s: valid plan (schema %d)\n", a.file.c_str(), p.schema_version);
  std::printf("  device    %s\n", p.device.name.c_str());
  std::printf("  workload  batch %lld, heads %lld, L %lld, d %lld, %s%s\n",
              static_cast<long long>(p.workload.batch), static_cast<long long>(p.workload.heads),
              static_cast<long long>(p.workload.seq_len),
              static_cast<long long>(p.workload.head_dim), engine::DTypeName(p.workload.dtype),
              p.workload.IsSquareMha()
                  ? ""
                  : (", " + std::to_string(p.workload.KvHeads()) + " key/value heads, its last " +
                     std::to_string(p.workload.QLen()) + " rows")
                        .c_str());
  if (p.model)
    std::printf("  model     %s (%s %s), hidden %lld, ffn %lld, %lld layers%s\n",
                p.model->name.c_str(), engine::ModelFamilyName(p.model->family),
                engine::LayerPartName(p.model->part), static_cast<long long>(p.model->hidden),
                static_cast<long long>(p.model->ffn), static_cast<long long>(p.model->layers),
                p.model->separate_bias ? ", separate bias ops" : "");
  std::printf("  mask      %s, hash %s, density %s\n",
              p.mask.has_spec ? engine::Describe(p.mask.spec).c_str() : "inline",
              p.mask.hash.c_str(), Percent(p.mask.density).c_str());
  std::printf("  mha       %s, BM %lld, BN %lld, %lld warps (%s)\n",
              engine::MhaKernelName(p.mha.kernel), static_cast<long long>(p.mha.block_m),
              static_cast<long long>(p.mha.block_n), static_cast<long long>(p.mha.num_warps),
              p.mha.chosen_by.c_str());
  std::printf("  fusion    %s\n", p.fusion.code.empty() ? "(none)" : p.fusion.code.c_str());
  return kExitOk;
}
}  // namespace

void RegisterPlanCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* plan = app.add_subcommand("plan", "Work with plan files");
  plan->require_subcommand(1);
  CLI::App* validate = plan->add_subcommand("validate", "Check a plan file field by field");
  validate->add_option("file", args->file, "Plan JSON file")->required()->check(NonEmpty());
  validate->add_flag("--json", args->json, "Print machine-readable JSON");
  validate->callback([args, exit_code] { *exit_code = RunValidate(*args); });
}

}  // namespace stof::app
