// Op and OpGraph: one transformer layer as numbered operators (ops #1..#N), each with its kind,
// class (compute-intensive CI or memory-intensive MI), tensors, FLOPs and minimum DRAM bytes.
// Built by graph_build.h for BERT, GPT-2 and T5 (numbering in docs/fusion.md); read by the
// fusion schemes (engine/fusion/), `stof graph`, and later the tuner and `stof run`.
// Invariants of a built graph: ops[i].number == i + 1; an input produced inside the layer
// names an earlier op (source kOp, 1 <= op < number); flops and bytes follow op_cost.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"

namespace stof::engine {

enum class OpKind {
  kGemm,       // activation x weight (+ bias when Op::has_bias): a Linear layer
  kBatchGemm,  // batched activation x activation (QK^T, PV), one product per (batch, head)
  kBias,       // + per-column vector
  kAdd,        // + same-shape tensor (residual)
  kLayerNorm,
  kRmsNorm,
  kGelu,
  kRelu,
  kScale,      // x * 1/sqrt(d)
  kMask,       // masked scores (the user's mask, AND causal where the op says so)
  kSoftmax,    // row-wise
};
enum class OpClass { kCI, kMI };

const char* OpKindName(OpKind k);  // "GEMM", "BatchGEMM", "Bias", ..., "Softmax"
const char* OpClassName(OpClass c);  // "CI", "MI"
// GEMM and BatchGEMM are compute-intensive; every other kind is memory-intensive.
OpClass ClassOf(OpKind k);

// Where an op input comes from.
enum class TensorSource {
  kOp,            // the output of an earlier op of this layer (TensorRef::op)
  kLayerInput,    // the layer's input hidden states
  kEncoderOutput, // T5 decoder cross-attention: the encoder's final hidden states
  kWeight,        // parameters (weights, biases, norm scales)
  kMask,          // the user's attention mask (L x L)
};
const char* TensorSourceName(TensorSource s);  // "op", "layer_input", "encoder", "weight", "mask"

struct TensorRef {
  std::string name;           // "x", "qkv", "w_qkv", "scores", ...
  std::vector<int64_t> dims;  // row-major shape
  TensorSource source = TensorSource::kOp;
  int op = 0;                 // producing op number when source == kOp, else 0
  int64_t Elements() const;
};

struct Op {
  int number = 0;          // 1-based position in the layer
  OpKind kind = OpKind::kGemm;
  std::string name;        // role in the layer: "qkv_proj", "attn_scores", "ln_attn", ...
  bool has_bias = false;   // GEMM only: the Linear's bias is added in the GEMM (see docs)
  bool causal = false;     // Mask only: causal mask AND the user's mask
  std::vector<TensorRef> inputs;
  TensorRef output;
  int64_t flops = 0;
  int64_t bytes = 0;       // minimum DRAM bytes: inputs + weights + output once, at dtype size

  OpClass Class() const { return ClassOf(kind); }
};

enum class ModelFamily { kBert, kGpt2, kT5 };
const char* ModelFamilyName(ModelFamily f);  // "bert", "gpt2", "t5"
Expected<ModelFamily> ParseModelFamily(const std::string& s);  // the names above

// Which layer of the model: BERT is an encoder, GPT-2 a decoder, T5 has both.
enum class LayerPart { kEncoder, kDecoder };
const char* LayerPartName(LayerPart p);  // "encoder", "decoder"
Expected<LayerPart> ParseLayerPart(const std::string& s);

struct OpGraph {
  std::string model;       // preset or config name, for display
  ModelFamily family = ModelFamily::kBert;
  LayerPart part = LayerPart::kEncoder;
  int64_t batch = 0, seq_len = 0, hidden = 0, heads = 0, head_dim = 0, ffn = 0;
  int64_t layers = 0;      // the model's layer count (its config), for whole-model runs
  DType dtype = DType::kF16;
  std::vector<Op> ops;

  int Size() const { return static_cast<int>(ops.size()); }
  const Op& At(int number) const { return ops[static_cast<size_t>(number - 1)]; }  // 1-based
  int64_t TotalFlops() const;
  int64_t TotalBytes() const;
  // The attention problem of the layer's (self-)attention, for kernel selection.
  Workload AttentionWorkload() const;
};

}  // namespace stof::engine
