// Layer profiles (profiler/layer_profile.h) without a GPU: the "stof-layer-profile" JSON round
// trip of a filled profile, malformed input naming the JSON path, file errors, profiles made
// from a plan's measurements, and ProfileLayer on the CPU reference backend with the
// NullProfiler (every part unavailable with the reason, one SegmentProfile per segment, FLOPs
// and bytes summing to the graph's).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "engine/core/atomic_file.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/device/device_spec.h"
#include "engine/fusion/default_scheme.h"
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan_choices.h"
#include "engine/run/layer_runner.h"
#include "profiler/layer_profile.h"
#include "profiler/model/profile_export.h"
#include "profiler/profiler.h"

namespace stof::profiler {
namespace {

using Json = nlohmann::json;

ProfileResult FilledResult(const std::string& label, double us, int kernels) {
  ProfileResult r;
  r.profiler = "cupti";
  r.label = label;
  r.device = {0, "NVIDIA H100 80GB HBM3", "GH100", 9, 0};
  r.options.label = label;
  r.options.runs = 3;
  r.options.activity_runs = 1;
  r.options.metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum"};
  r.options.flop_count = 1e9;
  r.options.min_bytes = 4e6;
  r.options.peak_dram_bytes_per_s = 3.35e12;
  r.options.peak_flops_per_s = 989e12;
  r.availability.events = r.availability.activity = r.availability.range = true;
  r.latency.runs = 3;
  r.latency.samples_us = {us, us + 1, us - 1};
  r.latency.median_us = us;
  r.latency.min_us = us - 1;
  r.latency.max_us = us + 1;
  r.latency.mean_us = us;
  r.latency.wall_us_per_run = us + 5;
  r.activity_runs = 1;
  r.activity_run_us = {us + 0.5};
  for (int k = 0; k < kernels; ++k) {
    KernelRecord kr;
    kr.name = "kernel_" + std::to_string(k);
    kr.mangled_name = kr.name;
    kr.start_ns = 1000 + 100 * static_cast<uint64_t>(k);
    kr.end_ns = kr.start_ns + 90;
    kr.grid = {64, 12, 1};
    kr.block = {128, 1, 1};
    kr.registers_per_thread = 96;
    kr.dynamic_smem_bytes = 32768;
    kr.correlation_id = static_cast<uint32_t>(k + 7);
    r.kernels.push_back(kr);
  }
  r.range_mode = "auto";
  r.replay_mode = "kernel";
  r.counter_passes = 1;
  for (const char* m : {"dram__bytes_read.sum", "dram__bytes_write.sum"})
    r.metrics.push_back({m, "", true, "byte", "bytes", ""});
  RangeRecord rr;
  rr.name = "0";
  rr.kernel_name = "kernel_0";
  rr.metrics = {{"dram__bytes_read.sum", 3e6, "byte"}, {"dram__bytes_write.sum", 1e6, "byte"}};
  r.ranges.push_back(rr);
  r.notes = {"a note"};
  ComputeSummary(&r);
  return r;
}

LayerProfile Filled() {
  LayerProfile p;
  p.label = "bert-small 1x128 bigbird (plan bert.json)";
  p.model = "bert-small";
  p.batch = 1;
  p.seq_len = 128;
  p.mask_label = "bigbird L=128";
  p.mask_hash = "0123456789abcdef";
  p.scheme_code = "00110";
  p.backend = "cuda:0 (NVIDIA H100 80GB HBM3)";
  p.source_plan = "bert.json";
  p.created_by = "stof profile layer";
  p.created_at = "2026-11-22T10:00:00Z";
  p.device_name = "NVIDIA H100 80GB HBM3";
  p.peak_dram_bytes_per_s = 3.35e12;
  p.peak_flops_per_s = 989e12;
  p.layer_flops = 3e9;
  p.layer_min_bytes = 1.2e7;
  p.layer = FilledResult("layer", 30, 3);
  p.notes = {"first note"};
  for (int i = 0; i < 2; ++i) {
    SegmentProfile s;
    s.index = i;
    s.ops = i == 0 ? "[#1,#2]" : "[#3-#5]";
    s.tmpl = i == 0 ? "gemm_bias" : "";
    s.how = i == 0 ? "gemm_bias" : "op by op: no template";
    s.flops = 1e9 * (i + 1);
    s.min_bytes = 4e6 * (i + 1);
    s.profile = FilledResult("segment " + std::to_string(i + 1) + " (" + s.ops + ")", 10 + i,
                             1 + 2 * i);
    p.segments.push_back(s);
  }
  return p;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("stof_layer_profile_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(LayerProfileJson, RoundTripIsExact) {
  const LayerProfile p = Filled();
  const Json j = LayerProfileToJson(p);
  EXPECT_EQ(j["schema"], "stof-layer-profile");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["segments"].size(), 2u);
  EXPECT_EQ(j["segments"][1]["ops"], "[#3-#5]");
  EXPECT_EQ(j["segments"][0]["profile"]["schema"], "stof-profile");
  auto back = LayerProfileFromJson(j);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(*back == p);
  EXPECT_EQ(back->segments[1].profile.kernels.size(), 3u);
  EXPECT_EQ(LayerProfileToJson(*back), j);
  // Through text as well (what files hold).
  auto again = LayerProfileFromJson(Json::parse(j.dump()));
  ASSERT_TRUE(again.IsOk()) << again.Message();
  EXPECT_TRUE(*again == p);
}

TEST(LayerProfileJson, NonFiniteNumbersAreNullAndComeBackAsNaN) {
  LayerProfile p = Filled();
  p.layer_flops = std::nan("");
  const Json j = LayerProfileToJson(p);
  EXPECT_TRUE(j["layer_flops"].is_null());
  auto back = LayerProfileFromJson(j);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(std::isnan(back->layer_flops));
}

void ExpectError(const Json& j, const std::string& part) {
  auto r = LayerProfileFromJson(j, "lp.json");
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find(part), std::string::npos) << r.Message();
  EXPECT_EQ(r.Message().rfind("lp.json: ", 0), 0u) << r.Message();
}

TEST(LayerProfileJson, BadInputNamesThePath) {
  const Json good = LayerProfileToJson(Filled());
  Json j = good;
  j["schema"] = "stof-profile";
  ExpectError(j, "lp.json: schema: expected 'stof-layer-profile', got \"stof-profile\"");
  j = good;
  j["version"] = 2;
  ExpectError(j, "lp.json: version: expected 1, got 2");
  j = good;
  j["segments"] = Json::object();
  ExpectError(j, "lp.json: segments: expected an array");
  j = good;
  j["segments"][1]["profile"]["latency"]["runs"] = "three";
  ExpectError(j, "lp.json: segments[1].profile.latency.runs: expected an integer");
  j = good;
  j["segments"][1]["profile"]["schema"] = "other";
  ExpectError(j, "segments[1].profile.schema");
  j = good;
  j["segments"][0].erase("ops");
  ExpectError(j, "lp.json: segments[0].ops: required field is missing");
  j = good;
  j["segments"][0]["flops"] = "many";
  ExpectError(j, "segments[0].flops: expected a number");
  j = good;
  j["batch"] = -1;
  ExpectError(j, "lp.json: batch: expected an integer >= 0");
  j = good;
  j["extra"] = 1;
  ExpectError(j, "lp.json: extra: unknown key");
  j = good;
  j["layer"]["availability"] = 3;
  ExpectError(j, "lp.json: layer.availability");
  ExpectError(Json::array(), "expected an object");
}

TEST(LayerProfileFile, SaveLoadAndErrorsNameTheFile) {
  const std::string path = TempPath("ok.json");
  const LayerProfile p = Filled();
  ASSERT_TRUE(SaveLayerProfile(path, p).IsOk());
  auto back = LoadLayerProfile(path);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(*back == p);

  auto missing = LoadLayerProfile(TempPath("missing.json"));
  ASSERT_FALSE(missing.IsOk());
  EXPECT_NE(missing.Message().find("missing.json: cannot open: no such file"), std::string::npos)
      << missing.Message();

  const std::string broken = TempPath("broken.json");
  std::ofstream(broken) << "{\"schema\": ";
  auto bad = LoadLayerProfile(broken);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("broken.json: not valid JSON"), std::string::npos) << bad.Message();

  // Issue 16: a 60 000-deep profile crashed `stof-studio --open-profile`.
  const std::string deep = TempPath("deep.json");
  std::ofstream(deep) << "{\"schema\": " << std::string(60000, '[') << std::string(60000, ']') << "}";
  auto d = LoadLayerProfile(deep);
  ASSERT_FALSE(d.IsOk());
  EXPECT_EQ(d.Message().rfind(deep + ": JSON nested deeper than 256 levels at schema[0][0]", 0), 0u)
      << d.Message();
  EXPECT_NE(d.Message().find("[0]... (arrays and objects inside each other; the limit is 256)"),
            std::string::npos)
      << d.Message();

  const std::string wrong = TempPath("wrong.json");
  Json j = LayerProfileToJson(p);
  j["version"] = 2;
  std::ofstream(wrong) << j.dump();
  auto v2 = LoadLayerProfile(wrong);
  ASSERT_FALSE(v2.IsOk());
  EXPECT_NE(v2.Message().find("wrong.json: version: expected 1, got 2"), std::string::npos)
      << v2.Message();

  auto dir = LoadLayerProfile(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir.IsOk());
  EXPECT_NE(dir.Message().find("is a directory, not a regular file"), std::string::npos)
      << dir.Message();
  // A FIFO is refused by its kind, not opened (`stof-studio --open-profile` on one hung).
  const std::string fifo = TempPath("fifo.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = LoadLayerProfile(fifo);
  ASSERT_FALSE(from_fifo.IsOk());
  EXPECT_EQ(from_fifo.Message(), fifo + ": is a FIFO (named pipe), not a regular file");
  std::remove(fifo.c_str());

  const std::string unwritable = TempPath("no_such_dir") + "/p.json";
  engine::Status s = SaveLayerProfile(unwritable, p);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find(unwritable), std::string::npos) << s.Message();
  for (const std::string& f : {path, broken, wrong}) std::remove(f.c_str());
}

// Issue 16: a failed write (no space left, injected through the atomic writer's hook onto
// /dev/full) keeps the profile that was there and names the file and the reason.
int g_full_fd = -1;
ssize_t WriteToDevFull(int /*fd*/, const void* data, size_t n) {
  return ::write(g_full_fd, data, n);
}

TEST(LayerProfileFile, AFailedSaveKeepsTheOldProfile) {
  const std::string path = TempPath("kept.json");
  const LayerProfile old = Filled();
  ASSERT_TRUE(SaveLayerProfile(path, old).IsOk());
  LayerProfile newer = old;
  newer.layer.latency.median_us += 1.0;
  g_full_fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(g_full_fd, 0);
  engine::SetAtomicFileHooksForTesting({WriteToDevFull, nullptr});
  const engine::Status s = SaveLayerProfile(path, newer);
  engine::SetAtomicFileHooksForTesting({});
  ::close(g_full_fd);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find(path + ": cannot write: No space left on device (the file is "
                                    "unchanged)"),
            std::string::npos)
      << s.Message();
  auto back = LoadLayerProfile(path);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(*back == old);
  std::remove(path.c_str());
}

engine::OpGraph BertSmall(int64_t batch, int64_t seq) {
  engine::GraphRequest r;
  r.model = *engine::FindModelPreset("bert-small");
  r.batch = batch;
  r.seq_len = seq;
  auto g = engine::BuildLayerGraph(r);
  EXPECT_TRUE(g.IsOk()) << g.Message();
  return *g;
}

engine::Mask BigBird(int64_t L) {
  engine::MaskSpec s;
  s.pattern = "bigbird";
  s.seq_len = L;
  return *engine::Generate(s);
}

engine::Plan PlanFor(const engine::OpGraph& g, const engine::FusionScheme& s) {
  engine::Plan plan;
  plan.device = *engine::FindBuiltinDevice("h100");
  plan.workload = g.AttentionWorkload();
  plan.model = engine::ModelToPlan(*engine::FindModelPreset("bert-small"), g.part, false);
  plan.mask.has_spec = true;
  plan.mask.spec.pattern = "bigbird";
  plan.mask.spec.seq_len = g.seq_len;
  plan.mask.seq_len = g.seq_len;
  plan.mask.hash = BigBird(g.seq_len).HashHex();
  plan.fusion = engine::FusionToPlan(g, s, {});
  plan.tuning.method = "stof";
  return plan;
}

TEST(LayerProfileFromPlan, SegmentFiguresBecomeLatencyOnlyProfiles) {
  const engine::OpGraph g = BertSmall(1, 64);
  const engine::FusionScheme s = engine::DefaultScheme(g);
  engine::Plan plan = PlanFor(g, s);
  const size_t n = s.Segments().size();
  ASSERT_GE(n, 2u);
  for (size_t i = 0; i < n; ++i)
    plan.measurements.push_back({"segment " + std::to_string(i + 1), 1.5 * (i + 1), i != 1, {}});
  plan.measurements.push_back({"layer", 123.0, true, {}});
  plan.measurements.push_back({"model", 999.0, true, {}});

  auto p = LayerProfileFromPlan(plan, "bert.json");
  ASSERT_TRUE(p.IsOk()) << p.Message();
  EXPECT_EQ(p->created_by, "plan");
  EXPECT_EQ(p->source_plan, "bert.json");
  EXPECT_NE(p->label.find("plan bert.json"), std::string::npos) << p->label;
  EXPECT_EQ(p->scheme_code, s.Code());
  EXPECT_EQ(p->batch, 1);
  EXPECT_EQ(p->seq_len, 64);
  EXPECT_EQ(p->mask_hash, plan.mask.hash);
  ASSERT_EQ(p->segments.size(), n);
  double flops = 0, bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    const SegmentProfile& sp = p->segments[i];
    EXPECT_EQ(sp.index, static_cast<int>(i));
    EXPECT_EQ(sp.ops, engine::SegmentLabel(s.Segments()[i]));
    EXPECT_EQ(sp.tmpl, plan.fusion.segments[i].template_name);
    EXPECT_TRUE(sp.profile.availability.events);
    EXPECT_FALSE(sp.profile.availability.activity);
    EXPECT_FALSE(sp.profile.availability.activity_why_not.empty());
    EXPECT_FALSE(sp.profile.availability.range);
    EXPECT_TRUE(sp.profile.kernels.empty());
    EXPECT_DOUBLE_EQ(sp.profile.latency.median_us, 1.5 * (i + 1));
    EXPECT_EQ(sp.profile.latency.samples_us, std::vector<double>{1.5 * (i + 1)});
    ASSERT_TRUE(sp.profile.summary.latency_us.has_value());
    EXPECT_DOUBLE_EQ(*sp.profile.summary.latency_us, 1.5 * (i + 1));
    EXPECT_EQ(sp.profile.summary.latency_source, "plan");
    EXPECT_EQ(sp.profile.notes.empty(), i != 1);  // segment 2 was predicted: noted
    flops += sp.flops;
    bytes += sp.min_bytes;
  }
  EXPECT_DOUBLE_EQ(flops, static_cast<double>(g.TotalFlops()));
  EXPECT_DOUBLE_EQ(bytes, static_cast<double>(g.TotalBytes()));
  EXPECT_DOUBLE_EQ(p->layer_flops, static_cast<double>(g.TotalFlops()));
  EXPECT_DOUBLE_EQ(*p->layer.summary.latency_us, 123.0);
  // It saves and loads like a measured profile.
  auto back = LayerProfileFromJson(LayerProfileToJson(*p));
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(*back == *p);
}

TEST(LayerProfileFromPlan, WithoutSegmentMeasurementsIsAnError) {
  const engine::OpGraph g = BertSmall(1, 64);
  engine::Plan plan = PlanFor(g, engine::DefaultScheme(g));
  plan.measurements.push_back({"mha", 10.0, true, {}});
  plan.measurements.push_back({"model", 99.0, true, {}});
  auto p = LayerProfileFromPlan(plan, "sel.json");
  ASSERT_FALSE(p.IsOk());
  EXPECT_NE(p.Message().find("sel.json: measurements: the plan has no per-segment measurements"),
            std::string::npos)
      << p.Message();

  plan.measurements = {{"segment 99", 1.0, true, {}}};
  auto out = LayerProfileFromPlan(plan, "sel.json");
  ASSERT_FALSE(out.IsOk());
  EXPECT_NE(out.Message().find("sel.json: measurements[0].what: 'segment 99' but fusion.segments has"),
            std::string::npos)
      << out.Message();
  plan.measurements = {{"segment x", 1.0, true, {}}};
  EXPECT_FALSE(LayerProfileFromPlan(plan, "sel.json").IsOk());
}

TEST(ProfileLayer, CpuBackendWithNullProfiler) {
  engine::CpuBackend cpu;
  const engine::OpGraph g = BertSmall(1, 32);
  const engine::Mask mask = BigBird(32);
  const engine::FusionScheme scheme = engine::DefaultScheme(g);
  const size_t io_bytes = static_cast<size_t>(g.batch * g.seq_len * g.hidden) * sizeof(float);
  auto in = cpu.Allocate(io_bytes);
  auto out = cpu.Allocate(io_bytes);
  ASSERT_TRUE(in.IsOk() && out.IsOk());
  engine::LayerIo io;
  io.input = *in;
  io.output = *out;
  auto runner = engine::LayerRunner::Create(cpu, g, mask, scheme, {}, io, 7);
  ASSERT_TRUE(runner.IsOk()) << runner.Message();
  auto prof = CreateNullProfiler("no GPU in this test");
  const engine::DeviceSpec dev = *engine::FindBuiltinDevice("h100");

  std::vector<std::string> parts;
  LayerProfileOptions o;
  o.progress = [&](const std::string& part, double f) {
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
    parts.push_back(part);
    return true;
  };
  auto p = ProfileLayer(**runner, *prof, dev, o);
  ASSERT_TRUE(p.IsOk()) << p.Message();
  const size_t n = scheme.Segments().size();
  ASSERT_EQ(p->segments.size(), n);
  ASSERT_EQ(parts.size(), n + 2);  // each segment, the layer, done
  EXPECT_EQ(parts[n], "layer");
  EXPECT_EQ(p->scheme_code, scheme.Code());
  EXPECT_EQ(p->model, g.model);
  EXPECT_EQ(p->device_name, dev.name);
  EXPECT_DOUBLE_EQ(p->peak_flops_per_s, dev.fp16_tensor_flops);
  EXPECT_EQ(p->created_at.size(), 20u) << p->created_at;  // 2026-11-22T10:00:00Z
  EXPECT_EQ(p->created_at.back(), 'Z');
  double flops = 0, bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    const SegmentProfile& s = p->segments[i];
    EXPECT_EQ(s.index, static_cast<int>(i));
    EXPECT_EQ(s.ops, engine::SegmentLabel(scheme.Segments()[i]));
    EXPECT_EQ(s.tmpl, (*runner)->Segments()[i].match.Name());
    EXPECT_EQ(s.how, (*runner)->Segments()[i].how);
    EXPECT_FALSE(s.profile.availability.events);
    EXPECT_EQ(s.profile.availability.events_why_not, "no GPU in this test");
    EXPECT_EQ(s.profile.label, "segment " + std::to_string(i + 1) + " (" + s.ops + ")");
    EXPECT_DOUBLE_EQ(s.profile.options.flop_count, s.flops);
    flops += s.flops;
    bytes += s.min_bytes;
  }
  EXPECT_DOUBLE_EQ(flops, static_cast<double>(g.TotalFlops()));
  EXPECT_DOUBLE_EQ(bytes, static_cast<double>(g.TotalBytes()));
  EXPECT_DOUBLE_EQ(p->layer_flops, flops);
  EXPECT_FALSE(p->layer.availability.events);
  EXPECT_EQ(p->layer.availability.range_why_not, "no GPU in this test");
  EXPECT_EQ(p->layer.label, "layer");

  // Cancel before the third part: two segments measured, the layer unavailable, a note.
  int calls = 0;
  o.progress = [&](const std::string&, double) { return ++calls < 3; };
  auto c = ProfileLayer(**runner, *prof, dev, o);
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_EQ(c->segments.size(), 2u);
  ASSERT_EQ(c->notes.size(), 1u);
  EXPECT_EQ(c->notes[0].rfind("cancelled before segment 3/", 0), 0u) << c->notes[0];
  EXPECT_EQ(c->layer.availability.events_why_not, "cancelled");

  // Layer only; bad options.
  o.progress = nullptr;
  o.segments = false;
  auto only = ProfileLayer(**runner, *prof, dev, o);
  ASSERT_TRUE(only.IsOk());
  EXPECT_TRUE(only->segments.empty());
  o.measure.runs = 0;
  auto bad = ProfileLayer(**runner, *prof, dev, o);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("measure.runs"), std::string::npos) << bad.Message();
  runner->reset();
  cpu.Free(*in);
  cpu.Free(*out);
}

}  // namespace
}  // namespace stof::profiler
