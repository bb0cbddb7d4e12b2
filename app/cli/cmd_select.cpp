// `stof select`: STOF's analytical kernel selection for a mask and workload: Eq. 1 (row-wise
// vs block-wise) and Eq. 2 (BM, BN, num_warps), with every intermediate value; --plan-out
// writes the choice as a plan (a KV cache past 32768 keys: its last rows, schema version 3).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "app/cli/cli_common.h"
#include "app/cli/device_choice.h"
#include "app/common/run_choice.h"
#include "app/common/option_checks.h"
#include "engine/plan/plan.h"
#include "engine/plan/plan_build.h"
#include "engine/select/kernel_select.h"

namespace stof::app {

namespace {
struct SelectArgs {
  MaskSourceOptions source;
  int64_t batch = 8, heads = 12, head_dim = 64;
  int64_t kv_heads = 0, q_len = 0;  // --kv-heads, --q-len (0: --heads, the key length)
  std::string dtype = "f16";          // --dtype: f16 or bf16 (the Hopper kernel only)
  std::string device = "H100-SXM-80GB";
  std::string plan_out;
  int top = 10;
  bool json = false;
};

nlohmann::json CandidateJson(const engine::Eq2Candidate& c) {
  nlohmann::json j = {{"block_m", c.block_m},       {"block_n", c.block_n},
                      {"num_warps", c.num_warps},   {"req_smem_elems", c.req_smem_elems},
                      {"req_smem_bytes", c.req_smem_bytes}, {"blocks_per_sm", c.blocks_per_sm},
                      {"occ", c.occ},               {"score", c.score},
                      {"feasible", c.feasible}};
  if (!c.feasible) j["why_infeasible"] = c.why_infeasible;
  return j;
}

// The plan of a shape only the Hopper kernel serves: up to Mask::kMaxLen keys the square mask
// (schema version 2); past it the generator's last q_len rows that `src.mask` holds
// (ResolveCacheRowsSource), as a version 3 plan (mask.rows "last").
engine::Expected<engine::Plan> ShapePlan(const MaskSource& src, const engine::Mask& square,
                                         const engine::Workload& w,
                                         const engine::DeviceSpec& dev,
                                         const engine::MhaRunChoice& run) {
  if (w.seq_len <= engine::Mask::kMaxLen)
    return engine::MakeShapePlan(square, src.has_spec ? &src.spec : nullptr, w, dev, run, "stof");
  // Unreachable from the options (only a generator goes past a square mask), kept as a guard.
  if (!src.has_spec)
    return engine::MakeError("--plan-out: a plan holds a mask past " +
                             std::to_string(engine::Mask::kMaxLen) +
                             " keys only as a generator spec's last rows; " + src.label +
                             " has no spec");
  return engine::MakeCacheRowsPlan(src.mask, src.spec, w, dev, run, "stof");
}

// Grouped key/value heads or q_len != seq_len: Eq. 1 and Eq. 2 describe the STOF paper's
// square MHA and are not evaluated; what runs is the Hopper kernel's tile model's choice (or
// why nothing runs). `square`: the L_k x L_k mask whose last q_len rows `src.mask` holds
// (up to Mask::kMaxLen keys; past it `src.mask` itself), which a plan keeps (ShapePlan).
int RunSelectShape(const SelectArgs& a, const MaskSource& src, const engine::Mask& square,
                   const engine::Workload& w, const engine::DeviceSpec& dev) {
  auto run = engine::ChooseRun(MakeMhaRunChooser(), src.mask, w, dev);
  if (!a.plan_out.empty()) {
    if (!run.IsOk()) return Fail("select", "--plan-out: nothing runs this shape: " + run.Message());
    auto plan = ShapePlan(src, square, w, dev, *run);
    if (!plan.IsOk()) return Fail("select", plan.Message());
    if (engine::Status s = engine::SavePlan(a.plan_out, *plan); !s.IsOk())
      return Fail("select", s.Message());
  }
  if (a.json) {
    nlohmann::json j;
    j["source"] = src.label;
    j["device"] = dev.name;
    j["workload"] = {{"batch", w.batch},       {"seq_len", w.seq_len}, {"q_len", w.QLen()},
                     {"heads", w.heads},       {"kv_heads", w.KvHeads()},
                     {"head_dim", w.head_dim}, {"dtype", engine::DTypeName(w.dtype)}};
    j["eq1"] = j["eq2"] = j["choice"] = nullptr;
    j["eq_why_not"] = "Eq. 1 and Eq. 2 describe square MHA (q_len = seq_len, kv_heads = heads)";
    j["run_choice"] = run.IsOk() ? engine::MhaRunChoiceJson(*run) : nlohmann::json{{"why_not", run.Message()}};
    if (!a.plan_out.empty()) j["plan_out"] = a.plan_out;
    PrintJson("select", j);
    return kExitOk;
  }
  std::printf("mask      %s, its last %lld %s\n", src.label.c_str(),
              static_cast<long long>(w.QLen()), w.QLen() == 1 ? "row" : "rows");
  std::printf("workload  batch %lld, heads %lld over %lld key/value heads, L_q %lld, L_k %lld, "
              "d %lld, %s\n",
              static_cast<long long>(w.batch), static_cast<long long>(w.heads),
              static_cast<long long>(w.KvHeads()), static_cast<long long>(w.QLen()),
              static_cast<long long>(w.seq_len), static_cast<long long>(w.head_dim),
              engine::DTypeName(w.dtype));
  std::printf("device    %s\n", dev.name.c_str());
  std::printf("\nEq. 1 / Eq. 2  not evaluated: they describe square MHA (L_q = L_k, as many "
              "key/value heads as query heads)\n");
  if (run.IsOk()) {
    std::printf("runs      %s\n", engine::MhaRunChoiceText(*run).c_str());
    if (!run->note.empty()) std::printf("          %s\n", run->note.c_str());
  } else {
    std::printf("runs      nothing: %s\n", run.Message().c_str());
  }
  if (!a.plan_out.empty()) std::printf("wrote     %s\n", a.plan_out.c_str());
  return kExitOk;
}

int RunSelect(const SelectArgs& a) {
  auto dev = ResolveDevice(a.device);
  if (!dev.IsOk()) return Fail("select", dev.Message());
  // Past Mask::kMaxLen keys the source holds only the generator's last q_len rows
  // (ResolveCacheRowsSource), which a plan keeps as such (schema version 3, ShapePlan).
  auto src = ResolveCacheRowsSource(a.source, a.q_len);
  if (!src.IsOk()) return Fail("select", src.Message());
  engine::Workload w;
  w.batch = a.batch;
  w.heads = a.heads;
  w.head_dim = a.head_dim;
  w.dtype = *engine::ParseDType(a.dtype);  // checked by AddKernelDtypeOption
  w.seq_len = src->mask.Cols();
  const engine::Mask square = src->mask;
  if (engine::Status s = ApplyShapeOptions(a.kv_heads, a.q_len, &w, &src->mask); !s.IsOk())
    return Fail("select", s.Message());
  if (engine::Status s = w.Validate("workload"); !s.IsOk()) return Fail("select", s.Message());
  if (!w.IsSquareMha()) return RunSelectShape(a, *src, square, w, *dev);
  auto sel = engine::SelectKernel(src->mask, w, *dev);
  if (!sel.IsOk()) return Fail("select", sel.Message());

  // What the engine runs: the kernels' own rules on top of Eq. 1 / Eq. 2 (run_choice.h).
  auto run = engine::ChooseRun(MakeMhaRunChooser(), src->mask, w, *dev);

  if (!a.plan_out.empty()) {
    engine::Status s = engine::SavePlan(
        a.plan_out, engine::MakeAnalyticalPlan(src->mask, src->has_spec ? &src->spec : nullptr, w,
                                               *dev, *sel, "stof", run.IsOk() ? &*run : nullptr));
    if (!s.IsOk()) return Fail("select", s.Message());
  }

  const engine::Eq1Result& e1 = sel->eq1;
  if (a.json) {
    nlohmann::json j;
    j["source"] = src->label;
    j["device"] = dev->name;
    j["workload"] = {{"batch", w.batch}, {"seq_len", w.seq_len}, {"heads", w.heads},
                     {"head_dim", w.head_dim}, {"dtype", engine::DTypeName(w.dtype)}};
    j["eq1"] = {{"n", e1.n},
                {"valid_blocks", e1.valid_blocks},
                {"valid_ratio", e1.valid_ratio},
                {"tau", engine::Eq1Result::kTau},
                {"penalty", std::isfinite(e1.penalty) ? nlohmann::json(e1.penalty) : nlohmann::json("inf")},
                {"threshold", std::isfinite(e1.threshold) ? nlohmann::json(e1.threshold) : nlohmann::json("-inf")},
                {"kernel", engine::MhaKernelName(e1.kernel)}};
    nlohmann::json cands = nlohmann::json::array();
    for (const auto& c : sel->eq2.candidates) cands.push_back(CandidateJson(c));
    j["eq2"] = {{"candidates", cands}, {"best", sel->eq2.best}};
    j["choice"] = {{"kernel", engine::MhaKernelName(sel->kernel)}, {"block_m", sel->block_m},
                   {"block_n", sel->block_n}, {"num_warps", sel->num_warps}};
    j["run_choice"] = run.IsOk() ? engine::MhaRunChoiceJson(*run) : nlohmann::json{{"why_not", run.Message()}};
    if (!a.plan_out.empty()) j["plan_out"] = a.plan_out;
    PrintJson("select", j);
    return kExitOk;
  }

  std::printf("mask      %s\n", src->label.c_str());
  std::printf("workload  batch %lld, heads %lld, L %lld, d %lld, %s\n",
              static_cast<long long>(w.batch), static_cast<long long>(w.heads),
              static_cast<long long>(w.seq_len), static_cast<long long>(w.head_dim),
              engine::DTypeName(w.dtype));
  std::printf("device    %s (%d SMs, %lld KiB smem/SM, %d warps/SM)\n", dev->name.c_str(),
              dev->sm_count, static_cast<long long>(dev->smem_per_sm_bytes / 1024),
              dev->max_warps_per_sm);
  std::printf("\nEq. 1  n = ceil(L/16) = %lld, valid 16x16 blocks = %lld\n",
              static_cast<long long>(e1.n), static_cast<long long>(e1.valid_blocks));
  std::printf("       threshold = %lld/%lld^2 - %.1f/(log2 %lld)^2 = %.6f - %.6f = %.6f -> %s\n",
              static_cast<long long>(e1.valid_blocks), static_cast<long long>(e1.n),
              engine::Eq1Result::kTau, static_cast<long long>(e1.n), e1.valid_ratio, e1.penalty,
              e1.threshold, engine::MhaKernelName(e1.kernel));
  std::vector<const engine::Eq2Candidate*> order;
  for (const auto& c : sel->eq2.candidates)
    if (c.feasible) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [](auto* x, auto* y) { return x->score > y->score; });
  std::printf("\nEq. 2  top %d of %zu feasible candidates (of %zu)\n", a.top, order.size(),
              sel->eq2.candidates.size());
  std::printf("       %4s %4s %5s %14s %9s %6s %9s\n", "BM", "BN", "warps", "req_SMEM (B)", "blk/SM",
              "OCC", "score");
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < a.top; ++i) {
    const auto& c = *order[i];
    std::printf("       %4lld %4lld %5lld %14lld %9lld %6.3f %9.3f\n",
                static_cast<long long>(c.block_m), static_cast<long long>(c.block_n),
                static_cast<long long>(c.num_warps), static_cast<long long>(c.req_smem_bytes),
                static_cast<long long>(c.blocks_per_sm), c.occ, c.score);
  }
  std::printf("\nchoice    %s", engine::MhaKernelName(sel->kernel));
  if (sel->kernel == engine::MhaKernel::kBlockWise)
    std::printf(", BM %lld, BN %lld, %lld warps  (Eq. 2's pick)", static_cast<long long>(sel->block_m),
                static_cast<long long>(sel->block_n), static_cast<long long>(sel->num_warps));
  else
    std::printf("  (Eq. 1)");
  std::printf("\n");
  if (run.IsOk()) {
    std::printf("runs      %s\n", engine::MhaRunChoiceText(*run).c_str());
    if (!run->note.empty()) std::printf("          %s\n", run->note.c_str());
  } else {
    std::printf("runs      not known: %s\n", run.Message().c_str());
  }
  if (!a.plan_out.empty()) std::printf("wrote     %s\n", a.plan_out.c_str());
  return kExitOk;
}
}  // namespace

void RegisterSelectCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SelectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "select", "Pick the MHA kernel and its parameters with STOF Eq. 1 and Eq. 2, and show what "
                "the engine runs (the kernels' own rules; CUDA builds)");
  args->source.max_seq = kLongSeqLen;  // past Mask::kMaxLen with --q-len (a KV cache's rows)
  AddMaskSourceOptions(cmd, &args->source);
  AddWorkloadOptions(cmd, &args->batch, &args->heads, &args->head_dim);
  AddShapeOptions(cmd, &args->kv_heads, &args->q_len);
  cmd->add_option("--device", args->device,
                  DeviceOptionHelp("local, auto, predict or a built-in (Eq. 1 / Eq. 2 model a GPU: not cpu)"))
      ->capture_default_str();
  AddKernelDtypeOption(cmd, &args->dtype);
  cmd->add_option("--plan-out", args->plan_out, "Write the choice as a plan JSON to FILE")
      ->check(NonEmpty());
  cmd->add_option("--top", args->top, "Eq. 2 candidates to list")
      ->capture_default_str()
      ->check(IntRange(1, std::numeric_limits<int>::max()));
  cmd->add_flag("--json", args->json, "Print machine-readable JSON (all candidates)");
  cmd->callback([args, exit_code] { *exit_code = RunSelect(*args); });
}

}  // namespace stof::app
