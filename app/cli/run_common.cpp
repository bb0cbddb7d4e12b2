// MakeRunBackend, LocalGpuAvailable, ResolveMaskName, SchemeFromText, ResolveLayerSource and
// ResolveLayerScheme (run_common.h).
#include "app/cli/run_common.h"

#include <filesystem>

#include "app/cli/graph_args.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/fusion/default_scheme.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan_choices.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/cuda_backend.h"
#endif

namespace stof::app {

std::unique_ptr<engine::Backend> MakeRunBackend(const std::string& device, std::string* error) {
  if (device == "cpu") return std::make_unique<engine::CpuBackend>();
#ifdef STOF_WITH_KERNELS
  if (device == "local") {
    auto b = kernels::CudaBackend::Create(0);
    if (b.IsOk()) return std::move(*b);
    *error = b.Message() + " (use --device cpu for the reference backend)";
    return nullptr;
  }
#else
  if (device == "local") {
    *error = "--device local: this build has no CUDA (STOF_CUDA=OFF); use --device cpu";
    return nullptr;
  }
#endif
  *error = "--device: expected local or cpu, got '" + device + "'";
  return nullptr;
}

bool LocalGpuAvailable() {
#ifdef STOF_WITH_KERNELS
  return kernels::CudaBackend::Create(0).IsOk();
#else
  return false;
#endif
}

void ResolveMaskName(MaskSourceOptions* mask) {
  if (!mask->mask_file.empty() && mask->pattern.empty() &&
      !std::filesystem::exists(mask->mask_file)) {
    for (const auto& n : engine::MaskPatternNames())
      if (n == mask->mask_file) {
        mask->pattern = n;
        mask->mask_file.clear();
      }
  }
}

engine::Expected<engine::FusionScheme> SchemeFromText(const std::string& sch,
                                                      const engine::OpGraph& g) {
  if (sch.empty()) return engine::DefaultScheme(g);
  return ParseScheme(sch, g);  // the named schemes, a code or its hex form
}

engine::Expected<engine::OpGraph> LayerSource::GraphAt(int64_t batch, int64_t seq) const {
  const bool model_given = !args.graph.model.empty() || !args.graph.config.empty();
  if (plan && !model_given) {
    engine::Plan p = *plan;
    p.workload.batch = batch;
    p.workload.seq_len = seq;
    if (!args.graph.layer.empty() && p.model) {  // --layer too must match (CheckPlanFor)
      auto part = engine::ParseLayerPart(args.graph.layer);
      if (!part.IsOk()) return part.ToStatus();
      p.model->part = *part;
    }
    return engine::PlanGraph(p, engine::DType::kF16, args.plan);
  }
  GraphArgs ga = args.graph;
  ga.batch = batch;
  ga.seq = seq;
  return BuildGraph(ga);
}

engine::Expected<LayerSource> ResolveLayerSource(const LayerSourceArgs& in) {
  LayerSource src;
  LayerSourceArgs& a = src.args;
  a = in;
  ResolveMaskName(&a.mask);  // --mask NAME: a generator name unless a file of that name exists
  const bool mask_given = !a.mask.mask_file.empty() || !a.mask.pattern.empty();
  if (!a.plan.empty()) {
    auto loaded = engine::LoadPlan(a.plan);
    if (!loaded.IsOk()) return loaded.ToStatus();
    if (loaded->mask.last_rows > 0)
      return engine::MakeError(
          a.plan + ": mask.rows: the plan holds the last " +
          std::to_string(loaded->mask.last_rows) + " rows of a " +
          std::to_string(loaded->mask.seq_len) + "-key mask (a KV cache's step, workload.q_len "
          "over workload.seq_len); a layer's run and profile replay square layers (L x L, L <= " +
          std::to_string(engine::Mask::kMaxLen) + ") (refused)");
    src.plan = std::move(*loaded);
    if (!a.batch_given) a.graph.batch = src.plan->workload.batch;
    if (!a.seq_given) a.mask.seq = src.plan->workload.seq_len;
  }
  if (!mask_given && src.plan) {
    if (const std::string given = GivenGeneratorOption(a.mask); !given.empty())
      return engine::MakeError(given + ": does not apply to the plan's mask; give --mask NAME "
                               "(or --pattern) with it to run another mask");
  }
  if (!mask_given && !src.plan) a.mask.pattern = "bigbird";
  if (a.mask.seq == 0) a.mask.seq = 512;  // --seq (added with the mask options) is also L
  a.graph.seq = a.mask.seq;
  auto graph = src.GraphAt(a.graph.batch, a.graph.seq);
  if (!graph.IsOk()) return graph.ToStatus();
  src.graph = std::move(*graph);
  if (mask_given || !src.plan) {
    auto mask = ResolveMaskSource(a.mask);
    if (!mask.IsOk()) return mask.ToStatus();
    src.mask = std::move(*mask);
  } else {
    auto m = engine::PlanMaskToMask(src.plan->mask, a.plan);
    if (!m.IsOk()) return m.ToStatus();
    src.mask.mask = std::move(*m);
    src.mask.has_spec = src.plan->mask.has_spec;
    src.mask.spec = src.plan->mask.spec;
    src.mask.label = (src.plan->mask.has_spec ? engine::Describe(src.plan->mask.spec)
                                              : std::string("inline")) +
                     " (the plan's)";
  }
  return src;
}

engine::Status CheckLayerMask(const LayerSource& src) {
  if (src.mask.mask.Rows() == src.graph.seq_len) return engine::Status::Ok();
  return engine::MakeError("--mask: " + src.mask.label + " is " +
                           std::to_string(src.mask.mask.Rows()) + " x " +
                           std::to_string(src.mask.mask.Cols()) + ", --seq is " +
                           std::to_string(src.graph.seq_len));
}

engine::Expected<LayerScheme> ResolveLayerScheme(const LayerSource& src,
                                                 const std::string& scheme_text,
                                                 const engine::SegmentChoice& base,
                                                 const engine::DeviceSpec& here) {
  const engine::OpGraph& g = src.graph;
  LayerScheme out{engine::FusionScheme::OpByOp(g), {}, {}};
  if (src.plan) {
    auto compat = engine::CheckPlanFor(*src.plan, g, src.mask.mask, here, src.args.plan);
    if (!compat.IsOk()) return compat.ToStatus();
    out.warnings = compat->warnings;
    auto run = engine::PlanToRun(*src.plan, g, src.args.plan);
    if (!run.IsOk()) return run.ToStatus();
    out.scheme = run->scheme;
    out.choices = run->choices;
  } else {
    auto parsed = SchemeFromText(scheme_text, g);
    if (!parsed.IsOk()) return parsed.ToStatus();
    out.scheme = *parsed;
    out.choices.assign(out.scheme.Segments().size(), base);
  }
  STOF_RETURN_IF_ERROR(CheckLayerMask(src));
  return out;
}

}  // namespace stof::app
