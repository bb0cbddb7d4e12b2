// engine/tune/fusion_tradeoff.h on BERT-base: the layer's GEMM + epilogue pairs and its
// GEMM + Add + LayerNorm triples, each predicted fused and apart with the segment model's
// own figures (the sums of PredictSegment over the parts); separate bias ops.
#include <gtest/gtest.h>

#include "engine/device/device_spec.h"
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"
#include "engine/tune/fusion_tradeoff.h"
#include "engine/tune/segment_model.h"
#include "test_masks.h"

namespace stof::engine {
namespace {

OpGraph Bert(int64_t batch, int64_t L) {
  GraphRequest rq;
  rq.model = *FindModelPreset("bert-base");
  rq.batch = batch;
  rq.seq_len = L;
  return *BuildLayerGraph(rq);
}

TEST(FusionTradeoff, BertBaseCandidatesAndTheirFigures) {
  const OpGraph g = Bert(8, 512);
  const Mask m = testing::PatternMask("bigbird", 512);
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  auto t = PredictFusionTradeoffs(g, m, h100);
  ASSERT_TRUE(t.IsOk()) << t.Message();
  // BERT: [#7,#8] output GEMM + residual, [#7-#9] with its LayerNorm, [#10,#11] FFN GEMM +
  // GELU, [#12,#13] + residual, [#12-#14] with its LayerNorm.
  std::vector<std::string> got;
  for (const FusionTradeoff& x : *t) got.push_back(x.tmpl + " " + SegmentLabel(x.fused));
  EXPECT_EQ(got, (std::vector<std::string>{"gemm_add [#7,#8]", "gemm_norm [#7-#9]", "gemm_act [#10,#11]",
                                           "gemm_add [#12,#13]", "gemm_norm [#12-#14]"}));
  for (const FusionTradeoff& x : *t) {
    auto fused = PredictSegment(g, x.fused, SegmentChoice{}, m, h100);
    ASSERT_TRUE(fused.IsOk());
    EXPECT_DOUBLE_EQ(x.fused_us, fused->us) << x.what;
    double apart = 0, bytes = 0;
    for (const Segment& s : x.apart) {
      apart += PredictSegment(g, s, SegmentChoice{}, m, h100)->us;
      bytes += PredictSegment(g, s, SegmentChoice{}, m, h100)->bytes;
    }
    EXPECT_DOUBLE_EQ(x.apart_us, apart) << x.what;
    EXPECT_DOUBLE_EQ(x.apart_bytes, bytes) << x.what;
    EXPECT_EQ(x.Pays(), x.fused_us < x.apart_us);
    // Fusing never moves more bytes: the intermediate stays on chip.
    EXPECT_LT(x.fused_bytes, x.apart_bytes) << x.what;
  }
  EXPECT_EQ((*t)[1].what, "GEMM + Add + LayerNorm");
  ASSERT_EQ((*t)[1].apart.size(), 2u);
  EXPECT_EQ((*t)[1].apart[0], (Segment{7, 8}));
}

// With the biases as their own ops, each Linear GEMM + its Bias is a gemm_bias candidate too.
TEST(FusionTradeoff, SeparateBiasesAreEpilogueCandidates) {
  GraphRequest rq;
  rq.model = *FindModelPreset("bert-base");
  rq.batch = 2;
  rq.seq_len = 256;
  rq.separate_bias = true;
  const OpGraph g = *BuildLayerGraph(rq);
  auto t = PredictFusionTradeoffs(g, testing::PatternMask("bigbird", 256), *FindBuiltinDevice("a100"));
  ASSERT_TRUE(t.IsOk()) << t.Message();
  int bias = 0;
  for (const FusionTradeoff& x : *t) bias += x.tmpl == "gemm_bias" ? 1 : 0;
  EXPECT_GE(bias, 1);
  for (const FusionTradeoff& x : *t) EXPECT_GT(x.apart_us, 0) << x.what;
}

// The same layer on every built-in device: each entry is that device's own prediction, so
// whether GEMM + LayerNorm pays can differ between devices (the parts apart run at each one's
// DRAM bandwidth).
TEST(FusionTradeoff, AcrossDevices) {
  const OpGraph g = Bert(8, 1024);
  const Mask m = testing::PatternMask("bigbird", 1024);
  auto t = TradeoffAcrossDevices(g, m, BuiltinDevices(), "gemm_norm");
  ASSERT_TRUE(t.IsOk()) << t.Message();
  ASSERT_EQ(t->size(), BuiltinDevices().size());
  for (size_t i = 0; i < t->size(); ++i) {
    const DeviceSpec& d = BuiltinDevices()[i];
    EXPECT_EQ((*t)[i].device, d.name);
    EXPECT_DOUBLE_EQ((*t)[i].dram_bytes_per_s, d.dram_bytes_per_s);
    const std::vector<FusionTradeoff> own = *PredictFusionTradeoffs(g, m, d);
    EXPECT_DOUBLE_EQ((*t)[i].tradeoff.fused_us, own[1].fused_us) << d.name;
    EXPECT_EQ((*t)[i].tradeoff.fused, (Segment{7, 9}));
  }
  EXPECT_TRUE(TradeoffAcrossDevices(g, m, BuiltinDevices(), "no_such_template")->empty());
}

}  // namespace
}  // namespace stof::engine
