// Tests of the tuning session shared by `stof tune` and the studio (engine/tune/tune_session.h):
// on the scripted backend (fake_backend.h, known optimum) it tunes, times the tuned and the
// default model and makes the plan; the observer sees STOF's stage-2 rewards; without a
// backend everything is a labelled prediction; budgets parse; bad requests name the field;
// MeasurePlan measures a plan's model again; a plan records where it was measured.
#include <gtest/gtest.h>

#include "engine/tune/tune_session.h"
#include "fake_backend.h"
#include "test_graphs.h"
#include "test_masks.h"

namespace stof::engine {
namespace {

using testing::PatternMask;
using testing::PresetGraph;
using testing::ScriptedBackend;

// A bert-small layer at batch 1, L 64, full mask, measured on `backend` with one repeat.
TuneSessionRequest ScriptedRequest(Backend* backend, const Mask* mask, TuneMethod method) {
  TuneSessionRequest rq;
  rq.graph = PresetGraph("bert-small", 1, 64);
  rq.mask = mask;
  rq.backend = backend;
  rq.options.method = method;
  rq.repeats = 1;
  return rq;
}

struct Rewards : TuneObserver {
  std::vector<RewardEvent> events;
  void OnReward(const RewardEvent& e, const TuneProgress&) override { events.push_back(e); }
};

TEST(TuneSession, TunesTimesBothModelsAndMakesThePlan) {
  ScriptedBackend backend;
  const Mask mask = PatternMask("full", 64);
  TuneSessionRequest rq = ScriptedRequest(&backend, &mask, TuneMethod::kStof);
  rq.options.seed = 7;
  rq.options.small_tokens = 0;
  rq.created_by = "test";
  Rewards rewards;
  auto s = RunTuneSession(rq, &rewards);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  // The scripted optimum (tune_test.cpp): 36 us, scheme 10000011100111.
  EXPECT_DOUBLE_EQ(s->result.total_us, 36);
  EXPECT_EQ(s->result.scheme.Code(), "10000011100111");
  EXPECT_EQ(s->plan.fusion.code, s->result.scheme.Code());
  EXPECT_EQ(s->plan.created_by, "test");
  ASSERT_TRUE(s->model_us && s->default_model_us);
  EXPECT_LT(*s->model_us, *s->default_model_us);
  EXPECT_EQ(s->layers, rq.graph.layers);
  EXPECT_TRUE(s->result.measured);
  // Stage 2 reports every segment of the chosen scheme in every iteration it ran.
  const size_t nseg = s->result.scheme.Segments().size();
  ASSERT_GE(rewards.events.size(), nseg);
  EXPECT_EQ(rewards.events.size() % nseg, 0u);
  // Stage 1 already tried `samples` (4) settings per segment, which include the script's best
  // ones: no stage-2 candidate beats them, so every event gains nothing and reports the
  // segment's final time.
  for (size_t i = 0; i < rewards.events.size(); ++i) {
    const RewardEvent& e = rewards.events[i];
    EXPECT_EQ(e.segment_index, i % nseg);
    EXPECT_EQ(e.segment, s->result.scheme.Segments()[e.segment_index]);
    EXPECT_EQ(e.gain_us, 0);
    EXPECT_GT(e.best_us, 0);
    EXPECT_DOUBLE_EQ(e.best_us, s->result.segments[e.segment_index].cost.us);
  }

  // "Run plan": the plan's model measured again gives the tuned figure.
  MeasureOptions mo;
  mo.repeats = 1;
  auto again = MeasurePlan(backend, s->plan, s->graph, mask, mo, "plan");
  ASSERT_TRUE(again.IsOk()) << again.Message();
  EXPECT_DOUBLE_EQ(again->total_us, *s->model_us);
}

TEST(TuneSession, StageTwoRewardsWhatStageOneDidNotTry) {
  ScriptedBackend backend;
  const Mask mask = PatternMask("full", 64);
  TuneSessionRequest rq = ScriptedRequest(&backend, &mask, TuneMethod::kStof);
  rq.options.samples = 1;  // stage 1 sees only the defaults; stage 2 finds the better settings
  rq.options.small_tokens = 0;
  rq.measure_model = false;
  Rewards rewards;
  auto s = RunTuneSession(rq, &rewards);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  double gained = 0;
  for (const RewardEvent& e : rewards.events) gained += e.gain_us;
  EXPECT_GT(gained, 0);
  EXPECT_LT(gained, s->result.initial_us);
  EXPECT_FALSE(s->model_us.has_value());  // measure_model = false
}

// A plan measured on a backend that is not the GPU (the CPU reference: `stof tune --device
// cpu`) names that backend as its device, not the GPU spec its kernel choice predicts for (it
// said "H100-SXM-80GB" with measured entries); a GPU's plan names the GPU.
TEST(TuneSession, APlanNamesTheDeviceItWasMeasuredOn) {
  ScriptedBackend backend;
  const Mask mask = PatternMask("full", 64);
  TuneSessionRequest rq = ScriptedRequest(&backend, &mask, TuneMethod::kGtco);
  rq.measure_model = false;
  auto cpu = RunTuneSession(rq, nullptr);
  ASSERT_TRUE(cpu.IsOk()) << cpu.Message();
  ASSERT_NE(backend.Name(), backend.Device().name);
  EXPECT_EQ(cpu->plan.device.name, backend.Name());
  EXPECT_EQ(cpu->plan.device.sm_count, backend.Device().sm_count);  // the figures predicted for
  EXPECT_TRUE(cpu->plan.measurements.front().measured);
  rq.gpu = true;
  auto gpu = RunTuneSession(rq, nullptr);
  ASSERT_TRUE(gpu.IsOk()) << gpu.Message();
  EXPECT_EQ(gpu->plan.device.name, backend.Device().name);
}

TEST(TuneSession, WithoutABackendEverythingIsPredicted) {
  const Mask mask = PatternMask("bigbird", 128);
  TuneSessionRequest rq;
  rq.graph = PresetGraph("bert-small", 2, 128);
  rq.mask = &mask;
  rq.device = ScriptedBackend().Device();
  rq.options.method = TuneMethod::kGtco;
  auto s = RunTuneSession(rq, nullptr);
  ASSERT_TRUE(s.IsOk()) << s.Message();
  EXPECT_FALSE(s->result.measured);
  EXPECT_FALSE(s->model_us.has_value());
  EXPECT_NE(s->device_text.find("predicted"), std::string::npos) << s->device_text;
  for (const PlanMeasurement& m : s->plan.measurements) EXPECT_FALSE(m.measured) << m.what;
  EXPECT_EQ(s->plan.device.name, rq.device.name);
  EXPECT_LE(s->result.total_us, s->result.initial_us);
}

TEST(TuneSession, BadRequestsNameTheField) {
  const Mask small = PatternMask("full", 32);
  TuneSessionRequest rq;
  rq.graph = PresetGraph("bert-small", 1, 64);
  EXPECT_NE(RunTuneSession(rq, nullptr).Message().find("no mask"), std::string::npos);
  rq.mask = &small;
  EXPECT_NE(RunTuneSession(rq, nullptr).Message().find("does not fit seq_len 64"),
            std::string::npos);
  const Mask mask = PatternMask("full", 64);
  rq.mask = &mask;
  rq.repeats = 0;
  EXPECT_NE(RunTuneSession(rq, nullptr).Message().find("repeats"), std::string::npos);
  rq.repeats = 1;
  rq.options.samples = 0;
  EXPECT_FALSE(RunTuneSession(rq, nullptr).IsOk());
}

TEST(TuneSession, BudgetsParse) {
  TuneOptions o;
  ASSERT_TRUE(ParseTuneBudget("90", &o, "budget").IsOk());
  EXPECT_DOUBLE_EQ(o.budget_s, 90);
  ASSERT_TRUE(ParseTuneBudget("2m", &o, "budget").IsOk());
  EXPECT_DOUBLE_EQ(o.budget_s, 120);
  ASSERT_TRUE(ParseTuneBudget("1.5h", &o, "budget").IsOk());
  EXPECT_DOUBLE_EQ(o.budget_s, 5400);
  ASSERT_TRUE(ParseTuneBudget("200c", &o, "budget").IsOk());
  EXPECT_EQ(o.budget_candidates, 200);
  TuneOptions untouched;
  ASSERT_TRUE(ParseTuneBudget("", &untouched, "budget").IsOk());
  EXPECT_EQ(untouched.budget_s, TuneOptions().budget_s);
  for (const char* bad : {"0", "-5s", "abc", "5x", "1.5c", "nan", "inf", "1e9h", "1e13c"}) {
    const Status st = ParseTuneBudget(bad, &o, "budget");
    EXPECT_FALSE(st.IsOk()) << bad;
    EXPECT_NE(st.Message().find("budget: expected"), std::string::npos) << st.Message();
  }
}

}  // namespace
}  // namespace stof::engine
