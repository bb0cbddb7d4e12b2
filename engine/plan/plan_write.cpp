// Plan -> JSON (PlanToJson, plan.h) and the text SavePlan writes (PlanToText): keys in the
// schema's order (docs/plan-schema.md), 2-space indent, arrays of scalars on one line. Called
// by SavePlan (plan_file.cpp), the CLI and the GUI; tests/engine/plan_test.cpp checks the
// files written from here against docs/plan.schema.json.
#include "engine/plan/plan.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/core/json_io.h"
#include "engine/core/json_read.h"
#include "engine/mask/mask_json.h"
#include "engine/plan/plan_internal.h"

namespace stof::engine {

namespace {

using json_read::Json;
using plan_detail::Print;

Json DeviceToJson(const DeviceSpec& d) {
  Json j = Json::object();
  j["name"] = d.name;
  j["sm_count"] = d.sm_count;
  j["smem_per_sm_bytes"] = d.smem_per_sm_bytes;
  j["smem_per_block_bytes"] = d.smem_per_block_bytes;
  j["max_warps_per_sm"] = d.max_warps_per_sm;
  j["l2_bytes"] = d.l2_bytes;
  j["dram_bytes_per_s"] = d.dram_bytes_per_s;
  j["fp16_tensor_flops"] = d.fp16_tensor_flops;
  j["cc_major"] = d.cc_major;
  j["cc_minor"] = d.cc_minor;
  j["source"] = d.source;
  return j;
}

// Key order of the written file: the schema's order within every object. One list serves all
// objects because no two keys appear in opposite orders in two objects (e.g. "seed" is last in
// tuning and before doc_lengths in a spec). Keys not listed (other segment params) follow,
// sorted.
const std::vector<std::string>& KeyOrder() {
  static const std::vector<std::string> kOrder = {
      // plan
      "schema_version", "created_by", "device", "workload", "model", "mask", "mha", "fusion",
      "measurements", "tuning",
      // device
      "name", "sm_count", "smem_per_sm_bytes", "smem_per_block_bytes", "max_warps_per_sm",
      "l2_bytes", "dram_bytes_per_s", "fp16_tensor_flops", "cc_major", "cc_minor", "source",
      // workload (seq_len below), model (name above), mask (spec, inline, rows, seq_len,
      // hash, density), spec, inline
      "batch", "pattern", "spec", "inline", "rows", "cols", "runs", "seq_len", "family", "part",
      "hidden", "heads", "head_dim", "ffn", "layers", "separate_bias", "dtype", "kv_heads",
      "q_len", "width",
      "global", "dilation", "fill", "block",
      // tuning (seed last, as in spec)
      "method", "budget_s", "time_spent_s", "candidates_measured", "seed", "doc_lengths",
      "causal", "operands", "hash", "density",
      // mha, sparse_mha params (variant first, sub_len last), fusion, segments, measurements
      "variant", "kernel", "block_m", "block_n", "num_warps", "sub_len", "chosen_by", "decided_by",
      "note", "code",
      "segments", "ops", "template", "params", "what", "latency_us", "measured", "dram_bytes"};
  return kOrder;
}

size_t KeyRank(const std::string& key) {
  const auto& order = KeyOrder();
  return static_cast<size_t>(std::find(order.begin(), order.end(), key) - order.begin());
}

std::string Scalar(const Json& j) { return DumpJson(j); }

}  // namespace

namespace plan_detail {

void Print(const Json& j, int depth, std::string& out) {
  const std::string pad(static_cast<size_t>(2 * (depth + 1)), ' ');
  const std::string end_pad(static_cast<size_t>(2 * depth), ' ');
  if (j.is_object()) {
    if (j.empty()) {
      out += "{}";
      return;
    }
    std::vector<std::string> keys;
    for (const auto& item : j.items()) keys.push_back(item.key());
    std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
      return KeyRank(a) < KeyRank(b);
    });
    out += "{\n";
    for (size_t i = 0; i < keys.size(); ++i) {
      out += pad + Scalar(Json(keys[i])) + ": ";
      Print(j.at(keys[i]), depth + 1, out);
      out += i + 1 < keys.size() ? ",\n" : "\n";
    }
    out += end_pad + "}";
  } else if (j.is_array()) {
    if (j.empty()) {
      out += "[]";
      return;
    }
    const bool flat = std::none_of(j.begin(), j.end(), [](const Json& e) { return e.is_structured(); });
    if (flat) {
      out += "[";
      for (size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + Scalar(j[i]);
      out += "]";
      return;
    }
    out += "[\n";
    for (size_t i = 0; i < j.size(); ++i) {
      out += pad;
      Print(j[i], depth + 1, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += end_pad + "]";
  } else {
    out += Scalar(j);
  }
}

}  // namespace plan_detail

Json PlanToJson(const Plan& plan) {
  Json j = Json::object();
  j["schema_version"] = PlanSchemaVersionFor(plan);
  j["created_by"] = plan.created_by;
  j["device"] = DeviceToJson(plan.device);
  const Workload& w = plan.workload;
  j["workload"] = {{"batch", w.batch},
                   {"seq_len", w.seq_len},
                   {"heads", w.heads},
                   {"head_dim", w.head_dim},
                   {"dtype", DTypeName(w.dtype)}};
  if (w.KvHeads() != w.heads) j["workload"]["kv_heads"] = w.KvHeads();
  if (w.QLen() != w.seq_len) j["workload"]["q_len"] = w.QLen();
  if (plan.model) {
    const PlanModel& m = *plan.model;
    j["model"] = {{"name", m.name},
                  {"family", ModelFamilyName(m.family)},
                  {"part", LayerPartName(m.part)},
                  {"hidden", m.hidden},
                  {"heads", m.heads},
                  {"head_dim", m.head_dim},
                  {"ffn", m.ffn},
                  {"layers", m.layers},
                  {"separate_bias", m.separate_bias}};
  }
  Json mask = Json::object();
  if (plan.mask.has_spec) {
    mask["spec"] = MaskSpecToJson(plan.mask.spec);
  } else if (plan.mask.inline_mask) {
    mask["inline"] = MaskToRunLengthJson(*plan.mask.inline_mask);
  }
  if (plan.mask.last_rows > 0) mask["rows"] = "last";  // version 3: the last workload.q_len rows
  mask["seq_len"] = plan.mask.seq_len;
  mask["hash"] = plan.mask.hash;
  mask["density"] = plan.mask.density;
  j["mask"] = std::move(mask);
  j["mha"] = {{"kernel", MhaKernelName(plan.mha.kernel)},
              {"block_m", plan.mha.block_m},
              {"block_n", plan.mha.block_n},
              {"num_warps", plan.mha.num_warps},
              {"chosen_by", plan.mha.chosen_by}};
  if (const std::optional<PlanMhaRuns>& r = plan.mha.runs) {
    Json runs = {{"kernel", MhaKernelName(r->kernel)}, {"decided_by", r->decided_by}};
    if (r->kernel == MhaKernel::kBlockWise) {
      runs["block_m"] = r->block_m;
      runs["block_n"] = r->block_n;
      runs["num_warps"] = r->num_warps;
      runs["family"] = IsHopperMhaWarps(r->num_warps) ? "hopper" : "portable";
    }
    if (!r->note.empty()) runs["note"] = r->note;
    j["mha"]["runs"] = std::move(runs);
  }
  Json segments = Json::array();
  for (const PlanSegment& s : plan.fusion.segments) {
    segments.push_back({{"ops", s.ops}, {"template", s.template_name}, {"params", s.params}});
  }
  j["fusion"] = {{"code", plan.fusion.code}, {"segments", std::move(segments)}};
  Json measurements = Json::array();
  for (const PlanMeasurement& m : plan.measurements) {
    Json e = {{"what", m.what}, {"latency_us", m.latency_us}, {"measured", m.measured}};
    if (m.dram_bytes) e["dram_bytes"] = *m.dram_bytes;
    measurements.push_back(std::move(e));
  }
  j["measurements"] = std::move(measurements);
  j["tuning"] = {{"method", plan.tuning.method},
                 {"budget_s", plan.tuning.budget_s},
                 {"time_spent_s", plan.tuning.time_spent_s},
                 {"candidates_measured", plan.tuning.candidates_measured},
                 {"seed", json_read::SeedToJson(plan.tuning.seed)}};
  return j;
}

std::string PlanToText(const Plan& plan) {
  std::string out;
  Print(PlanToJson(plan), 0, out);
  out += "\n";
  return out;
}

}  // namespace stof::engine
