// Tests of schema version 3 (plan.h, issue 33): plans of a KV cache whose keys pass a square
// mask's 32768, holding the last q_len rows of a generator spec (mask.rows "last"). Exact
// round trips at 131072 and 65536 keys, the version written only when needed (square and
// version 2 plans stay as they were, byte for byte, checked-in and old-build files included),
// PlanMaskToMask building the rows from the spec's row runs and checking the hash, every
// refusal by its path and values, MakeCacheRowsPlan, and docs/plan.schema.json against v3
// plans (accepting written ones, refusing broken ones). The older versions: plan_test.cpp.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/analysis/mha_run.h"
#include "engine/mask/row_runs.h"
#include "engine/plan/plan.h"
#include "engine/plan/plan_build.h"
#include "plan_reject.h"
#include "test_dir.h"

namespace {

using nlohmann::json;
using namespace stof::engine;  // NOLINT: a test of the plan API

// The last q_len rows of a spec's mask, from the row runs of those rows.
Mask LastRows(const MaskSpec& spec, int64_t q_len) {
  auto runs = RowRuns::FromSpecRows(spec, spec.seq_len - q_len, q_len);
  EXPECT_TRUE(runs.IsOk()) << runs.Message();
  auto m = runs->LastRowsToMask(q_len);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  return std::move(*m);
}

MaskSpec Spec(const std::string& pattern, int64_t seq_len, int64_t width = -1) {
  MaskSpec s;
  s.pattern = pattern;
  s.seq_len = seq_len;
  s.width = width;
  s.seed = pattern == "bigbird" ? 3 : 0;
  return *Resolve(s, Mask::kMaxSide);
}

// A decode (q_len 1) or prefill step of 32 query heads over 8 key/value heads on the Hopper
// kernel, the plan holding the spec's last q_len rows.
Plan CacheRowsPlan(const MaskSpec& spec, int64_t q_len) {
  Plan p;
  p.created_by = "stof (plan_long_test)";
  p.device = *FindBuiltinDevice("h100");
  p.workload = Workload{1, spec.seq_len, 32, 128, DType::kBF16, 8, q_len};
  const Mask rows = LastRows(spec, q_len);
  p.mask.has_spec = true;
  p.mask.spec = spec;
  p.mask.seq_len = spec.seq_len;
  p.mask.last_rows = q_len;
  p.mask.hash = rows.HashHex();
  p.mask.density = rows.Density();
  p.mha = PlanMha{MhaKernel::kBlockWise, 64, 64, 5, "shape"};
  return p;
}

void ExpectRoundTrip(const Plan& p) {
  const json j1 = PlanToJson(p);
  EXPECT_EQ(j1["schema_version"], 3);
  EXPECT_EQ(j1["mask"]["rows"], "last");
  EXPECT_EQ(j1["workload"]["q_len"], p.workload.q_len);
  auto back = PlanFromJson(j1, "plan.json");
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_EQ(PlanToJson(*back), j1);
  EXPECT_EQ(PlanToText(*back), PlanToText(p));
  EXPECT_EQ(back->schema_version, 3);
  EXPECT_EQ(back->mask.last_rows, p.workload.q_len);
  EXPECT_TRUE(back->mask.spec == p.mask.spec);
  EXPECT_TRUE(back->workload == p.workload);
  // The mask it describes: the q_len x seq_len rows, hash-checked.
  auto m = PlanMaskToMask(back->mask, "plan.json");
  ASSERT_TRUE(m.IsOk()) << m.Message();
  EXPECT_EQ(m->Rows(), p.workload.q_len);
  EXPECT_EQ(m->Cols(), p.workload.seq_len);
  EXPECT_EQ(m->HashHex(), p.mask.hash);
}

TEST(PlanLong, VersionThreeRoundTripsExactly) {
  for (int64_t q_len : {1, 16}) {
    SCOPED_TRACE(q_len);
    ExpectRoundTrip(CacheRowsPlan(Spec("causal", 131072), q_len));
    ExpectRoundTrip(CacheRowsPlan(Spec("sliding_window", 131072, 4096), q_len));
  }
  ExpectRoundTrip(CacheRowsPlan(Spec("bigbird", 65536), 4));
  // Through a file as well.
  stof::engine::testing::TestDir dir("stof_plan_long_test_");
  const Plan p = CacheRowsPlan(Spec("sliding_window", 131072, 4096), 1);
  const std::string path = dir.Path("long.json");
  ASSERT_TRUE(SavePlan(path, p).IsOk()) << SavePlan(path, p).Message();
  auto loaded = LoadPlan(path);
  ASSERT_TRUE(loaded.IsOk()) << loaded.Message();
  EXPECT_EQ(PlanToText(*loaded), PlanToText(p));
  const std::string text = PlanToText(p);
  EXPECT_NE(text.find("\"rows\": \"last\",\n    \"seq_len\": 131072,"), std::string::npos) << text;
  // The row count is workload.q_len's: a plan whose mask says otherwise is not written.
  Plan odd = p;
  odd.mask.last_rows = 2;
  EXPECT_EQ(SavePlan(path, odd).Message(),
            path + ": mask.rows: the plan holds the last 2 rows, workload.q_len says 1 (plan not "
                   "written)");
}

TEST(PlanLong, LastRowsAreTheSquareMasksRowsWhereThatExists) {
  // A version 3 plan may hold the last rows below 32768 too: the same bits as the square
  // mask's last rows.
  const MaskSpec spec = Spec("bigbird", 2048);
  const Plan p = CacheRowsPlan(spec, 16);
  ExpectRoundTrip(p);
  auto m = PlanMaskToMask(p.mask, "plan.json");
  ASSERT_TRUE(m.IsOk()) << m.Message();
  EXPECT_TRUE(*m == *Generate(spec)->LastRows(16));
}

TEST(PlanLong, VersionIsTheOldestThatHoldsThePlan) {
  Plan p = CacheRowsPlan(Spec("causal", 2048), 16);
  EXPECT_EQ(PlanSchemaVersionFor(p), 3);
  // The square mask of the same workload: version 2, no rows key, as before.
  p.mask.last_rows = 0;
  const Mask square = *Generate(p.mask.spec);
  p.mask.hash = square.HashHex();
  p.mask.density = square.Density();
  EXPECT_EQ(PlanSchemaVersionFor(p), 2);
  EXPECT_FALSE(PlanToJson(p)["mask"].contains("rows"));
  // A version 3 file with the square mask (no rows) is valid; it is rewritten at version 2.
  json j = PlanToJson(p);
  j["schema_version"] = 3;
  auto back = PlanFromJson(j, "plan.json");
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_EQ(back->schema_version, 3);
  EXPECT_EQ(back->mask.last_rows, 0);
  EXPECT_EQ(PlanToJson(*back)["schema_version"], 2);
}

// A plan `stof select --plan-out` wrote before version 3 (a decode-side prefill step, version 2).
const char kVersionTwoFile[] = R"({
  "schema_version": 2,
  "created_by": "stof",
  "device": {
    "name": "H100-SXM-80GB",
    "sm_count": 132,
    "smem_per_sm_bytes": 233472,
    "smem_per_block_bytes": 232448,
    "max_warps_per_sm": 64,
    "l2_bytes": 52428800,
    "dram_bytes_per_s": 3350000000000.0,
    "fp16_tensor_flops": 989400000000000.0,
    "cc_major": 9,
    "cc_minor": 0,
    "source": "built-in"
  },
  "workload": {
    "batch": 8,
    "seq_len": 2048,
    "heads": 32,
    "head_dim": 128,
    "dtype": "bf16",
    "kv_heads": 8,
    "q_len": 16
  },
  "mask": {
    "spec": {
      "pattern": "causal",
      "seq_len": 2048
    },
    "seq_len": 2048,
    "hash": "07fca4c49a2e4943",
    "density": 0.500244140625
  },
  "mha": {
    "runs": {
      "family": "hopper",
      "kernel": "block_wise",
      "block_m": 64,
      "block_n": 64,
      "num_warps": 5,
      "decided_by": "kernels",
      "note": "q_len 16 over seq_len 2048: the Hopper kernel"
    },
    "kernel": "block_wise",
    "block_m": 64,
    "block_n": 64,
    "num_warps": 5,
    "chosen_by": "shape"
  },
  "fusion": {
    "code": "",
    "segments": []
  },
  "measurements": [],
  "tuning": {
    "method": "analytical",
    "budget_s": 0.0,
    "time_spent_s": 0.0,
    "candidates_measured": 0,
    "seed": 0
  }
}
)";

std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(PlanLong, OldPlansLoadAndRewriteIdentically) {
  auto v2 = PlanFromJson(json::parse(kVersionTwoFile), "v2.json");
  ASSERT_TRUE(v2.IsOk()) << v2.Message();
  EXPECT_EQ(v2->schema_version, 2);
  EXPECT_EQ(v2->mask.last_rows, 0);
  EXPECT_EQ(PlanToText(*v2), kVersionTwoFile);
  auto square = PlanMaskToMask(v2->mask, "v2.json");
  ASSERT_TRUE(square.IsOk()) << square.Message();
  EXPECT_EQ(square->Rows(), 2048);
  // The checked-in version 1 plans.
  const std::string assets = std::string(STOF_SOURCE_DIR) + "/assets/plans/";
  for (const char* name : {"bigbird-1024-bert-base-h100.json", "bert-base_8x512_bigbird.h100.plan.json"}) {
    SCOPED_TRACE(name);
    auto p = LoadPlan(assets + name);
    ASSERT_TRUE(p.IsOk()) << p.Message();
    EXPECT_EQ(p->schema_version, 1);
    EXPECT_EQ(PlanToText(*p), ReadText(assets + name));
  }
}

using Bad = stof::engine::testing::BadPlanEdit;
using stof::engine::testing::ExpectRejected;

TEST(PlanLong, RefusalsNameThePathAndTheValues) {
  ExpectRejected(CacheRowsPlan(Spec("causal", 131072), 1), {
      {"rows with an inline mask",
       [](json& j) {
         j["mask"].erase("spec");
         j["mask"]["inline"] = json::parse(R"({"rows": 1, "cols": 1, "runs": [[]]})");
       },
       "plan.json: mask.rows: \"last\" is for a generator spec (mask.spec); an inline mask is "
       "the square seq_len x seq_len mask"},
      {"rows missing past 32768", [](json& j) { j["mask"].erase("rows"); },
       "plan.json: mask.rows: required when workload.seq_len (131072) is past a square mask's "
       "32768 (expected \"last\": the plan holds the last workload.q_len rows)"},
      {"rows of another value", [](json& j) { j["mask"]["rows"] = "first"; },
       "plan.json: mask.rows: expected one of last, got \"first\""},
      {"q_len missing past 32768", [](json& j) { j["workload"].erase("q_len"); },
       "plan.json: workload.seq_len: expected at most 32768 without workload.q_len (a square "
       "call's mask is seq_len x seq_len), got 131072"},
      {"cells over the limit", [](json& j) { j["workload"]["q_len"] = 16384; },
       "plan.json: workload.q_len: 16384 rows over 131072 keys (workload.seq_len) is more than "
       "a mask's 32768 x 32768 cells; expected at most 8192"},
      {"seq_len past kMaxSide",
       [](json& j) { j["workload"]["seq_len"] = 262145; j["mask"]["seq_len"] = 262145; },
       "plan.json: workload.seq_len: expected an integer <= 262144, got 262145"},
      {"version 2 past 32768", [](json& j) { j["schema_version"] = 2; },
       "plan.json: workload.seq_len: expected an integer <= 32768, got 131072"},
      {"mask seq_len", [](json& j) { j["mask"]["seq_len"] = 65536; },
       "plan.json: mask.seq_len: expected 131072 (workload.seq_len), got 65536"},
      {"spec seq_len", [](json& j) { j["mask"]["spec"]["seq_len"] = 65536; },
       "plan.json: mask.spec.seq_len: expected 131072 (mask.seq_len), got 65536"},
      {"spec parameter", [](json& j) { j["mask"]["spec"]["pattern"] = "sliding_window";
                                       j["mask"]["spec"]["width"] = 200000; },
       "plan.json: mask.spec.width: must be in 1..131072, got 200000"},
      {"unknown key", [](json& j) { j["mask"]["row"] = "last"; },
       "plan.json: mask.row: unknown key (allowed here: spec, inline, rows, seq_len, hash, density)"},
      {"portable kernel", [](json& j) { j["mha"]["num_warps"] = 4; },
       "plan.json: mha: 32 query heads over 8 key/value heads, q_len 1: expected the block-wise "
       "Hopper kernel (num_warps 5 or 12)"},
  });
  // Below 32768: rows "last" needs q_len; version 2 has no rows key.
  ExpectRejected(CacheRowsPlan(Spec("causal", 2048), 16), {
      {"rows without q_len", [](json& j) { j["workload"].erase("q_len"); },
       "plan.json: mask.rows: \"last\" needs workload.q_len (the rows the plan holds), which is "
       "absent"},
      {"rows in version 2", [](json& j) { j["schema_version"] = 2; },
       "plan.json: mask.rows: unknown key (allowed here: spec, inline, seq_len, hash, density)"},
  });
}

TEST(PlanLong, PlanMaskToMaskChecksTheHashOfTheRows) {
  const Plan p = CacheRowsPlan(Spec("sliding_window", 131072, 4096), 1);
  PlanMask wrong = p.mask;
  wrong.hash = "0123456789abcdef";
  EXPECT_EQ(PlanMaskToMask(wrong, "plan.json").Message(),
            "plan.json: mask.hash: the plan was made for mask 0123456789abcdef, but its spec's "
            "last 1 rows now generate " + p.mask.hash + " (did the generator change?)");
  PlanMask no_spec = p.mask;
  no_spec.has_spec = false;
  EXPECT_EQ(PlanMaskToMask(no_spec, "plan.json").Message(),
            "plan.json: mask.rows: \"last\" needs a generator spec (mask.spec)");
  PlanMask too_many = p.mask;
  too_many.last_rows = 131073;
  EXPECT_EQ(PlanMaskToMask(too_many, "plan.json").Message(),
            "plan.json: mask.rows (workload.q_len): expected 1..131072 (the mask's rows), got "
            "131073");
  PlanMask bad_width = p.mask;
  bad_width.spec.width = 200000;
  EXPECT_EQ(PlanMaskToMask(bad_width, "plan.json").Message(),
            "plan.json: mask.spec.width: must be in 1..131072, got 200000");
}

TEST(PlanLong, MakeCacheRowsPlanRecordsWhatRuns) {
  const MaskSpec spec = Spec("sliding_window", 131072, 4096);
  const Mask rows = LastRows(spec, 1);
  const Workload w{8, 131072, 32, 128, DType::kBF16, 8, 1};
  const DeviceSpec dev = *FindBuiltinDevice("h100");
  auto run = ModelMhaRun(rows, w, dev);
  ASSERT_TRUE(run.IsOk()) << run.Message();
  const Plan p = MakeCacheRowsPlan(rows, spec, w, dev, *run, "stof");
  EXPECT_EQ(p.mask.seq_len, 131072);
  EXPECT_EQ(p.mask.last_rows, 1);
  EXPECT_EQ(p.mask.hash, rows.HashHex());
  EXPECT_EQ(p.mask.density, rows.Density());
  EXPECT_EQ(p.mha.chosen_by, "shape");
  ExpectRoundTrip(p);
}

// Runs tests/engine/validate_plan_schema.py (as plan_test.cpp's PlanSchema test does).
int RunSchemaValidator(const std::vector<std::string>& files, bool expect_invalid,
                       const std::string& log, std::string* output) {
  const std::string src = STOF_SOURCE_DIR;
  std::string cmd = "/usr/bin/python3 '";
  cmd += src + "/tests/engine/validate_plan_schema.py'";
  if (expect_invalid) cmd += " --expect-invalid";
  cmd += " '" + src + "/docs/plan.schema.json'";
  for (const std::string& f : files) cmd += " '" + f + "'";
  cmd += " > '" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  *output = ReadText(log);
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(PlanLong, SchemaAcceptsVersionThreeAndRefusesItsBrokenForms) {
  if (!std::filesystem::exists("/usr/bin/python3")) FAIL() << "/usr/bin/python3 is missing";
  stof::engine::testing::TestDir dir("stof_plan_long_test_");
  std::vector<std::string> good;
  int n = 0;
  for (const Plan& p : {CacheRowsPlan(Spec("sliding_window", 131072, 4096), 1),
                        CacheRowsPlan(Spec("bigbird", 65536), 4),
                        CacheRowsPlan(Spec("causal", 2048), 16)}) {
    good.push_back(dir.Path("good" + std::to_string(n++) + ".json"));
    ASSERT_TRUE(SavePlan(good.back(), p).IsOk());
  }
  std::string out;
  const int rc = RunSchemaValidator(good, false, dir.Path("good.log"), &out);
  if (rc == 3) FAIL() << "python3-jsonschema is missing; run scripts/setup\n" << out;
  ASSERT_EQ(rc, 0) << "the schema refuses plans the loader accepts:\n" << out;

  const std::vector<std::pair<std::string, std::function<void(json&)>>> broken = {
      {"rows_missing", [](json& j) { j["mask"].erase("rows"); }},
      {"rows_value", [](json& j) { j["mask"]["rows"] = "first"; }},
      {"q_len_missing", [](json& j) { j["workload"].erase("q_len"); }},
      {"version_2", [](json& j) { j["schema_version"] = 2; }},
      {"seq_len_past_side",
       [](json& j) { j["workload"]["seq_len"] = 262145; j["mask"]["seq_len"] = 262145; }},
      {"rows_inline",
       [](json& j) {
         j["mask"].erase("spec");
         j["mask"]["inline"] = json::parse(R"({"rows": 1, "cols": 1, "runs": [[]]})");
       }},
  };
  std::vector<std::string> bad;
  for (const auto& [name, edit] : broken) {
    json j = PlanToJson(CacheRowsPlan(Spec("causal", 131072), 1));
    edit(j);
    ASSERT_FALSE(PlanFromJson(j, name).IsOk()) << name << " should be refused by the loader";
    bad.push_back(dir.Path("bad_" + name + ".json"));
    std::ofstream(bad.back()) << j.dump(2);
  }
  // Below 32768 too: rows "last" without q_len.
  json j = PlanToJson(CacheRowsPlan(Spec("causal", 2048), 16));
  j["workload"].erase("q_len");
  ASSERT_FALSE(PlanFromJson(j, "short").IsOk());
  bad.push_back(dir.Path("bad_short_rows_without_q_len.json"));
  std::ofstream(bad.back()) << j.dump(2);
  ASSERT_EQ(RunSchemaValidator(bad, true, dir.Path("bad.log"), &out), 0)
      << "the schema accepts plans the loader refuses:\n" << out;
}

}  // namespace
