// Plan params <-> SegmentChoice, fusion section <-> (scheme, choices), the plan's model and the
// replay check (plan_choices.h). Readers throw json_read::JsonPathError internally (as in
// plan_read.cpp); every public function here catches it, so no exception leaves this file.
#include "engine/plan/plan_choices.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "engine/core/json_read.h"
#include "engine/fusion/default_scheme.h"
#include "engine/graph/graph_build.h"

namespace stof::engine {

namespace {

using json_read::Fail;
using json_read::Json;
using json_read::JsonPathError;
using json_read::Shown;

std::string Prefix(const std::string& name) { return name.empty() ? "" : name + ": "; }

// Parameters end up in the kernels' int fields (cuda_backend_layer_ops.cpp), so nothing above
// INT32_MAX can be meant.
constexpr int64_t kMaxParam = std::numeric_limits<int32_t>::max();

// The exact spellings a plan file uses (the CLI's aliases like "decomposed" are not accepted).
const std::vector<std::string>& VariantNames() {
  static const std::vector<std::string> kNames = {
      MhaVariantName(MhaVariant::kFused), MhaVariantName(MhaVariant::kUnfused),
      MhaVariantName(MhaVariant::kDecomposed), MhaVariantName(MhaVariant::kRecomposed)};
  return kNames;
}

MhaVariant VariantFromName(const std::string& s) {
  for (MhaVariant v : {MhaVariant::kFused, MhaVariant::kUnfused, MhaVariant::kDecomposed,
                       MhaVariant::kRecomposed})
    if (s == MhaVariantName(v)) return v;
  return MhaVariant::kFused;  // unreachable: s is one of VariantNames()
}

// An integer lo..kMaxParam; a wrong type reads "expected an integer >= lo" too, the one rule
// a reader of the message needs.
int64_t ReadParam(const Json& v, const std::string& path, int64_t lo) {
  const bool too_big = v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxParam)
                                              : v.is_number_integer() && v.get<int64_t>() > kMaxParam;
  if (too_big) Fail(path, "expected an integer <= " + std::to_string(kMaxParam) + ", got " + Shown(v));
  if (!v.is_number_integer() || v.get<int64_t>() < lo)
    Fail(path, "expected an integer >= " + std::to_string(lo) + ", got " + Shown(v));
  return v.get<int64_t>();
}

// `base` supplies what the params leave out (PlanToRun: the plan's mha section).
SegmentChoice ReadParams(const Json& params, TemplateKind kind, const std::string& field,
                         SegmentChoice base) {
  if (!params.is_object()) Fail(field, "expected an object, got " + Shown(params));
  const auto path = [&](const std::string& key) { return field + "." + key; };
  SegmentChoice c = std::move(base);
  if (kind != TemplateKind::kSparseMha) {
    for (const auto& [key, value] : params.items()) c.params[key] = ReadParam(value, path(key), 0);
    return c;
  }
  static const std::vector<std::string> kKeys = {"variant", "kernel", "block_m",
                                                 "block_n", "num_warps", "sub_len"};
  for (const auto& item : params.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), item.key()) == kKeys.end())
      Fail(path(item.key()),
           "unknown key (allowed here: variant, kernel, block_m, block_n, num_warps, sub_len)");
  }
  if (params.contains("variant"))
    c.mha_variant =
        VariantFromName(json_read::ReadEnum(params.at("variant"), path("variant"), VariantNames()));
  // The fused kernel's configuration means nothing to the other variants: refused there, so
  // a plan never carries a setting that silently does nothing.
  for (const char* key : {"kernel", "block_m", "block_n", "num_warps"}) {
    if (params.contains(key) && c.mha_variant != MhaVariant::kFused)
      Fail(path(key), std::string("only with variant fused, got variant ") +
                          Shown(Json(MhaVariantName(c.mha_variant))));
  }
  if (params.contains("kernel")) {
    const std::string k =
        json_read::ReadEnum(params.at("kernel"), path("kernel"),
                            {MhaKernelName(MhaKernel::kRowWise), MhaKernelName(MhaKernel::kBlockWise)});
    c.mha_config.kernel =
        k == MhaKernelName(MhaKernel::kRowWise) ? MhaKernel::kRowWise : MhaKernel::kBlockWise;
  }
  if (params.contains("block_m")) c.mha_config.block_m = ReadParam(params.at("block_m"), path("block_m"), 1);
  if (params.contains("block_n")) c.mha_config.block_n = ReadParam(params.at("block_n"), path("block_n"), 1);
  if (params.contains("num_warps"))
    c.mha_config.num_warps = ReadParam(params.at("num_warps"), path("num_warps"), 1);
  // sub_len is accepted with any variant (plans written before this reader carried it that
  // way); only sd and sdf use it.
  if (params.contains("sub_len")) c.sub_len = ReadParam(params.at("sub_len"), path("sub_len"), 1);
  return c;
}

template <class F>
auto Catching(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const JsonPathError& e) {
    return MakeError(e.what());
  } catch (const nlohmann::json::exception& e) {
    return MakeError(e.what());
  }
}

std::string Number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

bool HasBiasOps(const OpGraph& g) {
  return std::any_of(g.ops.begin(), g.ops.end(),
                     [](const Op& op) { return op.kind == OpKind::kBias; });
}

std::string OpsText(const OpGraph& g, const Segment& s) {
  std::string kinds;
  for (int n = s.first; n <= s.last; ++n) kinds += (kinds.empty() ? "" : "+") + std::string(OpKindName(g.At(n).kind));
  return SegmentLabel(s) + " (" + kinds + ")";
}

}  // namespace

nlohmann::json SegmentChoiceToParams(const SegmentChoice& c, TemplateKind kind) {
  Json j = Json::object();
  if (kind != TemplateKind::kSparseMha) {
    for (const auto& [key, value] : c.params) j[key] = value;
    return j;
  }
  j["variant"] = MhaVariantName(c.mha_variant);
  if (c.mha_variant == MhaVariant::kFused) {
    j["kernel"] = MhaKernelName(c.mha_config.kernel);
    j["block_m"] = c.mha_config.block_m;
    j["block_n"] = c.mha_config.block_n;
    j["num_warps"] = c.mha_config.num_warps;
  } else if (c.mha_variant != MhaVariant::kUnfused) {
    j["sub_len"] = c.sub_len;
  }
  return j;
}

Expected<SegmentChoice> SegmentChoiceFromParams(const nlohmann::json& params, TemplateKind kind,
                                                const std::string& field) {
  return Catching([&]() -> Expected<SegmentChoice> {
    return ReadParams(params, kind, field, SegmentChoice{});
  });
}

PlanFusion FusionToPlan(const OpGraph& g, const FusionScheme& s,
                        const std::vector<SegmentChoice>& choices) {
  PlanFusion f;
  f.code = s.Code();
  const auto& segs = s.Segments();
  for (size_t i = 0; i < segs.size(); ++i) {
    const SegmentChoice c = i < choices.size() ? choices[i] : SegmentChoice{};
    const TemplateMatch m = MatchTemplate(g, segs[i]);
    const TemplateKind kind = c.force_op_by_op ? TemplateKind::kNone : m.kind;
    PlanSegment ps;
    for (int op = segs[i].first; op <= segs[i].last; ++op) ps.ops.push_back(op);
    ps.template_name = TemplateName(kind);
    ps.params = SegmentChoiceToParams(c, kind);
    f.segments.push_back(std::move(ps));
  }
  return f;
}

Expected<PlanRun> PlanToRun(const Plan& plan, const OpGraph& g, const std::string& name) {
  const std::string prefix = Prefix(name);
  const PlanFusion& f = plan.fusion;
  PlanRun run{FusionScheme::OpByOp(g), {}};
  if (f.code.empty()) {
    if (!f.segments.empty())
      return MakeError(prefix + "fusion.segments: expected none without a code, got " +
                       std::to_string(f.segments.size()));
    run.scheme = DefaultScheme(g);
  } else {
    STOF_ASSIGN_OR_RETURN(auto s, FusionScheme::FromCode(f.code, g, prefix + "fusion.code"));
    run.scheme = s;
  }
  const auto& segs = run.scheme.Segments();
  if (!f.segments.empty() && f.segments.size() != segs.size())
    return MakeError(prefix + "fusion.segments: code '" + f.code + "' has " +
                     std::to_string(segs.size()) + " segments, the list has " +
                     std::to_string(f.segments.size()));
  SegmentChoice mha_base;
  mha_base.mha_config = PlanRunningMha(plan.mha);  // what runs, where the plan records it
  return Catching([&]() -> Expected<PlanRun> {
    for (size_t i = 0; i < segs.size(); ++i) {
      const TemplateMatch m = MatchTemplate(g, segs[i]);
      if (f.segments.empty()) {
        run.choices.push_back(m.kind == TemplateKind::kSparseMha ? mha_base : SegmentChoice{});
        continue;
      }
      const PlanSegment& ps = f.segments[i];
      const std::string field = prefix + "fusion.segments[" + std::to_string(i) + "]";
      std::vector<int64_t> want;
      for (int op = segs[i].first; op <= segs[i].last; ++op) want.push_back(op);
      if (ps.ops != want)
        Fail(field + ".ops", "expected " + JsonForMessage(Json(want)) + " (segment " +
                                 std::to_string(i + 1) + " of code '" + f.code + "'), got " +
                                 JsonForMessage(Json(ps.ops)));
      TemplateKind kind = m.kind;
      bool force = false;
      if (ps.template_name.empty()) {
        force = m.kind != TemplateKind::kNone;  // the plan runs it op by op on purpose
        kind = TemplateKind::kNone;
      } else if (ps.template_name != m.Name()) {
        Fail(field + ".template",
             "the plan has '" + TextForMessage(ps.template_name) + "', this run's ops " + OpsText(g, segs[i]) +
                 (m.kind == TemplateKind::kNone ? " match no template (" + m.reason + ")"
                                                : " match '" + std::string(m.Name()) + "'") +
                 " (refused)");
      }
      SegmentChoice c = ReadParams(ps.params, kind, field + ".params",
                                   kind == TemplateKind::kSparseMha ? mha_base : SegmentChoice{});
      c.force_op_by_op = force;
      run.choices.push_back(std::move(c));
    }
    return run;
  });
}

PlanModel ModelToPlan(const ModelConfig& model, LayerPart part, bool separate_bias) {
  PlanModel m;
  m.name = model.name;
  m.family = model.family;
  m.part = part;
  m.hidden = model.hidden;
  m.heads = model.heads;
  m.head_dim = model.head_dim;
  m.ffn = model.ffn;
  m.layers = model.layers;
  m.separate_bias = separate_bias;
  return m;
}

Expected<OpGraph> PlanGraph(const Plan& plan, DType dtype, const std::string& name) {
  const std::string prefix = Prefix(name);
  if (!plan.model) return MakeError(prefix + "model: the plan has no model; give --model or --config");
  const PlanModel& m = *plan.model;
  GraphRequest r;
  r.model.name = m.name;
  r.model.family = m.family;
  r.model.hidden = m.hidden;
  r.model.heads = m.heads;
  r.model.head_dim = m.head_dim;
  r.model.ffn = m.ffn;
  r.model.layers = m.layers;
  r.batch = plan.workload.batch;
  r.seq_len = plan.workload.seq_len;
  r.dtype = dtype;
  r.part = m.part;
  r.separate_bias = m.separate_bias;
  auto g = BuildLayerGraph(r);
  if (!g.IsOk()) return MakeError(prefix + "model: " + g.Message());
  return g;
}

Expected<PlanCompat> CheckPlanFor(const Plan& plan, const OpGraph& g, const Mask& mask,
                                  const DeviceSpec& device, const std::string& name) {
  const std::string prefix = Prefix(name);
  const auto refuse = [&](const std::string& field, const std::string& what,
                          const std::string& planned, const std::string& here) {
    return MakeError(prefix + field + ": the plan was tuned for " + what + planned +
                     ", this run has " + what + here + " (refused)");
  };
  const auto num = [](int64_t x) { return std::to_string(x); };
  const Workload& w = plan.workload;
  if (w.batch != g.batch) return refuse("workload.batch", "batch ", num(w.batch), num(g.batch));
  if (w.seq_len != g.seq_len)
    return refuse("workload.seq_len", "L = ", num(w.seq_len), num(g.seq_len));
  if (w.heads != g.heads) return refuse("workload.heads", "", num(w.heads) + " heads", num(g.heads) + " heads");
  if (w.head_dim != g.head_dim)
    return refuse("workload.head_dim", "head size ", num(w.head_dim), num(g.head_dim));
  if (plan.model) {
    const PlanModel& m = *plan.model;
    if (m.family != g.family)
      return refuse("model.family", "a ", std::string(ModelFamilyName(m.family)) + " model",
                    std::string(ModelFamilyName(g.family)) + " model");
    if (m.part != g.part)
      return refuse("model.part", "the ", std::string(LayerPartName(m.part)) + " layer",
                    std::string(LayerPartName(g.part)) + " layer");
    if (m.hidden != g.hidden) return refuse("model.hidden", "hidden ", num(m.hidden), num(g.hidden));
    if (m.heads != g.heads) return refuse("model.heads", "", num(m.heads) + " heads", num(g.heads) + " heads");
    if (m.head_dim != g.head_dim)
      return refuse("model.head_dim", "head size ", num(m.head_dim), num(g.head_dim));
    if (m.ffn != g.ffn) return refuse("model.ffn", "ffn ", num(m.ffn), num(g.ffn));
    // Whether the layer has Bias ops of its own: compare what the plan's model builds (a T5
    // layer has no biases either way) with this run's graph.
    STOF_ASSIGN_OR_RETURN(auto pg, PlanGraph(plan, g.dtype, name));
    const auto bias_text = [](bool b) {
      return std::string(b ? "separate Bias ops" : "no separate Bias ops");
    };
    if (HasBiasOps(pg) != HasBiasOps(g))
      return refuse("model.separate_bias", "a layer with ", bias_text(HasBiasOps(pg)),
                    bias_text(HasBiasOps(g)));
  }
  if (plan.mask.hash != mask.HashHex())
    return MakeError(prefix + "mask.hash: the plan was tuned for mask " + plan.mask.hash +
                     " (density " + Number(plan.mask.density) + "), this run's mask is " +
                     mask.HashHex() + " (density " + Number(mask.Density()) + ") (refused)");
  if (!plan.fusion.code.empty() && static_cast<int64_t>(plan.fusion.code.size()) != g.Size())
    return MakeError(prefix + "fusion.code: the plan's code has " +
                     std::to_string(plan.fusion.code.size()) + " digits (ops), this run's layer has " +
                     std::to_string(g.Size()) + " ops (refused)");
  PlanCompat compat;
  if (plan.device.name != device.name)
    compat.warnings.push_back("plan made on " + plan.device.name + ", running on " + device.name +
                              ": its timings and parameters may not carry over");
  return compat;
}

}  // namespace stof::engine
