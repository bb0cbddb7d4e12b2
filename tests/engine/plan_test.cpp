// Tests of plans (plan.h): exact round trips (Plan -> JSON -> Plan -> JSON) with a spec mask,
// an inline mask and the optional model section, save/load through files, rejection of malformed plans (each message must
// contain the exact JSON path), file errors (missing, empty, truncated, not JSON), the JSON
// Schema in docs/plan.schema.json (run through tests/engine/validate_plan_schema.py with the
// Debian python3-jsonschema, against several valid and broken plans), and the example plan in
// assets/plans/, which is written by this file: run the test binary with
// STOF_UPDATE_EXAMPLE_PLANS=1 to regenerate it after a schema or generator change.
#include "engine/plan/plan.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/analysis/mha_run.h"
#include "engine/core/json_io.h"
#include "engine/mask/mask_json.h"
#include "engine/plan/plan_build.h"
#include "plan_reject.h"
#include "test_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace stof::engine;  // NOLINT: a test of the whole plan API

Plan SpecPlan() {
  Plan p;
  p.created_by = "stof 0.1.0 (plan_test)";
  p.device = *FindBuiltinDevice("h100");
  p.workload = Workload{8, 1024, 12, 64, DType::kF16};
  p.mask.has_spec = true;
  p.mask.spec.pattern = "bigbird";
  p.mask.spec.seq_len = 1024;
  p.mask.spec.seed = 7;
  const Mask m = *Generate(p.mask.spec);
  p.mask.seq_len = 1024;
  p.mask.hash = m.HashHex();
  p.mask.density = m.Density();
  p.mha = PlanMha{MhaKernel::kBlockWise, 64, 32, 4, "eq1+eq2"};
  p.tuning.method = "analytical";
  return p;
}

Mask RandomMask(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Mask m = *Mask::Create(n, n);
  for (int64_t r = 0; r < n; ++r) {
    if (r % 7 == 3) continue;  // all-zero rows
    for (int64_t c = 0; c < n; ++c) {
      if (rng() % 3 == 0) m.Set(r, c);
    }
  }
  return m;
}

Plan InlinePlan() {
  Plan p = SpecPlan();
  const Mask m = RandomMask(200, 5);  // 200: not a multiple of 64
  p.workload.seq_len = 200;
  p.workload.dtype = DType::kBF16;
  p.mask = PlanMask{};
  p.mask.inline_mask = m;
  p.mask.seq_len = 200;
  p.mask.hash = m.HashHex();
  p.mask.density = m.Density();
  p.mha = PlanMha{MhaKernel::kRowWise, 16, 16, 1, "override"};
  return p;
}

// A plan with every optional part filled: fusion segments, measurements (with and without
// DRAM bytes), a queried device, a composed spec, seeds above 2^53.
Plan FullPlan() {
  Plan p = SpecPlan();
  p.device.source = "queried";
  MaskSpec window;
  window.pattern = "sliding_window";
  window.seq_len = 1024;
  window.width = 64;
  MaskSpec causal;
  causal.pattern = "causal";
  causal.seq_len = 1024;
  MaskSpec both;
  both.pattern = "and";
  both.seq_len = 1024;
  both.operands = {window, causal};
  p.mask.spec = both;
  const Mask m = *Generate(both);
  p.mask.hash = m.HashHex();
  p.mask.density = m.Density();
  p.mha.chosen_by = "tuned";
  p.mha.runs = PlanMhaRuns{MhaKernel::kBlockWise, 64, 64, 5, "tuned", "measured faster"};
  p.fusion.code = "01111100011100";
  p.fusion.segments = {
      {{1}, "", json::object()},
      {{2, 3, 4, 5, 6}, "sparse_mha", {{"block_m", 64}, {"block_n", 32}, {"num_warps", 4}}},
      {{7, 8, 9}, "gemm_norm", {{"tile", json::array({128, 64, 32})}, {"stages", 3}}},
      {{10, 11, 12}, "gemm_chain", {{"tile", json::array({128, 128, 32})}, {"split_k", false}}},
      {{13, 14}, "bias_add_norm", {{"note", "flat tiling"}, {"alpha", 1.25}}},
  };
  p.measurements = {{"mha", 812.5, true, 1.5e9}, {"segment 3", 95.25, true, std::nullopt},
                    {"total", 2400.0, false, std::nullopt}};
  p.tuning = PlanTuning{"stof", 600, 431.75, 1234, std::numeric_limits<uint64_t>::max()};
  return p;
}

// SpecPlan with the optional model section (BERT-base: 12 heads of 64, as its workload).
Plan ModelPlan() {
  Plan p = SpecPlan();
  p.model = PlanModel{"bert-base", ModelFamily::kBert, LayerPart::kEncoder, 768, 12, 64, 3072, 12,
                      false};
  p.measurements = {{"model", 1234.5, true, std::nullopt}};
  return p;
}

// The checked-in example: BigBird with the paper defaults at L = 1024, a BERT-base layer's
// attention (12 heads of 64, batch 8, fp16) on the built-in H100; the kernel and its
// parameters are Eq. 1 + Eq. 2's choice, and mha.runs what the engine runs there. `stof select
// --pattern bigbird --seq 1024 --plan-out FILE` writes the same plan except for created_by
// (and, in a CUDA build, mha.runs decided by the kernels' rules instead of the engine's model).
Plan ExamplePlan() {
  Plan p;
  p.created_by = "stof 0.1.0 (tests/engine/plan_test.cpp)";
  p.device = *FindBuiltinDevice("H100-SXM-80GB");
  p.workload = Workload{8, 1024, 12, 64, DType::kF16};
  p.mask.has_spec = true;
  MaskSpec bigbird;
  bigbird.pattern = "bigbird";
  bigbird.seq_len = 1024;
  p.mask.spec = *Resolve(bigbird);  // parameters written out, as the CLI does
  const Mask m = *Generate(p.mask.spec);
  p.mask.seq_len = 1024;
  p.mask.hash = m.HashHex();
  p.mask.density = m.Density();
  const KernelSelection sel = *SelectKernel(m, p.workload, p.device);
  p.mha = PlanMha{sel.kernel, sel.block_m, sel.block_n, sel.num_warps, "eq1+eq2"};
  p.mha.runs = PlanRunsOf(*ModelMhaRun(m, p.workload, p.device));
  p.tuning.method = "analytical";
  return p;
}

void ExpectExactRoundTrip(const Plan& p) {
  const json j1 = PlanToJson(p);
  auto p2 = PlanFromJson(j1, "plan.json");
  ASSERT_TRUE(p2.IsOk()) << p2.Message();
  const json j2 = PlanToJson(*p2);
  EXPECT_EQ(j1, j2);
  EXPECT_EQ(PlanToText(p), PlanToText(*p2));
  // Through text too, as a file would go.
  auto p3 = PlanFromJson(json::parse(PlanToText(p)), "plan.json");
  ASSERT_TRUE(p3.IsOk()) << p3.Message();
  EXPECT_EQ(PlanToJson(*p3), j1);
  EXPECT_TRUE(p2->device == p.device);
  EXPECT_TRUE(p2->workload == p.workload);
  EXPECT_EQ(p2->mask.has_spec, p.mask.has_spec);
  EXPECT_TRUE(p2->mask.spec == p.mask.spec);
  EXPECT_EQ(p2->mask.inline_mask.has_value(), p.mask.inline_mask.has_value());
  if (p.mask.inline_mask) {
    EXPECT_TRUE(*p2->mask.inline_mask == *p.mask.inline_mask);
  }
  EXPECT_EQ(p2->tuning.seed, p.tuning.seed);
}

TEST(PlanJson, ExactRoundTripWithSpecMask) { ExpectExactRoundTrip(SpecPlan()); }

TEST(PlanJson, ExactRoundTripWithInlineMask) { ExpectExactRoundTrip(InlinePlan()); }
TEST(PlanJson, ExactRoundTripWithFusionMeasurementsAndBigSeeds) {
  const Plan p = FullPlan();
  ExpectExactRoundTrip(p);
  const json j = PlanToJson(p);
  EXPECT_EQ(j["tuning"]["seed"], "18446744073709551615");
  EXPECT_EQ(j["fusion"]["segments"][2]["params"]["stages"], 3);
  EXPECT_FALSE(j["measurements"][1].contains("dram_bytes"));
}

// mha.runs: optional; block-wise with its tiles and family, row-wise without them; refused
// with the JSON path when inconsistent.
TEST(PlanJson, MhaRunsRoundTripsAndIsChecked) {
  Plan p = SpecPlan();
  EXPECT_FALSE(PlanToJson(p)["mha"].contains("runs"));
  p.mha.runs = PlanMhaRuns{MhaKernel::kRowWise, 0, 0, 0, "engine model", ""};
  ExpectExactRoundTrip(p);
  EXPECT_EQ(PlanToJson(p)["mha"]["runs"], json({{"kernel", "row_wise"}, {"decided_by", "engine model"}}));
  p = FullPlan();
  const json j = PlanToJson(p);
  EXPECT_EQ(j["mha"]["runs"]["family"], "hopper");
  EXPECT_EQ(j["mha"]["runs"]["note"], "measured faster");
  auto back = PlanFromJson(j, "plan.json");
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_EQ(back->mha.runs, p.mha.runs);
  const std::vector<std::pair<std::function<void(json&)>, std::string>> bad = {
      {[](json& x) { x["mha"]["runs"]["family"] = "portable"; },
       "plan.json: mha.runs.family: num_warps 5 is the hopper kernel, got 'portable'"},
      {[](json& x) { x["mha"]["runs"]["decided_by"] = "guess"; }, "plan.json: mha.runs.decided_by: "},
      {[](json& x) { x["mha"]["runs"]["num_warps"] = 3; }, "plan.json: mha.runs.num_warps: expected one of"},
      {[](json& x) { x["mha"]["runs"].erase("block_n"); }, "plan.json: mha.runs.block_n: "},
      {[](json& x) { x["mha"]["runs"]["kernel"] = "row_wise"; },
       "plan.json: mha.runs.block_m: the row-wise kernel has no block parameters"},
      {[](json& x) { x["mha"]["runs"]["tile"] = 64; }, "plan.json: mha.runs.tile: unknown key"},
  };
  for (const auto& [edit, want] : bad) {
    json k = j;
    edit(k);
    auto r = PlanFromJson(k, "plan.json");
    ASSERT_FALSE(r.IsOk()) << k["mha"].dump();
    EXPECT_EQ(r.Message().rfind(want, 0), 0u) << r.Message();
  }
}

TEST(PlanJson, ExactRoundTripWithModel) {
  ExpectExactRoundTrip(ModelPlan());
  Plan t5 = ModelPlan();
  t5.model = PlanModel{"t5.json", ModelFamily::kT5, LayerPart::kDecoder, 512, 12, 64, 2048, 6, true};
  ExpectExactRoundTrip(t5);
  auto p = PlanFromJson(PlanToJson(t5), "plan.json");
  ASSERT_TRUE(p.IsOk()) << p.Message();
  ASSERT_TRUE(p->model.has_value());
  EXPECT_TRUE(*p->model == *t5.model);
  // Plans without one (analytical plans) stay without one.
  p = PlanFromJson(PlanToJson(SpecPlan()), "plan.json");
  ASSERT_TRUE(p.IsOk()) << p.Message();
  EXPECT_FALSE(p->model.has_value());
  EXPECT_FALSE(PlanToJson(SpecPlan()).contains("model"));
  // The model's keys in schema order, after the workload and before the mask.
  const std::string text = PlanToText(ModelPlan());
  const auto pos = [&](const std::string& s) { return text.find(s); };
  EXPECT_LT(pos("\"workload\""), pos("\"model\""));
  EXPECT_LT(pos("\"model\""), pos("\"mask\""));
  EXPECT_NE(text.find("  \"model\": {\n    \"name\": \"bert-base\",\n    \"family\": \"bert\",\n"
                      "    \"part\": \"encoder\",\n    \"hidden\": 768,\n    \"heads\": 12,\n"
                      "    \"head_dim\": 64,\n    \"ffn\": 3072,\n    \"layers\": 12,\n"
                      "    \"separate_bias\": false\n  },\n"),
            std::string::npos)
      << text;
}

TEST(PlanJson, TextHasSchemaKeyOrderAndOneLineArrays) {
  const std::string text = PlanToText(InlinePlan());
  EXPECT_EQ(text.rfind("{\n  \"schema_version\": 1,\n  \"created_by\": ", 0), 0u) << text.substr(0, 80);
  EXPECT_EQ(text.back(), '\n');
  const auto pos = [&](const std::string& s) { return text.find(s); };
  EXPECT_LT(pos("\"device\""), pos("\"workload\""));
  EXPECT_LT(pos("\"workload\""), pos("\"mask\""));
  EXPECT_LT(pos("\"mask\""), pos("\"mha\""));
  EXPECT_LT(pos("\"mha\""), pos("\"fusion\""));
  EXPECT_LT(pos("\"measurements\""), pos("\"tuning\""));
  EXPECT_LT(pos("\"batch\""), pos("\"heads\""));
  EXPECT_LT(pos("\"rows\""), pos("\"runs\""));
  // A run-length row stays on one line.
  std::string row0;
  const json plan_json = PlanToJson(InlinePlan());
  for (const json& v : plan_json["mask"]["inline"]["runs"][0]) {
    row0 += (row0.empty() ? "" : ", ") + v.dump();
  }
  ASSERT_FALSE(row0.empty());
  EXPECT_NE(text.find("\n        [" + row0 + "],\n"), std::string::npos) << row0;
  const std::string full = PlanToText(FullPlan());
  EXPECT_NE(full.find("\"ops\": [2, 3, 4, 5, 6]"), std::string::npos) << full;
  EXPECT_LT(full.find("\"pattern\": \"and\""), full.find("\"operands\""));
}

// ---- rejection -------------------------------------------------------------------------------

using Bad = stof::engine::testing::BadPlanEdit;
using stof::engine::testing::ExpectRejected;

TEST(PlanJson, RejectsWrongTypesMissingFieldsAndRanges) {
  ExpectRejected(SpecPlan(), {
      {"batch 0", [](json& j) { j["workload"]["batch"] = 0; },
       "plan.json: workload.batch: expected an integer >= 1, got 0"},
      {"batch string", [](json& j) { j["workload"]["batch"] = "8"; },
       R"(plan.json: workload.batch: expected an integer, got "8")"},
      {"batch float", [](json& j) { j["workload"]["batch"] = 8.0; },
       "plan.json: workload.batch: expected an integer, got 8.0"},
      {"heads missing", [](json& j) { j["workload"].erase("heads"); },
       "plan.json: workload.heads: required field is missing"},
      {"seq_len big", [](json& j) { j["workload"]["seq_len"] = 40000; },
       "plan.json: workload.seq_len: expected an integer <= 32768, got 40000"},
      {"head_dim 257", [](json& j) { j["workload"]["head_dim"] = 257; },
       "plan.json: workload.head_dim: expected an integer <= 256, got 257"},
      {"head_dim 0", [](json& j) { j["workload"]["head_dim"] = 0; },
       "plan.json: workload.head_dim: expected an integer >= 1, got 0"},
      {"dtype alias", [](json& j) { j["workload"]["dtype"] = "fp16"; },
       R"(plan.json: workload.dtype: expected one of f16, bf16, f32, got "fp16")"},
      {"workload missing", [](json& j) { j.erase("workload"); },
       "plan.json: workload: required field is missing"},
      {"device array", [](json& j) { j["device"] = json::array(); },
       "plan.json: device: expected an object, got []"},
      {"sm_count", [](json& j) { j["device"]["sm_count"] = -1; },
       "plan.json: device.sm_count: expected an integer >= 1, got -1"},
      {"dram 0", [](json& j) { j["device"]["dram_bytes_per_s"] = 0; },
       "plan.json: device.dram_bytes_per_s: expected a number > 0, got 0"},
      {"flops string", [](json& j) { j["device"]["fp16_tensor_flops"] = "fast"; },
       R"(plan.json: device.fp16_tensor_flops: expected a number, got "fast")"},
      {"name empty", [](json& j) { j["device"]["name"] = ""; },
       "plan.json: device.name: expected a non-empty string"},
      {"source", [](json& j) { j["device"]["source"] = "guess"; },
       R"(plan.json: device.source: expected one of built-in, queried, got "guess")"},
      {"smem per block > per sm", [](json& j) { j["device"]["smem_per_block_bytes"] = 1 << 30; },
       "plan.json: device.smem_per_block_bytes: expected at most smem_per_sm_bytes"},
      {"cc_minor", [](json& j) { j["device"]["cc_minor"] = 10; },
       "plan.json: device.cc_minor: expected an integer <= 9, got 10"},
      {"created_by", [](json& j) { j["created_by"] = nullptr; },
       "plan.json: created_by: expected a string, got null"},
      {"block_m 48", [](json& j) { j["mha"]["block_m"] = 48; },
       "plan.json: mha.block_m: expected one of 16, 32, 64, 128, 256, got 48"},
      {"block_n 512", [](json& j) { j["mha"]["block_n"] = 512; },
       "plan.json: mha.block_n: expected one of 16, 32, 64, 128, 256, got 512"},
      {"block_n 8", [](json& j) { j["mha"]["block_n"] = 8; },
       "plan.json: mha.block_n: expected one of 16, 32, 64, 128, 256, got 8"},
      {"num_warps 3", [](json& j) { j["mha"]["num_warps"] = 3; },
       "plan.json: mha.num_warps: expected one of 1, 2, 4, 5, 8, 12, got 3"},
      {"num_warps 16", [](json& j) { j["mha"]["num_warps"] = 16; },
       "plan.json: mha.num_warps: expected one of 1, 2, 4, 5, 8, 12, got 16"},
      {"kernel alias", [](json& j) { j["mha"]["kernel"] = "row"; },
       R"(plan.json: mha.kernel: expected one of block_wise, row_wise, got "row")"},
      {"chosen_by", [](json& j) { j["mha"]["chosen_by"] = "magic"; },
       R"(plan.json: mha.chosen_by: expected one of eq1+eq2, eq2, override, tuned, shape, got "magic")"},
      {"hash short", [](json& j) { j["mask"]["hash"] = "abc"; },
       R"(plan.json: mask.hash: expected 16 lower-case hex digits, got "abc")"},
      {"hash upper", [](json& j) { j["mask"]["hash"] = "0123456789ABCDEF"; },
       R"(plan.json: mask.hash: expected 16 lower-case hex digits, got "0123456789ABCDEF")"},
      {"hash number", [](json& j) { j["mask"]["hash"] = 12; },
       "plan.json: mask.hash: expected a string, got 12"},
      {"density", [](json& j) { j["mask"]["density"] = 1.5; },
       "plan.json: mask.density: expected a number <= 1, got 1.5"},
      {"seq_len mismatch", [](json& j) { j["mask"]["seq_len"] = 512; },
       "plan.json: mask.seq_len: expected 1024 (workload.seq_len), got 512"},
      {"spec seq_len mismatch", [](json& j) { j["mask"]["spec"]["seq_len"] = 512; },
       "plan.json: mask.spec.seq_len: expected 1024 (mask.seq_len), got 512"},
      {"spec width 0 (generator rule)", [](json& j) { j["mask"]["spec"]["width"] = 0; },
       "plan.json: mask.spec.width: must be in 1..1024, got 0"},
      {"spec width type", [](json& j) { j["mask"]["spec"]["width"] = true; },
       "plan.json: mask.spec.width: expected an integer, got true"},
      {"spec nested",
       [](json& j) {
         j["mask"]["spec"] = json::parse(R"({"pattern": "or", "seq_len": 1024, "operands":
             [{"pattern": "causal"}, {"pattern": "sliding_window", "width": "x"}]})");
       },
       R"(plan.json: mask.spec.operands[1].width: expected an integer, got "x")"},
      {"spec unknown pattern", [](json& j) { j["mask"]["spec"]["pattern"] = "butterfly"; },
       R"(plan.json: mask.spec.pattern: unknown pattern "butterfly")"},
      {"both spec and inline",
       [](json& j) { j["mask"]["inline"] = json::parse(R"({"rows": 1, "cols": 1, "runs": [[]]})"); },
       "plan.json: mask: expected exactly one of spec, inline, got both"},
      {"neither", [](json& j) { j["mask"].erase("spec"); },
       "plan.json: mask: expected exactly one of spec, inline, got neither"},
      {"code digits", [](json& j) { j["fusion"]["code"] = "012"; },
       "plan.json: fusion.code: expected only 0/1 digits, got '012'"},
      {"code type", [](json& j) { j["fusion"]["code"] = 11; },
       "plan.json: fusion.code: expected a string, got 11"},
      {"segments without code",
       [](json& j) { j["fusion"]["segments"] = json::parse(R"([{"ops": [1], "template": "", "params": {}}])"); },
       "plan.json: fusion.segments: code '' has 0 segments, the list has 1"},
      {"measurements object", [](json& j) { j["measurements"] = json::object(); },
       "plan.json: measurements: expected an array, got {}"},
      {"latency", [](json& j) { j["measurements"] = json::parse(R"([{"what": "mha", "latency_us": -1, "measured": true}])"); },
       "plan.json: measurements[0].latency_us: expected a number >= 0, got -1"},
      {"measured", [](json& j) { j["measurements"] = json::parse(R"([{"what": "mha", "latency_us": 1, "measured": true}, {"what": "x", "latency_us": 1, "measured": "yes"}])"); },
       R"(plan.json: measurements[1].measured: expected true or false, got "yes")"},
      {"what missing", [](json& j) { j["measurements"] = json::parse(R"([{"latency_us": 1, "measured": true}])"); },
       "plan.json: measurements[0].what: required field is missing"},
      {"dram bytes", [](json& j) { j["measurements"] = json::parse(R"([{"what": "mha", "latency_us": 1, "measured": true, "dram_bytes": "1GB"}])"); },
       R"(plan.json: measurements[0].dram_bytes: expected a number, got "1GB")"},
      {"method", [](json& j) { j["tuning"]["method"] = "random"; },
       R"(plan.json: tuning.method: expected one of analytical, stof, gtco, mcfuser, exhaustive, got "random")"},
      {"seed negative", [](json& j) { j["tuning"]["seed"] = -1; },
       "plan.json: tuning.seed: expected an integer in 0..9007199254740991"},
      {"seed 2^53", [](json& j) { j["tuning"]["seed"] = uint64_t{1} << 53; },
       "plan.json: tuning.seed: expected an integer in 0..9007199254740991 (2^53 - 1; write larger seeds as a decimal string), got 9007199254740992"},
      {"seed text", [](json& j) { j["tuning"]["seed"] = "0x10"; },
       R"(plan.json: tuning.seed: expected a decimal string of an unsigned 64-bit integer (no sign, no leading zeros), got "0x10")"},
      {"candidates", [](json& j) { j["tuning"]["candidates_measured"] = -3; },
       "plan.json: tuning.candidates_measured: expected an integer >= 0, got -3"},
      {"budget", [](json& j) { j["tuning"]["budget_s"] = -0.5; },
       "plan.json: tuning.budget_s: expected a number >= 0, got -0.5"},
      {"tuning missing", [](json& j) { j.erase("tuning"); },
       "plan.json: tuning: required field is missing"},
  });
}

TEST(PlanJson, RejectsUnknownKeysAndVersions) {
  ExpectRejected(SpecPlan(), {
      {"top", [](json& j) { j["extra"] = 1; },
       "plan.json: extra: unknown key (allowed here: schema_version, created_by, device"},
      {"workload", [](json& j) { j["workload"]["batchsize"] = 8; },
       "plan.json: workload.batchsize: unknown key (allowed here: batch, seq_len, heads, head_dim, dtype)"},
      {"device", [](json& j) { j["device"]["clock_mhz"] = 1980; },
       "plan.json: device.clock_mhz: unknown key"},
      {"mask", [](json& j) { j["mask"]["generator"] = j["mask"]["spec"]; },
       "plan.json: mask.generator: unknown key"},
      {"spec", [](json& j) { j["mask"]["spec"]["windth"] = 3; },
       "plan.json: mask.spec.windth: unknown key"},
      {"mha", [](json& j) { j["mha"]["stages"] = 2; }, "plan.json: mha.stages: unknown key"},
      {"measurement", [](json& j) { j["measurements"] = json::parse(R"([{"what": "mha", "latency_us": 1, "measured": true, "note": ""}])"); },
       "plan.json: measurements[0].note: unknown key"},
      {"tuning", [](json& j) { j["tuning"]["seeds"] = 1; }, "plan.json: tuning.seeds: unknown key"},
      {"version 4", [](json& j) { j["schema_version"] = 4; },
       "plan.json: schema_version: unsupported version 4 (this build reads 1..3)"},
      // The version is checked first: a newer file is refused for its version, not its keys.
      {"version 4 with new keys", [](json& j) { j["schema_version"] = 4; j["new_section"] = {}; },
       "plan.json: schema_version: unsupported version 4 (this build reads 1..3)"},
      {"version 0", [](json& j) { j["schema_version"] = 0; },
       "plan.json: schema_version: unsupported version 0 (this build reads 1..3)"},
      // Version 1 has no grouped heads or query length.
      {"kv_heads in version 1", [](json& j) { j["workload"]["kv_heads"] = 4; },
       "plan.json: workload.kv_heads: unknown key (allowed here: batch, seq_len, heads, "
       "head_dim, dtype)"},
      {"version string", [](json& j) { j["schema_version"] = "1"; },
       R"(plan.json: schema_version: expected an integer, got "1")"},
      {"version missing", [](json& j) { j.erase("schema_version"); },
       "plan.json: schema_version: required field is missing"},
  });
  auto p = PlanFromJson(json::array({1, 2}), "plan.json");
  EXPECT_EQ(p.Message(), "plan.json: expected a JSON object at the top level, got [1,2]");
  // The exact whole message for the two examples of the brief.
  json j = PlanToJson(SpecPlan());
  j["schema_version"] = 4;
  EXPECT_EQ(PlanFromJson(j, "plan.json").Message(),
            "plan.json: schema_version: unsupported version 4 (this build reads 1..3)");
  j = PlanToJson(SpecPlan());
  j["workload"]["batch"] = 0;
  EXPECT_EQ(PlanFromJson(j, "plan.json").Message(),
            "plan.json: workload.batch: expected an integer >= 1, got 0");
}

// A grouped workload (kv_heads, q_len) is written at version 2 and read back exactly; a square
// plan stays version 1; version 2's own rules are checked.
Plan ShapePlan() {
  Plan p = SpecPlan();
  p.workload.heads = 32;
  p.workload.kv_heads = 8;
  p.workload.q_len = 1;
  p.mha.kernel = MhaKernel::kBlockWise;
  p.mha.block_m = 64, p.mha.block_n = 64, p.mha.num_warps = 5;
  p.mha.chosen_by = "shape";
  return p;
}
TEST(PlanJson, GroupedWorkloadIsVersionTwoAndRoundTrips) {
  ExpectExactRoundTrip(ShapePlan());
  const json shape = PlanToJson(ShapePlan());
  EXPECT_EQ(shape["schema_version"], 2);
  EXPECT_EQ(shape["workload"]["kv_heads"], 8);
  EXPECT_EQ(shape["workload"]["q_len"], 1);
  EXPECT_EQ(PlanToJson(SpecPlan())["schema_version"], 1);
  EXPECT_FALSE(PlanToJson(SpecPlan())["workload"].contains("kv_heads"));
  ExpectRejected(ShapePlan(), {
      {"kv_heads not a divisor", [](json& j) { j["workload"]["kv_heads"] = 5; },
       "plan.json: workload.kv_heads: expected a divisor of workload.heads = 32, got 5"},
      {"q_len past the keys", [](json& j) { j["workload"]["q_len"] = 99999; },
       "plan.json: workload.q_len: expected an integer <= "},
      {"portable kernel", [](json& j) { j["mha"]["num_warps"] = 4; },
       "plan.json: mha: 32 query heads over 8 key/value heads, q_len 1: expected the block-wise "
       "Hopper kernel (num_warps 5 or 12), got block_wise with num_warps 4"},
      {"shape on a square workload",
       [](json& j) { j["workload"].erase("kv_heads"); j["workload"].erase("q_len"); },
       "plan.json: mha.chosen_by: \"shape\" is for grouped key/value heads or q_len"},
  });
}
TEST(PlanJson, RejectsBadModels) {
  ExpectRejected(ModelPlan(), {
      {"array", [](json& j) { j["model"] = json::array(); },
       "plan.json: model: expected an object, got []"},
      {"unknown key", [](json& j) { j["model"]["vocab"] = 30522; },
       "plan.json: model.vocab: unknown key (allowed here: name, family, part, hidden, heads, "
       "head_dim, ffn, layers, separate_bias)"},
      {"name missing", [](json& j) { j["model"].erase("name"); },
       "plan.json: model.name: required field is missing"},
      {"name empty", [](json& j) { j["model"]["name"] = ""; },
       "plan.json: model.name: expected a non-empty string"},
      {"family", [](json& j) { j["model"]["family"] = "roberta"; },
       R"(plan.json: model.family: expected one of bert, gpt2, t5, got "roberta")"},
      {"part", [](json& j) { j["model"]["part"] = "both"; },
       R"(plan.json: model.part: expected one of encoder, decoder, got "both")"},
      {"bert decoder", [](json& j) { j["model"]["part"] = "decoder"; },
       R"(plan.json: model.part: bert has encoder layers only, got "decoder")"},
      {"gpt2 encoder", [](json& j) { j["model"]["family"] = "gpt2"; },
       R"(plan.json: model.part: gpt2 has decoder layers only, got "encoder")"},
      {"hidden 0", [](json& j) { j["model"]["hidden"] = 0; },
       "plan.json: model.hidden: expected an integer >= 1, got 0"},
      {"hidden string", [](json& j) { j["model"]["hidden"] = "768"; },
       R"(plan.json: model.hidden: expected an integer, got "768")"},
      {"heads range", [](json& j) { j["model"]["heads"] = 2000; },
       "plan.json: model.heads: expected an integer <= 1024, got 2000"},
      {"heads mismatch", [](json& j) { j["model"]["heads"] = 16; },
       "plan.json: model.heads: expected 12 (workload.heads), got 16"},
      {"head_dim mismatch", [](json& j) { j["model"]["head_dim"] = 128; },
       "plan.json: model.head_dim: expected 64 (workload.head_dim), got 128"},
      {"ffn", [](json& j) { j["model"]["ffn"] = 300000; },
       "plan.json: model.ffn: expected an integer <= 262144, got 300000"},
      {"layers 0", [](json& j) { j["model"]["layers"] = 0; },
       "plan.json: model.layers: expected an integer >= 1, got 0"},
      {"layers float", [](json& j) { j["model"]["layers"] = 12.0; },
       "plan.json: model.layers: expected an integer, got 12.0"},
      {"separate_bias", [](json& j) { j["model"]["separate_bias"] = "no"; },
       R"(plan.json: model.separate_bias: expected true or false, got "no")"},
      {"separate_bias missing", [](json& j) { j["model"].erase("separate_bias"); },
       "plan.json: model.separate_bias: required field is missing"},
  });
}

TEST(PlanJson, RejectsInlineMaskInconsistencies) {
  const Plan base = InlinePlan();
  ExpectRejected(base, {
      {"hash mismatch", [](json& j) { j["mask"]["hash"] = "0123456789abcdef"; },
       "plan.json: mask.hash: does not match the inline mask (its hash is "},
      {"one bit set in an empty row",
       [](json& j) { j["mask"]["inline"]["runs"][3] = json::array({0, 1}); },
       "plan.json: mask.hash: does not match the inline mask"},
      {"density mismatch", [](json& j) { j["mask"]["density"] = 0.5; },
       "plan.json: mask.density: does not match the inline mask (its density is "},
      {"rows != seq_len",
       [](json& j) {
         j["mask"]["inline"]["rows"] = 199;
         j["mask"]["inline"]["runs"].erase(199);
       },
       "plan.json: mask.inline: expected a 200 x 200 mask (mask.seq_len), got 199 x 200"},
      {"row count", [](json& j) { j["mask"]["inline"]["runs"].erase(5); },
       "plan.json: mask.inline.runs: expected 200 row arrays (rows), got 199"},
      {"overlap",
       [](json& j) { j["mask"]["inline"]["runs"][4] = json::array({10, 5, 12, 3}); },
       "plan.json: mask.inline.runs[4][2]: run starts at 12, before the end of the previous run (15)"},
      {"past cols", [](json& j) { j["mask"]["inline"]["runs"][4] = json::array({190, 11}); },
       "plan.json: mask.inline.runs[4][1]: run [190, 201) ends past the last column (cols 200)"},
      {"huge before allocating",
       [](json& j) { j["mask"]["inline"]["cols"] = int64_t{1} << 40; },
       "plan.json: mask.inline.cols: expected an integer <= 32768, got 1099511627776"},
      {"unknown key", [](json& j) { j["mask"]["inline"]["format"] = "rle"; },
       "plan.json: mask.inline.format: unknown key (allowed here: rows, cols, runs)"},
  });
}

TEST(PlanJson, RejectsFusionInconsistencies) {
  const Plan base = FullPlan();
  ExpectRejected(base, {
      {"count", [](json& j) { j["fusion"]["code"] = "0011"; },
       "plan.json: fusion.segments: code '0011' has 2 segments, the list has 5"},
      {"ops", [](json& j) { j["fusion"]["segments"][1]["ops"] = json::array({2, 3, 4, 5}); },
       "plan.json: fusion.segments[1].ops: expected [2,3,4,5,6] (segment 2 of code '01111100011100'), got [2,3,4,5]"},
      {"ops range", [](json& j) { j["fusion"]["segments"][4]["ops"] = json::array({13, 15}); },
       "plan.json: fusion.segments[4].ops[1]: expected an integer <= 14, got 15"},
      {"params", [](json& j) { j["fusion"]["segments"][0]["params"] = json::array(); },
       "plan.json: fusion.segments[0].params: expected an object, got []"},
      {"template", [](json& j) { j["fusion"]["segments"][0]["template"] = 0; },
       "plan.json: fusion.segments[0].template: expected a string, got 0"},
      {"segment key", [](json& j) { j["fusion"]["segments"][3]["name"] = "x"; },
       "plan.json: fusion.segments[3].name: unknown key (allowed here: ops, template, params)"},
  });
  // An empty segment list with a code is fine (segments not matched yet).
  json j = PlanToJson(base);
  j["fusion"]["segments"] = json::array();
  EXPECT_TRUE(PlanFromJson(j, "plan.json").IsOk());
}

TEST(PlanJson, NamelessMessagesHaveNoPrefix) {
  json j = PlanToJson(SpecPlan());
  j["mha"]["num_warps"] = 0;
  EXPECT_EQ(PlanFromJson(j, "").Message(), "mha.num_warps: expected one of 1, 2, 4, 5, 8, 12, got 0");
}

// ---- files -----------------------------------------------------------------------------------

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(PlanFile, SaveThenLoadIsExactAndAtomic) {
  stof::engine::testing::TestDir dir("stof_plan_test_");
  for (const Plan& p : {SpecPlan(), InlinePlan(), FullPlan()}) {
    const std::string path = dir.Path("plan.json");
    ASSERT_TRUE(SavePlan(path, p).IsOk()) << SavePlan(path, p).Message();
    EXPECT_EQ(ReadFile(path), PlanToText(p));
    auto loaded = LoadPlan(path);
    ASSERT_TRUE(loaded.IsOk()) << loaded.Message();
    EXPECT_EQ(PlanToJson(*loaded), PlanToJson(p));
    // Only the plan is left: the temporary file was renamed over it.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.Dir()), fs::directory_iterator()), 1);
  }
}

TEST(PlanFile, SaveRefusesInvalidPlansAndReportsIoErrors) {
  stof::engine::testing::TestDir dir("stof_plan_test_");
  Plan bad = SpecPlan();
  bad.mha.block_m = 0;
  const std::string path = dir.Path("bad.json");
  Status s = SavePlan(path, bad);
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message(), path + ": mha.block_m: expected one of 16, 32, 64, 128, 256, got 0 "
                                "(plan not written)");
  EXPECT_FALSE(fs::exists(path));

  const std::string nowhere = dir.Path("no/such/dir/plan.json");
  s = SavePlan(nowhere, SpecPlan());
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message().rfind(nowhere + ": cannot create ", 0), 0u) << s.Message();
  EXPECT_NE(s.Message().find("No such file or directory"), std::string::npos) << s.Message();
}

TEST(PlanFile, LoadErrorsNameTheFile) {
  stof::engine::testing::TestDir dir("stof_plan_test_");
  const std::string missing = dir.Path("missing.json");
  auto p = LoadPlan(missing);
  ASSERT_FALSE(p.IsOk());
  EXPECT_EQ(p.Message(), missing + ": cannot open: no such file");

  const std::string empty = dir.Path("empty.json");
  WriteFile(empty, "");
  EXPECT_EQ(LoadPlan(empty).Message(), empty + ": file is empty");
  WriteFile(empty, " \n\t\n");
  EXPECT_EQ(LoadPlan(empty).Message(), empty + ": file is empty (only whitespace)");

  const std::string text = dir.Path("text.json");
  WriteFile(text, "schema_version: 1\n");
  p = LoadPlan(text);
  EXPECT_EQ(p.Message().rfind(text + ": not valid JSON (byte 1): parse error at line 1, column 1", 0), 0u)
      << p.Message();

  const std::string truncated = dir.Path("truncated.json");
  const std::string full = PlanToText(SpecPlan());
  WriteFile(truncated, full.substr(0, full.rfind('\n', full.size() / 2) + 1));  // whole lines
  p = LoadPlan(truncated);
  ASSERT_FALSE(p.IsOk());
  EXPECT_EQ(p.Message().rfind(truncated + ": not valid JSON (byte ", 0), 0u) << p.Message();
  EXPECT_NE(p.Message().find("unexpected end of input"), std::string::npos) << p.Message();

  const std::string dup = dir.Path("dup.json");
  std::string dup_text = full;
  dup_text.replace(dup_text.find("\"batch\": 8,"), 11, "\"batch\": 8, \"batch\": 9,");
  WriteFile(dup, dup_text);
  EXPECT_EQ(LoadPlan(dup).Message(), dup + ": workload.batch: duplicate key");

  EXPECT_EQ(LoadPlan(dir.Dir().string()).Message(),
            dir.Dir().string() + ": is a directory, not a regular file");

  const std::string invalid = dir.Path("invalid.json");
  json j = PlanToJson(SpecPlan());
  j["workload"]["batch"] = 0;
  WriteFile(invalid, j.dump(2));
  EXPECT_EQ(LoadPlan(invalid).Message(),
            invalid + ": workload.batch: expected an integer >= 1, got 0");
}

// Issue 16: a 100 000-deep array in a segment's params passed validation, then crashed
// `stof run --plan` and the studio; a deep schema_version crashed the loader; messages dumped
// whole values. Now: refused while parsing, with the path, and every quoted value bounded.
TEST(PlanFile, DeepNestingIsRefusedAndQuotedValuesAreBounded) {
  stof::engine::testing::TestDir dir("stof_plan_test_");
  json j = PlanToJson(FullPlan());
  j["fusion"]["segments"][0]["params"]["deep"] = "@DEEP@";
  std::string text = DumpJson(j);
  const size_t at = text.find("\"@DEEP@\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, std::string(100000, '[') + std::string(100000, ']'));
  const std::string deep = dir.Path("deep-params.json");
  WriteFile(deep, text);
  auto p = LoadPlan(deep);
  ASSERT_FALSE(p.IsOk());
  EXPECT_EQ(p.Message().rfind(deep + ": JSON nested deeper than 256 levels at "
                                     "fusion.segments[0].params.deep[0][0][0]",
                              0),
            0u)
      << p.Message();
  EXPECT_LT(p.Message().size(), deep.size() + 250) << p.Message();

  const std::string version = dir.Path("deep-version.json");
  WriteFile(version, "{\"schema_version\": " + std::string(60000, '[') + std::string(60000, ']') + "}");
  EXPECT_EQ(LoadPlan(version).Message().rfind(version + ": JSON nested deeper than 256 levels at "
                                                        "schema_version[0][0]",
                                              0),
            0u)
      << LoadPlan(version).Message();

  // 200 levels are within the limit: the value is read, and refused by the schema with a
  // bounded quote of it.
  j = PlanToJson(FullPlan());
  json nested = 1;
  for (int i = 0; i < 200; ++i) nested = json::array({nested});
  j["workload"]["batch"] = nested;
  auto bad = PlanFromJson(j, "plan.json");
  EXPECT_EQ(bad.Message(), "plan.json: workload.batch: expected an integer, got [[[[...]]]]");
  json many = json::array();
  for (int i = 0; i < 100000; ++i) many.push_back(i);
  j["workload"]["batch"] = many;
  bad = PlanFromJson(j, "plan.json");
  EXPECT_EQ(bad.Message().rfind("plan.json: workload.batch: expected an integer, got [0,1,2,3,", 0), 0u);
  EXPECT_LT(bad.Message().size(), 300u) << bad.Message();
  j = PlanToJson(FullPlan());
  j["fusion"]["code"] = std::string(1000, '2');
  bad = PlanFromJson(j, "plan.json");
  EXPECT_LT(bad.Message().size(), 300u) << bad.Message();
}

TEST(PlanFile, PlanMaskToMaskRegeneratesAndChecksTheHash) {
  const Plan p = SpecPlan();
  auto m = PlanMaskToMask(p.mask, "plan.json");
  ASSERT_TRUE(m.IsOk()) << m.Message();
  EXPECT_TRUE(*m == *Generate(p.mask.spec));

  const Plan q = InlinePlan();
  m = PlanMaskToMask(q.mask, "plan.json");
  ASSERT_TRUE(m.IsOk()) << m.Message();
  EXPECT_TRUE(*m == *q.mask.inline_mask);

  PlanMask wrong = p.mask;
  wrong.hash = "0000000000000000";
  m = PlanMaskToMask(wrong, "plan.json");
  ASSERT_FALSE(m.IsOk());
  EXPECT_EQ(m.Message(), "plan.json: mask.hash: the plan was made for mask 0000000000000000, but "
                         "its spec now generates " + p.mask.hash + " (did the generator change?)");
  PlanMask bad_spec = p.mask;
  bad_spec.spec.width = 5000;
  EXPECT_EQ(PlanMaskToMask(bad_spec, "plan.json").Message(),
            "plan.json: mask.spec.width: must be in 1..1024, got 5000");
  PlanMask none;
  none.seq_len = 4;
  EXPECT_EQ(PlanMaskToMask(none, "plan.json").Message(),
            "plan.json: mask: has neither a spec nor inline data");
}

// ---- the example plan and the JSON Schema ----------------------------------------------------

const std::string kExamplePlan =
    std::string(STOF_SOURCE_DIR) + "/assets/plans/bigbird-1024-bert-base-h100.json";

TEST(PlanExample, AssetIsValidAndUpToDate) {
  const Plan example = ExamplePlan();
  if (std::getenv("STOF_UPDATE_EXAMPLE_PLANS") != nullptr) {
    ASSERT_TRUE(SavePlan(kExamplePlan, example).IsOk());
  }
  auto loaded = LoadPlan(kExamplePlan);
  ASSERT_TRUE(loaded.IsOk()) << loaded.Message()
                             << "\n(regenerate with STOF_UPDATE_EXAMPLE_PLANS=1 stof_engine_tests "
                                "--gtest_filter=PlanExample.*)";
  auto mask = PlanMaskToMask(loaded->mask, kExamplePlan);
  ASSERT_TRUE(mask.IsOk()) << mask.Message();
  EXPECT_EQ(ReadFile(kExamplePlan), PlanToText(example))
      << "the example plan is stale; regenerate with STOF_UPDATE_EXAMPLE_PLANS=1 "
         "stof_engine_tests --gtest_filter=PlanExample.*";
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the validator; returns its exit code and fills `output` with what it printed.
int RunSchemaValidator(const std::vector<std::string>& files, bool expect_invalid,
                       const stof::engine::testing::TestDir& dir, std::string* output) {
  const std::string src = STOF_SOURCE_DIR;
  const std::string log = dir.Path("validator.log");
  // Built with += only: GCC 12 warns (-Wrestrict, a false positive) on literal + string here.
  std::string cmd = "/usr/bin/python3 ";
  cmd += ShellQuote(src + "/tests/engine/validate_plan_schema.py");
  if (expect_invalid) cmd += " --expect-invalid";
  cmd += ' ';
  cmd += ShellQuote(src + "/docs/plan.schema.json");
  for (const std::string& f : files) {
    cmd += ' ';
    cmd += ShellQuote(f);
  }
  cmd += " > ";
  cmd += ShellQuote(log);
  cmd += " 2>&1";
  const int status = std::system(cmd.c_str());
  *output = ReadFile(log);
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(PlanSchema, AcceptsWrittenPlansAndRefusesBrokenOnes) {
  if (!fs::exists("/usr/bin/python3")) {
    FAIL() << "/usr/bin/python3 is missing; run scripts/setup (it installs python3 and "
              "python3-jsonschema)";
  }
  stof::engine::testing::TestDir dir("stof_plan_test_");
  std::vector<std::string> good;
  Plan composed = SpecPlan();
  composed.tuning.seed = uint64_t{1} << 60;
  MaskSpec doc;
  doc.pattern = "document";
  doc.seq_len = 1024;
  doc.doc_lengths = {512, 512};
  doc.causal = true;
  MaskSpec not_doc;
  not_doc.pattern = "not";
  not_doc.seq_len = 1024;
  not_doc.operands = {doc};
  composed.mask.spec = not_doc;
  const Mask cm = *Generate(not_doc);
  composed.mask.hash = cm.HashHex();
  composed.mask.density = cm.Density();
  int n = 0;
  for (const Plan& p : {SpecPlan(), InlinePlan(), FullPlan(), composed, ExamplePlan(), ModelPlan()}) {
    good.push_back(dir.Path("good" + std::to_string(n++) + ".json"));
    ASSERT_TRUE(SavePlan(good.back(), p).IsOk()) << SavePlan(good.back(), p).Message();
  }
  if (fs::exists(kExamplePlan)) good.push_back(kExamplePlan);

  std::string out;
  const int rc = RunSchemaValidator(good, false, dir, &out);
  if (rc == 3) FAIL() << "python3-jsonschema is missing; run scripts/setup\n" << out;
  ASSERT_EQ(rc, 0) << "the schema refuses plans the loader accepts:\n" << out;

  // Plans the loader refuses; the schema must refuse them too (so it is not vacuous).
  const std::vector<std::pair<std::string, std::function<void(json&)>>> broken = {
      {"batch0", [](json& j) { j["workload"]["batch"] = 0; }},
      {"unknown_key", [](json& j) { j["workload"]["batchsize"] = 8; }},
      {"spec_unknown_key", [](json& j) { j["mask"]["spec"]["windth"] = 8; }},
      {"hash", [](json& j) { j["mask"]["hash"] = "ABCDEF0123456789"; }},
      {"block_m", [](json& j) { j["mha"]["block_m"] = 48; }},
      {"num_warps", [](json& j) { j["mha"]["num_warps"] = 3; }},
      {"version", [](json& j) { j["schema_version"] = 4; }},
      {"missing_tuning", [](json& j) { j.erase("tuning"); }},
      {"pattern", [](json& j) { j["mask"]["spec"]["pattern"] = "butterfly"; }},
      {"not_two_operands",
       [](json& j) {
         j["mask"]["spec"] = json::parse(R"({"pattern": "not", "seq_len": 1024,
             "operands": [{"pattern": "causal"}, {"pattern": "full"}]})");
       }},
      {"operands_on_atomic",
       [](json& j) { j["mask"]["spec"]["operands"] = json::array({{{"pattern", "full"}}}); }},
      {"both_masks",
       [](json& j) { j["mask"]["inline"] = json::parse(R"({"rows": 1, "cols": 1, "runs": [[]]})"); }},
      {"code", [](json& j) { j["fusion"]["code"] = "012"; }},
      {"seed_big_integer", [](json& j) { j["tuning"]["seed"] = uint64_t{1} << 60; }},
      {"seed_signed_string", [](json& j) { j["tuning"]["seed"] = "-5"; }},
      {"latency", [](json& j) { j["measurements"] = json::parse(R"([{"what": "mha", "latency_us": -1, "measured": true}])"); }},
      {"dtype", [](json& j) { j["workload"]["dtype"] = "fp16"; }},
      {"model_unknown_key", [](json& j) { j["model"]["vocab"] = 30522; }},
      {"model_family", [](json& j) { j["model"]["family"] = "roberta"; }},
      {"model_bert_decoder", [](json& j) { j["model"]["part"] = "decoder"; }},
      {"model_gpt2_encoder", [](json& j) { j["model"]["family"] = "gpt2"; }},
      {"model_layers", [](json& j) { j["model"]["layers"] = 0; }},
      {"model_missing_ffn", [](json& j) { j["model"].erase("ffn"); }},
      {"model_separate_bias", [](json& j) { j["model"]["separate_bias"] = 1; }},
      {"runs_family", [](json& j) {
         j["mha"]["runs"] = json::parse(R"({"kernel": "block_wise", "block_m": 64, "block_n": 64,
             "num_warps": 5, "family": "hopper", "decided_by": "magic"})");
       }},
      {"runs_unknown_key", [](json& j) {
         j["mha"]["runs"] = json::parse(R"({"kernel": "row_wise", "decided_by": "kernels", "tile": 1})");
       }},
  };
  std::vector<std::string> bad;
  for (const auto& [name, edit] : broken) {
    json j = PlanToJson(ModelPlan());
    edit(j);
    ASSERT_FALSE(PlanFromJson(j, name).IsOk()) << name << " should be refused by the loader";
    bad.push_back(dir.Path("bad_" + name + ".json"));
    WriteFile(bad.back(), j.dump(2));
  }
  ASSERT_EQ(RunSchemaValidator(bad, true, dir, &out), 0)
      << "the schema accepts plans the loader refuses:\n" << out;
}

}  // namespace

namespace stof::engine {
namespace {

TEST(PlanSegmentNames, RoundTripAndRefuseOtherForms) {
  EXPECT_EQ(PlanSegmentWhat(0), "segment 1");
  EXPECT_EQ(PlanSegmentWhat(13), "segment 14");
  for (size_t i : {0, 1, 9, 41}) EXPECT_EQ(PlanSegmentNumber(PlanSegmentWhat(i)), static_cast<int64_t>(i + 1));
  for (const char* bad : {"segment 0", "segment", "segment ", "segment x", "segment 3a", "segment -1",
                          "segment 1234567890", "Segment 1", "layer", "model", "segment  3"})
    EXPECT_FALSE(PlanSegmentNumber(bad).has_value()) << bad;
}

}  // namespace
}  // namespace stof::engine
