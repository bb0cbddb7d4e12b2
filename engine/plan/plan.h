// Plan: everything needed to replay a tuned configuration, as versioned JSON (schema in
// docs/plan.schema.json, prose in docs/plan-schema.md). Written by `stof select --plan-out`,
// later by the tuner and the GUI; read by `stof plan validate` and (later) `stof run --plan`.
// Loading validates every field and reports the first problem with its JSON path
// ("plan.json: workload.batch: expected an integer >= 1, got 0").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

struct PlanMask {
  // Exactly one of: a generator spec (has_spec) or inline run-length data (inline_mask).
  bool has_spec = false;
  MaskSpec spec;
  std::optional<Mask> inline_mask;
  int64_t seq_len = 0;
  std::string hash;  // Mask::HashHex() of the mask the plan was made for
  double density = 0;
};

struct PlanMha {
  MhaKernel kernel = MhaKernel::kBlockWise;
  int64_t block_m = 64, block_n = 64, num_warps = 4;
  std::string chosen_by = "eq2";  // "eq1+eq2" (analytical), "override", "tuned"
};

struct PlanSegment {
  std::vector<int64_t> ops;       // op numbers, contiguous
  std::string template_name;      // "" = unfused
  nlohmann::json params = nlohmann::json::object();
};

struct PlanFusion {
  std::string code;               // binary code, one digit per op ("" = none yet)
  std::vector<PlanSegment> segments;
};

struct PlanMeasurement {
  std::string what;               // "mha", "segment 2", "total"
  double latency_us = 0;
  bool measured = false;          // false = predicted by a model
  std::optional<double> dram_bytes;
};

struct PlanTuning {
  std::string method = "analytical";  // "analytical", "stof", "gtco", "mcfuser", "exhaustive"
  double budget_s = 0;
  double time_spent_s = 0;
  int64_t candidates_measured = 0;
  uint64_t seed = 0;
};

struct Plan {
  static constexpr int kSchemaVersion = 1;
  int schema_version = kSchemaVersion;
  std::string created_by = "stof";   // tool and version
  DeviceSpec device;
  Workload workload;
  PlanMask mask;
  PlanMha mha;
  PlanFusion fusion;
  std::vector<PlanMeasurement> measurements;
  PlanTuning tuning;
};

nlohmann::json PlanToJson(const Plan& plan);
// `name` prefixes messages ("plan.json: "). Validates every field, cross-checks
// (mask seq_len == workload.seq_len, inline mask hash matches, fusion code digits).
Expected<Plan> PlanFromJson(const nlohmann::json& j, const std::string& name);

Status SavePlan(const std::string& path, const Plan& plan);
Expected<Plan> LoadPlan(const std::string& path);

// The mask a plan describes (regenerated from its spec, or its inline data); checks the hash.
Expected<Mask> PlanMaskToMask(const PlanMask& mask, const std::string& name);

}  // namespace stof::engine
