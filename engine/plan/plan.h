// Plan: everything needed to replay a tuned configuration, as versioned JSON (schema in
// docs/plan.schema.json, prose in docs/plan-schema.md). Written by `stof select --plan-out`,
// the tuner and the GUI; read by `stof plan validate` and `stof run --plan` (replay through
// plan_choices.h).
// Loading validates every field and reports the first problem with its JSON path
// ("plan.json: workload.batch: expected an integer >= 1, got 0").
// Versions: 1 holds square MHA workloads (as many key/value heads as query heads, L_q = L_k);
// 2 adds workload.kv_heads and workload.q_len (grouped heads, a KV cache's L_q rows over L_k
// keys: the mask is the square L_k one, run on its last L_q rows) and mha.chosen_by "shape";
// 3 adds mask.rows "last": the plan holds only the last q_len rows of its spec's mask (a KV
// cache past a square mask's Mask::kMaxLen keys, seq_len up to Mask::kMaxSide, q_len x seq_len
// <= Mask::kMaxCells), with mask.hash and mask.density those of that q_len x seq_len mask.
// A plan is written at the oldest version that holds it (PlanSchemaVersionFor), so square
// plans stay readable by builds that know version 1 only; all three versions load.
// Invariants of a loadable plan: schema_version 1..3, as above; no unknown keys anywhere
// (except inside a segment's free-form "params"); mask.seq_len == workload.seq_len; exactly one
// of mask.spec / mask.inline; mask.rows "last" only with a spec and workload.q_len, and
// required past Mask::kMaxLen; an inline mask matches mask.hash and mask.density; seeds are JSON
// integers <= 2^53 - 1 or decimal strings (see json_read.h); the optional model (absent in
// analytical plans) has model.heads == workload.heads and model.head_dim == workload.head_dim
// and a part its family has. PlanToJson -> PlanFromJson -> PlanToJson gives identical JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

// The model whose layer was tuned (JSON key "model", optional): enough to rebuild the layer's
// OpGraph (with the workload's batch and seq_len; plan_choices.h PlanGraph). Ranges are
// ModelConfig::Validate's; bert layers are encoders, gpt2 layers decoders, t5 has both.
struct PlanModel {
  std::string name;        // preset or config file name, for display
  ModelFamily family = ModelFamily::kBert;
  LayerPart part = LayerPart::kEncoder;
  int64_t hidden = 768, heads = 12, head_dim = 64, ffn = 3072, layers = 12;
  bool separate_bias = false;  // GraphRequest::separate_bias: Bias ops after the GEMMs
  bool operator==(const PlanModel&) const = default;
};

struct PlanMask {
  // Exactly one of: a generator spec (has_spec) or inline run-length data (inline_mask).
  bool has_spec = false;
  MaskSpec spec;
  std::optional<Mask> inline_mask;
  int64_t seq_len = 0;
  // 0: the mask is the square seq_len x seq_len one (versions 1 and 2). Else (version 3, JSON
  // mask.rows "last", spec masks only) the plan holds its last `last_rows` rows over all
  // seq_len keys (= workload.q_len; the loader sets it from there), and hash and density are
  // those of that last_rows x seq_len mask.
  int64_t last_rows = 0;
  std::string hash;  // Mask::HashHex() of the mask the plan was made for
  double density = 0;
};

// What the engine runs (engine/analysis/mha_run.h): the analytical pick restricted to what
// the kernels support and prefer (and the Hopper kernel on sm_90 where faster), or what a
// tuner measured faster. Optional (plans written before it lack it); replay runs it when set.
struct PlanMhaRuns {
  MhaKernel kernel = MhaKernel::kBlockWise;
  int64_t block_m = 0, block_n = 0, num_warps = 0;  // block-wise only (0 for row-wise)
  std::string decided_by;  // one of PlanRunsDecidedByValues(): "kernels", "engine model", "tuned"
  std::string note;        // why it differs from the analytical pick ("" when it does not)
  bool operator==(const PlanMhaRuns&) const = default;
};

struct PlanMha {
  MhaKernel kernel = MhaKernel::kBlockWise;
  int64_t block_m = 64, block_n = 64, num_warps = 4;
  std::string chosen_by = "eq2";  // one of PlanChosenByValues(): "eq1+eq2" (analytical),
                                  // "eq2" (kernel given, parameters by Eq. 2), "override",
                                  // "tuned", "shape" (grouped heads or q_len: the Hopper tile
                                  // model; version 2)
  std::optional<PlanMhaRuns> runs;  // JSON "mha.runs"
};

struct PlanSegment {
  std::vector<int64_t> ops;       // op numbers, contiguous
  std::string template_name;      // "" = unfused (JSON key "template")
  nlohmann::json params = nlohmann::json::object();  // free-form, template-specific; an object
};

struct PlanFusion {
  std::string code;               // binary code, one digit per op ("" = none yet)
  std::vector<PlanSegment> segments;
};

struct PlanMeasurement {
  std::string what;               // "mha", "segment 2", "total", "model" (every layer of
                                  // model.layers, as `stof run` times total_us)
  double latency_us = 0;
  bool measured = false;          // false = predicted by a model
  std::optional<double> dram_bytes;
};

struct PlanTuning {
  std::string method = "analytical";  // one of PlanTuningMethods()
  double budget_s = 0;
  double time_spent_s = 0;
  int64_t candidates_measured = 0;
  uint64_t seed = 0;                  // JSON: integer <= 2^53 - 1, else a decimal string
};

struct Plan {
  static constexpr int kSchemaVersion = 3;  // the newest version this build reads and writes
  int schema_version = kSchemaVersion;
  std::string created_by = "stof";   // tool and version
  DeviceSpec device;
  Workload workload;
  std::optional<PlanModel> model;    // absent in analytical plans (`stof select`)
  PlanMask mask;
  PlanMha mha;
  PlanFusion fusion;
  std::vector<PlanMeasurement> measurements;
  PlanTuning tuning;
};

// The schema version a plan is written at: 1 for square MHA, 2 for grouped heads or q_len,
// 3 for a mask of the last rows only (mask.last_rows > 0).
int PlanSchemaVersionFor(const Plan& plan);

// Accepted values of PlanMha::chosen_by and PlanTuning::method (the loader refuses others;
// "shape": the Hopper tile model's choice for a shape only that kernel serves, version 2).
const std::vector<std::string>& PlanChosenByValues();
const std::vector<std::string>& PlanRunsDecidedByValues();
// The configuration a replay runs: mha.runs when the plan records it, else mha itself.
MhaConfig PlanRunningMha(const PlanMha& mha);
const std::vector<std::string>& PlanTuningMethods();

// The measurement of the plan's segment `index` (0-based) is named "segment N", N = index + 1
// (MakeTunedPlan writes them); PlanSegmentNumber gives N back for exactly that form (digits,
// N >= 1), nullopt for anything else.
std::string PlanSegmentWhat(size_t index);
std::optional<int64_t> PlanSegmentNumber(const std::string& what);

// Never fails; a plan with out-of-range fields gives JSON that PlanFromJson refuses.
nlohmann::json PlanToJson(const Plan& plan);
// `name` (a file name, may be empty) prefixes messages as "<name>: ". Validates every field
// and cross-checks (mask seq_len == workload.seq_len, the spec's parameters via Resolve(),
// inline mask hash and density, fusion code vs segments, mask.rows vs the mask's form and
// workload.q_len). A spec mask's hash is not checked here (that means generating it):
// PlanMaskToMask does.
Expected<Plan> PlanFromJson(const nlohmann::json& j, const std::string& name);

// The text SavePlan writes: 2-space indented JSON, keys in schema order, arrays of numbers or
// strings on one line (so a run-length row is one line), a final newline.
std::string PlanToText(const Plan& plan);
// Validates first (the plan must be loadable; message ends "(plan not written)"), then writes
// PlanToText atomically: a temporary file in the same directory, renamed over `path`.
Status SavePlan(const std::string& path, const Plan& plan);
// Reads, parses (duplicate keys refused) and validates; every message starts with `path`.
// Files larger than kMaxPlanFileBytes are refused before reading.
inline constexpr int64_t kMaxPlanFileBytes = int64_t{1} << 30;
Expected<Plan> LoadPlan(const std::string& path);

// The mask a plan describes (regenerated from its spec, or its inline data); checks its size
// against mask.seq_len and its hash against mask.hash. `name` prefixes messages. A last-rows
// mask (mask.last_rows > 0) is the last_rows x seq_len mask, built from the spec's row runs of
// those rows only (RowRuns::FromSpecRows), never the square mask.
Expected<Mask> PlanMaskToMask(const PlanMask& mask, const std::string& name);

}  // namespace stof::engine
