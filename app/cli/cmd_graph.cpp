// `stof graph`: a transformer layer's op graph (ops #1..#N with kind, CI/MI class, output
// shape, FLOPs and minimum bytes) for a preset model or a config.json, and with --scheme CODE
// the fusion scheme's segments and the template each one maps to (docs/fusion.md).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "app/cli/cli_common.h"
#include "app/cli/graph_args.h"
#include "app/common/option_checks.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/fusion/scheme_hex.h"
#include "engine/fusion/template_match.h"
#include "engine/graph/graph_build.h"
#include "engine/mask/mask.h"

namespace stof::app {

namespace {

std::string Dims(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t x : d) {
    if (!s.empty()) s += 'x';
    s += std::to_string(x);
  }
  return s;
}

nlohmann::json TensorJson(const engine::TensorRef& t) {
  nlohmann::json j = {{"name", t.name}, {"dims", t.dims},
                      {"source", engine::TensorSourceName(t.source)}};
  if (t.source == engine::TensorSource::kOp) j["op"] = t.op;
  return j;
}

nlohmann::json GraphJson(const engine::OpGraph& g) {
  nlohmann::json ops = nlohmann::json::array();
  for (const engine::Op& op : g.ops) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const engine::TensorRef& t : op.inputs) inputs.push_back(TensorJson(t));
    nlohmann::json j = {{"number", op.number},
                        {"kind", engine::OpKindName(op.kind)},
                        {"class", engine::OpClassName(op.Class())},
                        {"name", op.name},
                        {"inputs", inputs},
                        {"output", TensorJson(op.output)},
                        {"flops", op.flops},
                        {"bytes", op.bytes}};
    if (op.kind == engine::OpKind::kGemm) j["has_bias"] = op.has_bias;
    if (op.kind == engine::OpKind::kMask) j["causal"] = op.causal;
    ops.push_back(j);
  }
  return {{"model", g.model},
          {"family", engine::ModelFamilyName(g.family)},
          {"layer", engine::LayerPartName(g.part)},
          {"batch", g.batch},
          {"seq_len", g.seq_len},
          {"dtype", engine::DTypeName(g.dtype)},
          {"hidden", g.hidden},
          {"heads", g.heads},
          {"head_dim", g.head_dim},
          {"ffn", g.ffn},
          {"ops", ops},
          {"total_flops", g.TotalFlops()},
          {"total_bytes", g.TotalBytes()}};
}

nlohmann::json SchemeJson(const engine::FusionScheme& s, const engine::OpGraph& g) {
  nlohmann::json segs = nlohmann::json::array();
  for (const engine::TemplateMatch& m : engine::MatchTemplates(g, s)) {
    std::vector<int> ops;
    for (int op = m.segment.first; op <= m.segment.last; ++op) ops.push_back(op);
    nlohmann::json j = {{"ops", ops}, {"template", m.Name()}, {"kinds", m.ops}, {"mix", m.mix}};
    if (!m.reason.empty()) j["reason"] = m.reason;
    segs.push_back(j);
  }
  return {{"code", s.Code()}, {"hex", *engine::CodeToHex(s.Code())}, {"segments", segs}};
}

void PrintGraph(const engine::OpGraph& g) {
  std::printf("model     %s (%s %s layer: hidden %lld, %lld heads x %lld, FFN %lld)\n",
              g.model.c_str(), engine::ModelFamilyName(g.family), engine::LayerPartName(g.part),
              static_cast<long long>(g.hidden), static_cast<long long>(g.heads),
              static_cast<long long>(g.head_dim), static_cast<long long>(g.ffn));
  std::printf("shape     batch %lld, L %lld, %s\n\n", static_cast<long long>(g.batch),
              static_cast<long long>(g.seq_len), engine::DTypeName(g.dtype));
  std::printf("%4s  %-10s %-5s %-16s %-18s %12s %12s\n", "op", "kind", "class", "name", "output",
              "GFLOP", "MB");
  for (const engine::Op& op : g.ops) {
    std::string kind = engine::OpKindName(op.kind);
    if (op.has_bias) kind += "+b";
    if (op.causal) kind += "(c)";
    std::printf("%4d  %-10s %-5s %-16s %-18s %12.3f %12.3f\n", op.number, kind.c_str(),
                engine::OpClassName(op.Class()), op.name.c_str(), Dims(op.output.dims).c_str(),
                static_cast<double>(op.flops) / 1e9, static_cast<double>(op.bytes) / 1e6);
  }
  std::printf("%4s  %-10s %-5s %-16s %-18s %12.3f %12.3f\n", "", "total", "", "", "",
              static_cast<double>(g.TotalFlops()) / 1e9,
              static_cast<double>(g.TotalBytes()) / 1e6);
  std::printf("\n+b: bias added in the GEMM; (c): causal AND the user's mask. Bytes: inputs, "
              "weights and output once.\n");
}

void PrintScheme(const engine::FusionScheme& s, const engine::OpGraph& g) {
  const std::vector<engine::TemplateMatch> matches = engine::MatchTemplates(g, s);
  std::printf("\nscheme    %s (hex %s), %zu segments\n", s.Code().c_str(),
              engine::CodeToHex(s.Code())->c_str(), matches.size());
  for (const engine::TemplateMatch& m : matches) {
    const std::string what = m.kind == engine::TemplateKind::kNone
                                 ? "op by op (" + m.reason + ")"
                                 : std::string(m.Name());
    std::printf("  %-11s %-40s %-6s %s\n", engine::SegmentLabel(m.segment).c_str(),
                m.ops.c_str(), m.mix.c_str(), what.c_str());
  }
}

int RunGraph(const GraphArgs& a) {
  auto g = BuildGraph(a);
  if (!g.IsOk()) return Fail("graph", g.Message());
  std::optional<engine::FusionScheme> scheme;
  if (!a.scheme.empty()) {
    auto s = ParseScheme(a.scheme, *g);
    if (!s.IsOk()) return Fail("graph", s.Message());
    scheme = *s;
  }
  if (a.json) {
    nlohmann::json j = GraphJson(*g);
    if (scheme) j["scheme"] = SchemeJson(*scheme, *g);
    PrintJson("graph", j);
    return kExitOk;
  }
  PrintGraph(*g);
  if (scheme) PrintScheme(*scheme, *g);
  return kExitOk;
}

}  // namespace

void RegisterGraphCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<GraphArgs>();
  CLI::App* cmd = app.add_subcommand(
      "graph", "A transformer layer's op graph (kinds, CI/MI, FLOPs, bytes) and fusion segments");
  AddGraphOptions(cmd, args.get());
  cmd->add_option("--seq", args->seq, "Sequence length L")
      ->capture_default_str()
      ->check(IntRange(1, engine::Mask::kMaxLen));
  cmd->add_option("--dtype", args->dtype, "f16, bf16 or f32")->capture_default_str();
  cmd->add_flag("--separate-bias", args->separate_bias,
                "Each Linear's bias as its own Bias op (renumbers the ops)");
  cmd->add_option("--scheme", args->scheme,
                  "Fusion scheme: default, chains, all, unfused, a code (one 0/1 digit per op) or "
                  "its hex form N:HEX; prints the segments and their templates")
      ->check(NonEmpty("a fusion code"));
  cmd->add_flag("--json", args->json, "Print machine-readable JSON");
  cmd->callback([args, exit_code] { *exit_code = RunGraph(*args); });
}

}  // namespace stof::app
