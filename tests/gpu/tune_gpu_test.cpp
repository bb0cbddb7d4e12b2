// The tuner on the GPU (engine/tune/ over kernels/CudaBackend): every method's tuned layer
// computes what the CPU reference computes; every parameter setting the backend offers the
// tuner for a segment runs and is correct; GTCO given every setting equals exhaustive
// enumeration on the same measurements (a shared in-memory cache makes them identical); a
// measured candidate carries the analytical prediction beside it. Skips without a GPU.
#include <gtest/gtest.h>

#include "engine/fusion/default_scheme.h"
#include "engine/graph/graph_build.h"
#include "engine/mask/mask_spec.h"
#include "engine/run/model_runner.h"
#include "engine/tune/measured_cost_source.h"
#include "engine/tune/segment_model.h"
#include "engine/tune/tune_cache.h"
#include "engine/tune/tuner.h"
#include "gpu_test_util.h"
#include "layer_test_util.h"
#include "kernels/cuda_backend.h"

using namespace stof::engine;
using stof::engine::testing::BigBird;
using stof::engine::testing::Graph;

namespace {

std::unique_ptr<MeasuredCostSource> Source(Backend& gpu, const OpGraph& g, const Mask& m) {
  MeasureOptions mo;
  mo.repeats = 3;
  mo.graph = true;
  const DeviceSpec dev = gpu.Device();
  Predictor p = [g, &m, dev](const Segment& s, const SegmentChoice& c) -> Expected<Prediction> {
    auto r = PredictSegment(g, s, c, m, dev);
    if (!r.IsOk()) return r.ToStatus();
    return Prediction{r->us, r->bytes};
  };
  auto src = MeasuredCostSource::Create(gpu, g, m, mo, p);
  EXPECT_TRUE(src.IsOk()) << src.Message();
  return src.IsOk() ? std::move(*src) : nullptr;
}

void ExpectCorrect(Backend& gpu, const OpGraph& g, const Mask& m, const FusionScheme& s,
                   const std::vector<SegmentChoice>& c, const std::string& what) {
  auto check = CheckLayerAgainstCpu(gpu, g, m, s, c, 5, 2e-2);
  ASSERT_TRUE(check.IsOk()) << what << ": " << check.Message();
  EXPECT_EQ(check->nan_count, 0) << what;
  EXPECT_TRUE(check->passed) << what << ": max row error " << check->max_row_error;
}

}  // namespace

TEST(GpuTune, EveryMethodsTunedLayerMatchesTheCpu) {
  STOF_REQUIRE_GPU();
  auto gpu = stof::kernels::CudaBackend::Create(0);
  ASSERT_TRUE(gpu.IsOk()) << gpu.Message();
  struct Case { std::string model; std::optional<LayerPart> part; };
  for (const Case& cs : {Case{"bert-small", {}}, Case{"gpt2-small", {}},
                         Case{"t5-small", LayerPart::kDecoder}}) {
    const OpGraph g = Graph(cs.model, 2, 128, cs.part);
    const Mask m = BigBird(128);
    auto src = Source(**gpu, g, m);
    ASSERT_TRUE(src);
    for (TuneMethod method : AllTuneMethods()) {
      if (method == TuneMethod::kExhaustive && g.Size() > 16) continue;  // T5 decoder: 22 ops
      TuneOptions o;
      o.method = method;
      o.budget_candidates = 400;
      auto r = Tune(*src, o);
      const std::string what = cs.model + " " + TuneMethodName(method);
      ASSERT_TRUE(r.IsOk()) << what << ": " << r.Message();
      EXPECT_TRUE(r->measured);
      EXPECT_GT(r->total_us, 0) << what;
      EXPECT_LE(r->total_us, r->initial_us * 1.0001) << what;
      for (const SegmentResult& s : r->segments) {
        EXPECT_TRUE(s.cost.Ok()) << what << " " << SegmentLabel(s.segment) << ": " << s.cost.error;
        EXPECT_GT(s.cost.predicted_us, 0) << what << " " << SegmentLabel(s.segment);
      }
      ExpectCorrect(**gpu, g, m, r->scheme, r->choices, what + " scheme " + r->scheme.Code());
    }
  }
}

TEST(GpuTune, EverySettingOfferedForASegmentRunsCorrectly) {
  STOF_REQUIRE_GPU();
  auto gpu = stof::kernels::CudaBackend::Create(0);
  ASSERT_TRUE(gpu.IsOk()) << gpu.Message();
  const OpGraph g = Graph("bert-small", 1, 128);
  const Mask m = BigBird(128);
  auto src = Source(**gpu, g, m);
  ASSERT_TRUE(src);
  const FusionScheme scheme = DefaultScheme(g, {true, true});
  int checked = 0;
  for (size_t i = 0; i < scheme.Segments().size(); ++i) {
    const Segment s = scheme.Segments()[i];
    auto choices = src->Choices(s);
    ASSERT_TRUE(choices.IsOk()) << SegmentLabel(s) << ": " << choices.Message();
    for (const SegmentChoice& c : *choices) {
      auto cost = src->Cost(s, c);
      ASSERT_TRUE(cost.IsOk()) << cost.Message();
      const std::string what = SegmentLabel(s) + " " + ChoiceText(c, MatchTemplate(g, s).kind);
      if (!cost->Ok()) {  // offered but refused: must not happen, the list is the backend's own
        ADD_FAILURE() << what << ": " << cost->error;
        continue;
      }
      std::vector<SegmentChoice> all(scheme.Segments().size());
      all[i] = c;
      ExpectCorrect(**gpu, g, m, scheme, all, what);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(GpuTune, GtcoEqualsExhaustiveOnTheSameMeasurements) {
  STOF_REQUIRE_GPU();
  auto gpu = stof::kernels::CudaBackend::Create(0);
  ASSERT_TRUE(gpu.IsOk()) << gpu.Message();
  const OpGraph g = Graph("bert-small", 1, 128);
  const Mask m = BigBird(128);
  auto src = Source(**gpu, g, m);
  ASSERT_TRUE(src);
  TuneCache cache = TuneCache::InMemory();
  TuneOptions e;
  e.method = TuneMethod::kExhaustive;
  auto re = Tune(*src, e, nullptr, &cache);
  ASSERT_TRUE(re.IsOk()) << re.Message();
  TuneOptions o;
  o.method = TuneMethod::kGtco;
  o.samples = 100000;
  auto rg = Tune(*src, o, nullptr, &cache);
  ASSERT_TRUE(rg.IsOk()) << rg.Message();
  EXPECT_EQ(rg->stats.measured, 0);  // every candidate from the shared cache
  EXPECT_NEAR(rg->total_us, re->total_us, 1e-6 * re->total_us);
  TuneOptions s;
  s.method = TuneMethod::kStof;
  auto rs = Tune(*src, s, nullptr, &cache);
  ASSERT_TRUE(rs.IsOk()) << rs.Message();
  RecordProperty("exhaustive_us", std::to_string(re->total_us));
  RecordProperty("stof_us", std::to_string(rs->total_us));
  std::printf("bert-small 1x128: exhaustive %.2f us, gtco %.2f us, stof %.2f us (%.1f %% above)\n",
              re->total_us, rg->total_us, rs->total_us, 100 * (rs->total_us / re->total_us - 1));
}
