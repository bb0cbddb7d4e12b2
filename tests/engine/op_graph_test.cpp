// Tests of BuildLayerGraph (engine/graph/graph_build.h): BERT-base at (8, 512) op by op with
// FLOPs and bytes computed by hand, the op kinds, classes and dependencies of every model's
// layers (docs/fusion.md tables), separate Bias ops, and refused requests.
#include "engine/graph/graph_build.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/engine/test_graphs.h"

using namespace stof::engine;

namespace {

OpGraph Build(const std::string& preset, int64_t batch, int64_t seq,
              std::optional<LayerPart> part = std::nullopt, bool separate_bias = false) {
  return stof::engine::testing::PresetGraph(preset, batch, seq, part, separate_bias);
}

std::vector<std::string> Kinds(const OpGraph& g) {
  std::vector<std::string> k;
  for (const Op& op : g.ops) k.push_back(OpKindName(op.kind));
  return k;
}

TEST(OpGraph, BertBaseFlopsAndBytesByHand) {
  const OpGraph g = Build("bert-base", 8, 512);
  ASSERT_EQ(g.Size(), 14);
  // T = 8 * 512 = 4096 tokens, hidden 768, 12 heads of 64, FFN 3072, fp16 (2 bytes).
  // S = batch * heads * L * L = 8 * 12 * 512 * 512 = 25,165,824 attention scores.
  const int64_t t = 4096, h = 768, f = 3072, s = 25165824, ll = 512 * 512;
  struct Want {
    const char* kind;
    const char* cls;
    int64_t flops;
    int64_t bytes;
  };
  const Want want[14] = {
      // 1 QKV: [4096,768] x [768,2304] + bias
      {"GEMM", "CI", 2 * t * h * 3 * h + t * 3 * h, 2 * (t * h + h * 3 * h + 3 * h + t * 3 * h)},
      // 2 QK^T: 96 products [512,64] x [64,512]; reads Q and K (each 4096 x 768)
      {"BatchGEMM", "CI", 2 * s * 64, 2 * (2 * t * h + s)},
      {"Scale", "MI", s, 2 * 2 * s},
      {"Mask", "MI", s, 2 * (2 * s + ll)},  // + the 512 x 512 mask
      {"Softmax", "MI", 5 * s, 2 * 2 * s},
      // 6 PV: 96 products [512,512] x [512,64]
      {"BatchGEMM", "CI", 2 * t * h * 512, 2 * (s + t * h + t * h)},
      {"GEMM", "CI", 2 * t * h * h + t * h, 2 * (t * h + h * h + h + t * h)},
      {"Add", "MI", t * h, 2 * 3 * t * h},
      {"LayerNorm", "MI", 8 * t * h, 2 * (2 * t * h + 2 * h)},
      {"GEMM", "CI", 2 * t * h * f + t * f, 2 * (t * h + h * f + f + t * f)},
      {"GELU", "MI", 8 * t * f, 2 * 2 * t * f},
      {"GEMM", "CI", 2 * t * f * h + t * h, 2 * (t * f + f * h + h + t * h)},
      {"Add", "MI", t * h, 2 * 3 * t * h},
      {"LayerNorm", "MI", 8 * t * h, 2 * (2 * t * h + 2 * h)},
  };
  for (int i = 0; i < 14; ++i) {
    const Op& op = g.ops[static_cast<size_t>(i)];
    SCOPED_TRACE("op #" + std::to_string(i + 1) + " " + op.name);
    EXPECT_EQ(op.number, i + 1);
    EXPECT_STREQ(OpKindName(op.kind), want[i].kind);
    EXPECT_STREQ(OpClassName(op.Class()), want[i].cls);
    EXPECT_EQ(op.flops, want[i].flops);
    EXPECT_EQ(op.bytes, want[i].bytes);
  }
  // The same numbers written out: op #1 = 14,504,951,808 FLOPs and 28,709,376 bytes;
  // the layer 64,786,268,160 FLOPs and 656,428,544 bytes.
  EXPECT_EQ(g.At(1).flops, 14504951808);
  EXPECT_EQ(g.At(1).bytes, 28709376);
  EXPECT_EQ(g.At(2).flops, 3221225472);
  EXPECT_EQ(g.TotalFlops(), 64786268160);
  EXPECT_EQ(g.TotalBytes(), 656428544);
  // Shapes and dependencies of the MHA block.
  EXPECT_EQ(g.At(2).inputs[0].dims, (std::vector<int64_t>{8, 12, 512, 64}));
  EXPECT_EQ(g.At(2).inputs[0].op, 1);
  EXPECT_EQ(g.At(2).output.dims, (std::vector<int64_t>{8, 12, 512, 512}));
  EXPECT_EQ(g.At(4).inputs[1].source, TensorSource::kMask);
  EXPECT_FALSE(g.At(4).causal);
  EXPECT_EQ(g.At(6).output.dims, (std::vector<int64_t>{8, 512, 768}));
  EXPECT_EQ(g.At(8).inputs[1].source, TensorSource::kLayerInput);  // residual
  EXPECT_EQ(g.At(13).inputs[1].op, 9);                            // residual = LN #9
  EXPECT_TRUE(g.At(1).has_bias);
  EXPECT_EQ(g.AttentionWorkload(), (Workload{8, 512, 12, 64, DType::kF16}));
}

TEST(OpGraph, OpKindsOfEveryModel) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Kinds(Build("bert-large", 1, 128)),
            (V{"GEMM", "BatchGEMM", "Scale", "Mask", "Softmax", "BatchGEMM", "GEMM", "Add",
               "LayerNorm", "GEMM", "GELU", "GEMM", "Add", "LayerNorm"}));
  const OpGraph gpt2 = Build("gpt2-medium", 2, 256);
  EXPECT_EQ(Kinds(gpt2), (V{"LayerNorm", "GEMM", "BatchGEMM", "Scale", "Mask", "Softmax",
                            "BatchGEMM", "GEMM", "Add", "LayerNorm", "GEMM", "GELU", "GEMM",
                            "Add"}));
  EXPECT_EQ(gpt2.part, LayerPart::kDecoder);
  EXPECT_TRUE(gpt2.At(5).causal);
  EXPECT_EQ(gpt2.At(14).inputs[1].op, 9);  // second residual: the first Add's output
  const OpGraph enc = Build("t5-small", 4, 512);
  EXPECT_EQ(Kinds(enc), (V{"RMSNorm", "GEMM", "BatchGEMM", "Mask", "Softmax", "BatchGEMM",
                           "GEMM", "Add", "RMSNorm", "GEMM", "ReLU", "GEMM", "Add"}));
  for (const Op& op : enc.ops) EXPECT_FALSE(op.has_bias) << op.name;
  EXPECT_FALSE(enc.At(4).causal);
  const OpGraph dec = Build("t5-base", 4, 512, LayerPart::kDecoder);
  EXPECT_EQ(Kinds(dec), (V{"RMSNorm", "GEMM", "BatchGEMM", "Mask", "Softmax", "BatchGEMM", "GEMM",
                           "Add", "RMSNorm", "GEMM", "GEMM", "BatchGEMM", "Mask", "Softmax",
                           "BatchGEMM", "GEMM", "Add", "RMSNorm", "GEMM", "ReLU", "GEMM", "Add"}));
  EXPECT_TRUE(dec.At(4).causal);    // self-attention
  EXPECT_FALSE(dec.At(13).causal);  // cross-attention
  EXPECT_EQ(dec.At(11).inputs[0].source, TensorSource::kEncoderOutput);
  EXPECT_EQ(dec.At(12).inputs[0].op, 10);  // Q from the decoder
  EXPECT_EQ(dec.At(12).inputs[1].op, 11);  // K from the encoder projection
  EXPECT_EQ(dec.At(15).inputs[1].op, 11);  // V likewise
  // T5: no Scale, so QK^T then Mask; the RMSNorm reads one scale vector.
  EXPECT_EQ(dec.At(1).bytes, 2 * (2 * 4 * 512 * 768 + 768));
  EXPECT_EQ(dec.At(1).flops, 4 * 4 * 512 * 768);
}

TEST(OpGraph, SeparateBiasOpsFollowTheirGemm) {
  const OpGraph g = Build("bert-base", 1, 128, std::nullopt, true);
  ASSERT_EQ(g.Size(), 18);
  EXPECT_EQ(g.At(1).kind, OpKind::kGemm);
  EXPECT_FALSE(g.At(1).has_bias);
  EXPECT_EQ(g.At(2).kind, OpKind::kBias);
  EXPECT_EQ(g.At(2).inputs[0].op, 1);
  EXPECT_EQ(g.At(2).flops, 128 * 2304);
  EXPECT_EQ(g.At(2).bytes, 2 * (2 * 128 * 2304 + 2304));
  // The GEMM without its bias: 2MNK only.
  EXPECT_EQ(g.At(1).flops, 2 * 128 * 768 * 2304);
  // T5 has no biases: nothing to separate.
  EXPECT_EQ(Build("t5-small", 1, 64, std::nullopt, true).Size(), 13);
}

TEST(OpGraph, F32DoublesTheBytes) {
  GraphRequest r;
  r.model = *FindModelPreset("bert-small");
  r.batch = 2;
  r.seq_len = 100;
  auto f16 = BuildLayerGraph(r);
  r.dtype = DType::kF32;
  auto f32 = BuildLayerGraph(r);
  ASSERT_TRUE(f16.IsOk() && f32.IsOk());
  EXPECT_EQ(f32->TotalBytes(), 2 * f16->TotalBytes());
  EXPECT_EQ(f32->TotalFlops(), f16->TotalFlops());
}

TEST(OpGraph, BadRequestsNameTheField) {
  GraphRequest r;
  r.model = *FindModelPreset("gpt2-small");
  r.batch = 0;
  auto g = BuildLayerGraph(r);
  ASSERT_FALSE(g.IsOk());
  EXPECT_EQ(g.Message(), "batch: expected 1..65536, got 0");
  r.batch = 1;
  r.seq_len = 40000;
  EXPECT_EQ(BuildLayerGraph(r).Message(), "seq_len: expected 1..32768, got 40000");
  r.seq_len = 32768;
  r.batch = 256;
  EXPECT_NE(BuildLayerGraph(r).Message().find("batch * seq_len: expected at most 4194304"),
            std::string::npos);
  r.batch = 1;
  r.part = LayerPart::kEncoder;
  EXPECT_EQ(BuildLayerGraph(r).Message(), "layer: gpt2 has decoder layers only, got encoder");
  r.part.reset();
  r.model.heads = 0;
  EXPECT_EQ(BuildLayerGraph(r).Message(), "gpt2-small: heads: expected 1..1024, got 0");
}

}  // namespace
