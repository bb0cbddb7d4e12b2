// JSON -> Plan (PlanFromJson, plan.h): every field read and checked against its range in
// docs/plan-schema.md (JSON Schema: docs/plan.schema.json), plus the cross-field rules the
// schema cannot express. Called by LoadPlan (plan_file.cpp), SavePlan's check before writing,
// and the CLI, GUI and tuner for JSON they hold. Readers throw json_read::JsonPathError
// internally; PlanFromJson catches it, so no exception leaves this file.
// The validation order is the document order of the schema, so "the first problem" is stable.
// Versions 1..3 load (plan.h); what a version adds is refused as an unknown key before it.
#include "engine/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "engine/backend.h"
#include "engine/core/json_io.h"
#include "engine/core/json_read.h"
#include "engine/graph/model_config.h"
#include "engine/mask/mask_json.h"
#include "engine/fusion/template_match.h"
#include "engine/plan/plan_choices.h"
#include "engine/plan/plan_internal.h"

namespace stof::engine {

namespace {

using json_read::Fail;
using json_read::Index;
using json_read::Json;
using json_read::JsonPathError;
using json_read::ObjectReader;

constexpr int64_t kKiB = 1024;
constexpr int64_t kTiB = kKiB * kKiB * kKiB * kKiB;
// Longest fusion code accepted (one digit per op of a layer; real layers have ~10-30 ops).
constexpr size_t kMaxFusionOps = 1024;
// Doubles written then read back are bit-identical (nlohmann prints the shortest round-trip
// form), so this only absorbs hand-edited densities like 0.1.
constexpr double kDensityTolerance = 1e-9;

using plan_detail::Prefix;

bool IsPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

// A sparse_mha segment's params read as `stof run --plan` reads them (SegmentChoiceFromParams):
// they are the plan's MHA choice, which the replay and the Python package (stof.Plan's
// mha_choice) both read, so a plan that validates has one ({"variant": [1]} used to pass here,
// then fail at the run and raise TypeError in Python). Other templates' params stay the
// backend's to check when the segment runs (docs/plan-schema.md).
void CheckSegmentParams(const PlanSegment& seg, const std::string& path) {
  if (seg.template_name != TemplateName(TemplateKind::kSparseMha)) return;
  auto choice = SegmentChoiceFromParams(seg.params, TemplateKind::kSparseMha, path);
  if (!choice.IsOk()) Fail("", choice.Message());
}

DeviceSpec ReadDevice(const ObjectReader& root) {
  ObjectReader r = root.Child("device", {"name", "sm_count", "smem_per_sm_bytes",
                                         "smem_per_block_bytes", "max_warps_per_sm", "l2_bytes",
                                         "dram_bytes_per_s", "fp16_tensor_flops", "cc_major",
                                         "cc_minor", "source"});
  DeviceSpec d;
  d.name = r.String("name");
  d.sm_count = static_cast<int>(r.Int("sm_count", 1, 100000));
  d.smem_per_sm_bytes = r.Int("smem_per_sm_bytes", 1, kTiB);
  d.smem_per_block_bytes = r.Int("smem_per_block_bytes", 1, kTiB);
  if (d.smem_per_block_bytes > d.smem_per_sm_bytes) {
    Fail(r.PathOf("smem_per_block_bytes"),
         "expected at most smem_per_sm_bytes (" + std::to_string(d.smem_per_sm_bytes) + "), got " +
             std::to_string(d.smem_per_block_bytes));
  }
  d.max_warps_per_sm = static_cast<int>(r.Int("max_warps_per_sm", 1, 1024));
  d.l2_bytes = r.Int("l2_bytes", 1, kTiB);
  d.dram_bytes_per_s = r.Number("dram_bytes_per_s", 0, 1e18, true);
  d.fp16_tensor_flops = r.Number("fp16_tensor_flops", 0, 1e20, true);
  d.cc_major = static_cast<int>(r.Int("cc_major", 1, 99));
  d.cc_minor = static_cast<int>(r.Int("cc_minor", 0, 9));
  d.source = r.Enum("source", {"built-in", "queried"});
  return d;
}

// Past a square mask's Mask::kMaxLen keys (version 3) the call must have fewer query rows,
// q_len x seq_len within a mask's Mask::kMaxCells cells.
void CheckWorkloadCells(const ObjectReader& r, const Workload& w) {
  const std::string L = std::to_string(w.seq_len), max = std::to_string(Mask::kMaxLen);
  if (w.q_len == 0 && w.seq_len > Mask::kMaxLen)
    Fail(r.PathOf("seq_len"), "expected at most " + max + " without workload.q_len (a square "
                              "call's mask is seq_len x seq_len), got " + L);
  if (w.QLen() > Mask::kMaxCells / w.seq_len)
    Fail(r.PathOf("q_len"), std::to_string(w.QLen()) + " rows over " + L + " keys (workload."
                            "seq_len) is more than a mask's " + max + " x " + max + " cells; "
                            "expected at most " + std::to_string(Mask::kMaxCells / w.seq_len));
}

// Version 2 adds kv_heads and q_len (both optional; absent: as many key/value heads as query
// heads, q_len = seq_len). Version 3 allows seq_len up to Mask::kMaxSide with q_len x seq_len
// within Mask::kMaxCells (a KV cache's last rows: mask.rows "last").
Workload ReadWorkload(const ObjectReader& root, int64_t version) {
  ObjectReader r = version >= 2 ? root.Child("workload", {"batch", "seq_len", "heads", "head_dim",
                                                          "dtype", "kv_heads", "q_len"})
                                : root.Child("workload", {"batch", "seq_len", "heads", "head_dim",
                                                          "dtype"});
  Workload w;
  // Ranges are Workload::Validate's.
  w.batch = r.Int("batch", 1, 65536);
  w.seq_len = r.Int("seq_len", 1, version >= 3 ? Mask::kMaxSide : Mask::kMaxLen);
  w.heads = r.Int("heads", 1, 1024);
  w.head_dim = r.Int("head_dim", 1, 256);
  const std::string dtype = r.Enum("dtype", {DTypeName(DType::kF16), DTypeName(DType::kBF16),
                                             DTypeName(DType::kF32)});
  w.dtype = *ParseDType(dtype);
  if (r.Has("kv_heads")) {
    w.kv_heads = r.Int("kv_heads", 1, w.heads);
    if (w.heads % w.kv_heads != 0)
      Fail(r.PathOf("kv_heads"), "expected a divisor of workload.heads = " +
                                     std::to_string(w.heads) + ", got " +
                                     std::to_string(w.kv_heads));
    if (w.kv_heads == w.heads) w.kv_heads = 0;
  }
  if (r.Has("q_len")) {
    w.q_len = r.Int("q_len", 1, w.seq_len);
    if (w.q_len == w.seq_len) w.q_len = 0;
  }
  CheckWorkloadCells(r, w);
  return w;
}

// The optional "model" object. Ranges are ModelConfig::Validate's (model_config.h; it runs
// again as a backstop in ReadPlan); heads and head_dim must be the workload's.
std::optional<PlanModel> ReadModel(const ObjectReader& root, const Workload& w) {
  if (!root.Has("model")) return std::nullopt;
  ObjectReader r = root.Child("model", {"name", "family", "part", "hidden", "heads", "head_dim",
                                        "ffn", "layers", "separate_bias"});
  PlanModel m;
  m.name = r.String("name");
  m.family = *ParseModelFamily(r.Enum("family", {ModelFamilyName(ModelFamily::kBert),
                                                 ModelFamilyName(ModelFamily::kGpt2),
                                                 ModelFamilyName(ModelFamily::kT5)}));
  m.part = *ParseLayerPart(r.Enum("part", {LayerPartName(LayerPart::kEncoder),
                                           LayerPartName(LayerPart::kDecoder)}));
  // BERT is an encoder, GPT-2 a decoder; T5 has both (graph_build.h's rule).
  if (m.family != ModelFamily::kT5) {
    const LayerPart only =
        m.family == ModelFamily::kBert ? LayerPart::kEncoder : LayerPart::kDecoder;
    if (m.part != only) {
      Fail(r.PathOf("part"), std::string(ModelFamilyName(m.family)) + " has " +
                                 LayerPartName(only) + " layers only, got " +
                                 json_read::Shown(Json(LayerPartName(m.part))));
    }
  }
  m.hidden = r.Int("hidden", 1, 65536);
  m.heads = r.Int("heads", 1, 1024);
  if (m.heads != w.heads) {
    Fail(r.PathOf("heads"), "expected " + std::to_string(w.heads) + " (workload.heads), got " +
                                std::to_string(m.heads));
  }
  m.head_dim = r.Int("head_dim", 1, 256);
  if (m.head_dim != w.head_dim) {
    Fail(r.PathOf("head_dim"), "expected " + std::to_string(w.head_dim) +
                                   " (workload.head_dim), got " + std::to_string(m.head_dim));
  }
  m.ffn = r.Int("ffn", 1, 262144);
  m.layers = r.Int("layers", 1, 1024);
  m.separate_bias = r.Bool("separate_bias");
  return m;
}

// Version 3's mask.rows: "last" (the plan holds the last workload.q_len rows of its spec's
// mask) or absent (the square mask). Returns the row count (0: square). "last" needs a spec
// and workload.q_len; past Mask::kMaxLen keys it is required.
int64_t ReadMaskRows(const ObjectReader& r, bool has_inline, const Workload& w) {
  const std::string max = std::to_string(Mask::kMaxLen);
  if (!r.Has("rows")) {
    if (w.seq_len > Mask::kMaxLen)
      Fail(r.PathOf("rows"), "required when workload.seq_len (" + std::to_string(w.seq_len) +
                                 ") is past a square mask's " + max + " (expected \"last\": "
                                 "the plan holds the last workload.q_len rows)");
    return 0;
  }
  r.Enum("rows", {"last"});
  if (has_inline)
    Fail(r.PathOf("rows"), "\"last\" is for a generator spec (mask.spec); an inline mask is "
                           "the square seq_len x seq_len mask");
  if (w.q_len == 0)
    Fail(r.PathOf("rows"), "\"last\" needs workload.q_len (the rows the plan holds), which is "
                           "absent");
  return w.q_len;
}

PlanMask ReadMask(const ObjectReader& root, const Workload& w, int64_t version) {
  ObjectReader r = version >= 3
                       ? root.Child("mask", {"spec", "inline", "rows", "seq_len", "hash", "density"})
                       : root.Child("mask", {"spec", "inline", "seq_len", "hash", "density"});
  PlanMask m;
  const bool has_spec = r.Has("spec"), has_inline = r.Has("inline");
  if (has_spec == has_inline) {
    Fail(r.Path(), std::string("expected exactly one of spec, inline, got ") +
                       (has_spec ? "both" : "neither"));
  }
  m.last_rows = ReadMaskRows(r, has_inline, w);
  m.seq_len = r.Int("seq_len", 1, version >= 3 ? Mask::kMaxSide : Mask::kMaxLen);
  if (m.seq_len != w.seq_len) {
    Fail(r.PathOf("seq_len"), "expected " + std::to_string(w.seq_len) +
                                  " (workload.seq_len), got " + std::to_string(m.seq_len));
  }
  {
    const Json& h = r.Require("hash");
    const std::string path = r.PathOf("hash");
    if (!h.is_string()) Fail(path, "expected a string, got " + json_read::Shown(h));
    m.hash = h.get<std::string>();
    const bool ok = m.hash.size() == 16 &&
                    std::all_of(m.hash.begin(), m.hash.end(), [](char c) {
                      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                    });
    if (!ok) Fail(path, "expected 16 lower-case hex digits, got " + json_read::Shown(h));
  }
  m.density = r.Number("density", 0, 1);

  if (has_spec) {
    const std::string path = r.PathOf("spec");
    auto spec = MaskSpecFromJson(r.Require("spec"), path);
    if (!spec.IsOk()) throw JsonPathError(spec.Message());
    if (spec->seq_len != m.seq_len) {
      Fail(path + ".seq_len", "expected " + std::to_string(m.seq_len) + " (mask.seq_len), got " +
                                  std::to_string(spec->seq_len));
    }
    // Parameter semantics (width <= L, doc lengths summing to L, ...) are the generator's;
    // past Mask::kMaxLen (mask.rows "last") its row runs' (RowRuns::FromSpecRows).
    auto resolved = Resolve(*spec, m.last_rows > 0 ? Mask::kMaxSide : Mask::kMaxLen);
    if (!resolved.IsOk()) {
      // Resolve names fields from "mask." ("mask.width: must be in 1..1024, got 0"); re-root
      // them at this spec's path.
      const std::string& msg = resolved.Message();
      if (msg.rfind("mask.", 0) == 0) throw JsonPathError(path + msg.substr(4));
      Fail(path, msg);
    }
    m.has_spec = true;
    m.spec = std::move(*spec);
  } else {
    const std::string path = r.PathOf("inline");
    auto mask = MaskFromRunLengthJson(r.Require("inline"), path);
    if (!mask.IsOk()) throw JsonPathError(mask.Message());
    if (mask->Rows() != m.seq_len || mask->Cols() != m.seq_len) {
      Fail(path, "expected a " + std::to_string(m.seq_len) + " x " + std::to_string(m.seq_len) +
                     " mask (mask.seq_len), got " + std::to_string(mask->Rows()) + " x " +
                     std::to_string(mask->Cols()));
    }
    const std::string hash = mask->HashHex();
    if (hash != m.hash) {
      Fail(r.PathOf("hash"), "does not match the inline mask (its hash is " + hash +
                                 ", the plan says " + m.hash + ")");
    }
    const double density = mask->Density();
    if (std::abs(density - m.density) > kDensityTolerance) {
      Fail(r.PathOf("density"), "does not match the inline mask (its density is " +
                                    Json(density).dump() + ", the plan says " +
                                    Json(m.density).dump() + ")");
    }
    m.inline_mask = std::move(*mask);
  }
  return m;
}

// The MHA fields mha and mha.runs share: the kernel, BLOCK_M / BLOCK_N and num_warps.
MhaKernel ReadMhaKernel(const ObjectReader& r) {
  const std::string kernel = r.Enum(
      "kernel", {MhaKernelName(MhaKernel::kBlockWise), MhaKernelName(MhaKernel::kRowWise)});
  return kernel == MhaKernelName(MhaKernel::kRowWise) ? MhaKernel::kRowWise : MhaKernel::kBlockWise;
}
int64_t ReadMhaBlock(const ObjectReader& r, const char* key) {
  const Json& v = r.Require(key);
  if (!v.is_number_integer() || !IsPowerOfTwo(v.get<int64_t>()) || v.get<int64_t>() < 16 ||
      v.get<int64_t>() > 256) {
    Fail(r.PathOf(key), "expected one of 16, 32, 64, 128, 256, got " + json_read::Shown(v));
  }
  return v.get<int64_t>();
}
int64_t ReadMhaWarps(const ObjectReader& r) {
  const Json& v = r.Require("num_warps");
  const int64_t w = v.is_number_integer() ? v.get<int64_t>() : 0;
  if (!v.is_number_integer() || ((!IsPowerOfTwo(w) || w > 8) && !IsHopperMhaWarps(w)))
    Fail(r.PathOf("num_warps"), "expected one of 1, 2, 4, 5, 8, 12, got " + json_read::Shown(v));
  return w;
}

// mha.runs: block-wise with the block fields and its family, or row-wise without them.
PlanMhaRuns ReadMhaRuns(const ObjectReader& mha) {
  ObjectReader r = mha.Child("runs", {"kernel", "block_m", "block_n", "num_warps", "family",
                                      "decided_by", "note"});
  PlanMhaRuns m;
  m.kernel = ReadMhaKernel(r);
  m.decided_by = r.Enum("decided_by", PlanRunsDecidedByValues());
  if (r.Has("note")) m.note = r.String("note", /*allow_empty=*/true);
  if (m.kernel == MhaKernel::kRowWise) {
    for (const char* key : {"block_m", "block_n", "num_warps", "family"})
      if (r.Has(key)) Fail(r.PathOf(key), "the row-wise kernel has no block parameters");
    return m;
  }
  m.block_m = ReadMhaBlock(r, "block_m");
  m.block_n = ReadMhaBlock(r, "block_n");
  m.num_warps = ReadMhaWarps(r);
  const std::string family = r.Enum("family", {"hopper", "portable"});
  const std::string want = IsHopperMhaWarps(m.num_warps) ? "hopper" : "portable";
  if (family != want)
    Fail(r.PathOf("family"), "num_warps " + std::to_string(m.num_warps) + " is the " + want +
                                 " kernel, got '" + family + "'");
  return m;
}

PlanMha ReadMha(const ObjectReader& root) {
  ObjectReader r = root.Child("mha", {"kernel", "block_m", "block_n", "num_warps", "chosen_by", "runs"});
  PlanMha m;
  m.kernel = ReadMhaKernel(r);
  m.block_m = ReadMhaBlock(r, "block_m");
  m.block_n = ReadMhaBlock(r, "block_n");
  m.num_warps = ReadMhaWarps(r);
  m.chosen_by = r.Enum("chosen_by", PlanChosenByValues());
  if (r.Has("runs")) m.runs = ReadMhaRuns(r);
  return m;
}

// A grouped or q_len workload runs on the Hopper kernel only (num_warps 5 or 12), chosen by
// its tile model ("shape") or tuned; "shape" is for such workloads alone.
void CheckShapeMha(const ObjectReader& root, const Plan& p) {
  const std::string path = root.PathOf("mha");
  const bool square = p.workload.IsSquareMha();
  if (square && p.mha.chosen_by == "shape")
    Fail(path + ".chosen_by", "\"shape\" is for grouped key/value heads or q_len != seq_len "
                              "(workload.kv_heads, workload.q_len)");
  if (square) return;
  const MhaConfig runs = PlanRunningMha(p.mha);
  if (runs.kernel != MhaKernel::kBlockWise || !IsHopperMhaWarps(runs.num_warps))
    Fail(path, std::to_string(p.workload.heads) + " query heads over " +
                   std::to_string(p.workload.KvHeads()) + " key/value heads, q_len " +
                   std::to_string(p.workload.QLen()) + ": expected the block-wise Hopper "
                   "kernel (num_warps 5 or 12), got " + MhaKernelName(runs.kernel) +
                   " with num_warps " + std::to_string(runs.num_warps));
}

PlanFusion ReadFusion(const ObjectReader& root) {
  ObjectReader r = root.Child("fusion", {"code", "segments"});
  PlanFusion f;
  f.code = r.String("code", /*allow_empty=*/true);
  const std::string code_path = r.PathOf("code");
  if (f.code.size() > kMaxFusionOps) {
    Fail(code_path, "expected at most " + std::to_string(kMaxFusionOps) + " digits, got " +
                        std::to_string(f.code.size()));
  }
  if (f.code.find_first_not_of("01") != std::string::npos) {
    Fail(code_path, "expected only 0/1 digits, got '" + TextForMessage(f.code) + "'");
  }
  // Segments of the code: maximal runs of equal digits, as 1-based op numbers [first, last].
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (size_t i = 0; i < f.code.size(); ++i) {
    if (i == 0 || f.code[i] != f.code[i - 1]) runs.emplace_back(i + 1, i + 1);
    runs.back().second = static_cast<int64_t>(i + 1);
  }
  const Json& segs = r.Array("segments");
  const std::string segs_path = r.PathOf("segments");
  if (!segs.empty() && segs.size() != runs.size()) {
    Fail(segs_path, "code '" + f.code + "' has " + std::to_string(runs.size()) +
                        " segments, the list has " + std::to_string(segs.size()) +
                        " (the list is empty or has one entry per segment)");
  }
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string seg_path = Index(segs_path, i);
    ObjectReader s(segs[i], seg_path, seg_path + ".", {"ops", "template", "params"});
    PlanSegment seg;
    const Json& ops = s.Array("ops");
    std::vector<int64_t> want;
    for (int64_t op = runs[i].first; op <= runs[i].second; ++op) want.push_back(op);
    for (size_t k = 0; k < ops.size(); ++k) {
      seg.ops.push_back(json_read::ReadInt(ops[k], Index(s.PathOf("ops"), k), 1,
                                           static_cast<int64_t>(f.code.size())));
    }
    if (seg.ops != want) {
      Fail(s.PathOf("ops"), "expected " + JsonForMessage(Json(want)) + " (segment " +
                                std::to_string(i + 1) + " of code '" + f.code + "'), got " +
                                json_read::Shown(ops));
    }
    seg.template_name = s.String("template", /*allow_empty=*/true);
    const Json& params = s.Require("params");
    if (!params.is_object()) {
      Fail(s.PathOf("params"), "expected an object, got " + json_read::Shown(params));
    }
    seg.params = params;
    CheckSegmentParams(seg, s.PathOf("params"));
    f.segments.push_back(std::move(seg));
  }
  return f;
}

std::vector<PlanMeasurement> ReadMeasurements(const ObjectReader& root) {
  const Json& a = root.Array("measurements");
  std::vector<PlanMeasurement> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string path = Index(root.PathOf("measurements"), i);
    ObjectReader r(a[i], path, path + ".", {"what", "latency_us", "measured", "dram_bytes"});
    PlanMeasurement m;
    m.what = r.String("what");
    m.latency_us = r.Number("latency_us", 0, 1e15);
    m.measured = r.Bool("measured");
    if (r.Has("dram_bytes")) m.dram_bytes = r.Number("dram_bytes", 0, 1e18);
    out.push_back(std::move(m));
  }
  return out;
}

PlanTuning ReadTuning(const ObjectReader& root) {
  ObjectReader r = root.Child(
      "tuning", {"method", "budget_s", "time_spent_s", "candidates_measured", "seed"});
  PlanTuning t;
  t.method = r.Enum("method", PlanTuningMethods());
  t.budget_s = r.Number("budget_s", 0, 1e9);
  t.time_spent_s = r.Number("time_spent_s", 0, 1e9);
  t.candidates_measured = r.Int("candidates_measured", 0, int64_t{1} << 40);
  t.seed = r.Seed("seed");
  return t;
}

Plan ReadPlan(const Json& j, const std::string& name) {
  const std::string prefix = Prefix(name);
  int64_t version = 0;
  if (!j.is_object()) Fail(name, "expected a JSON object at the top level, got " + json_read::Shown(j));
  // The version first: a newer file is refused as such, not for its unknown keys.
  {
    auto it = j.find("schema_version");
    if (it == j.end()) Fail(prefix + "schema_version", "required field is missing");
    const int64_t v = json_read::ReadInt(*it, prefix + "schema_version",
                                         std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int64_t>::max());
    if (v < 1 || v > Plan::kSchemaVersion) {
      Fail(prefix + "schema_version", "unsupported version " + std::to_string(v) +
                                          " (this build reads 1.." +
                                          std::to_string(Plan::kSchemaVersion) + ")");
    }
    version = v;
  }
  ObjectReader r(j, name, prefix,
                 {"schema_version", "created_by", "device", "workload", "model", "mask", "mha",
                  "fusion", "measurements", "tuning"});
  Plan p;
  p.schema_version = static_cast<int>(version);
  p.created_by = r.String("created_by");
  p.device = ReadDevice(r);
  p.workload = ReadWorkload(r, version);
  p.model = ReadModel(r, p.workload);
  p.mask = ReadMask(r, p.workload, version);
  p.mha = ReadMha(r);
  CheckShapeMha(r, p);
  p.fusion = ReadFusion(r);
  p.measurements = ReadMeasurements(r);
  p.tuning = ReadTuning(r);
  // Backstops: the engine's own validators must agree with the checks above.
  {
    Status s = p.device.Validate(prefix + "device");
    if (!s.IsOk()) throw JsonPathError(s.Message());
    s = p.workload.Validate(prefix + "workload");
    if (!s.IsOk()) throw JsonPathError(s.Message());
    if (p.model) {
      ModelConfig c;
      c.hidden = p.model->hidden, c.heads = p.model->heads, c.head_dim = p.model->head_dim;
      c.ffn = p.model->ffn, c.layers = p.model->layers;
      s = c.Validate(prefix + "model");
      if (!s.IsOk()) throw JsonPathError(s.Message());
    }
  }
  return p;
}

}  // namespace

Expected<Plan> PlanFromJson(const Json& j, const std::string& name) {
  try {
    return ReadPlan(j, name);
  } catch (const JsonPathError& e) {
    return MakeError(e.what());
  } catch (const nlohmann::json::exception& e) {
    return MakeError(Prefix(name) + e.what());
  } catch (const std::bad_alloc&) {
    return MakeError(Prefix(name) + "out of memory");
  }
}

}  // namespace stof::engine
