// Names, classes and totals of ops and op graphs (see op.h).
#include "engine/graph/op.h"

#include "engine/core/json_io.h"

namespace stof::engine {

const char* OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kGemm: return "GEMM";
    case OpKind::kBatchGemm: return "BatchGEMM";
    case OpKind::kBias: return "Bias";
    case OpKind::kAdd: return "Add";
    case OpKind::kLayerNorm: return "LayerNorm";
    case OpKind::kRmsNorm: return "RMSNorm";
    case OpKind::kGelu: return "GELU";
    case OpKind::kRelu: return "ReLU";
    case OpKind::kScale: return "Scale";
    case OpKind::kMask: return "Mask";
    case OpKind::kSoftmax: return "Softmax";
  }
  return "?";
}

const char* OpClassName(OpClass c) { return c == OpClass::kCI ? "CI" : "MI"; }

OpClass ClassOf(OpKind k) {
  return (k == OpKind::kGemm || k == OpKind::kBatchGemm) ? OpClass::kCI : OpClass::kMI;
}

const char* TensorSourceName(TensorSource s) {
  switch (s) {
    case TensorSource::kOp: return "op";
    case TensorSource::kLayerInput: return "layer_input";
    case TensorSource::kEncoderOutput: return "encoder";
    case TensorSource::kWeight: return "weight";
    case TensorSource::kMask: return "mask";
  }
  return "?";
}

int64_t TensorRef::Elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const char* ModelFamilyName(ModelFamily f) {
  switch (f) {
    case ModelFamily::kBert: return "bert";
    case ModelFamily::kGpt2: return "gpt2";
    case ModelFamily::kT5: return "t5";
  }
  return "?";
}

Expected<ModelFamily> ParseModelFamily(const std::string& s) {
  if (s == "bert") return ModelFamily::kBert;
  if (s == "gpt2") return ModelFamily::kGpt2;
  if (s == "t5") return ModelFamily::kT5;
  return MakeError("model_type: expected one of bert, gpt2, t5, got '" + TextForMessage(s) + "'");
}

const char* LayerPartName(LayerPart p) { return p == LayerPart::kEncoder ? "encoder" : "decoder"; }

Expected<LayerPart> ParseLayerPart(const std::string& s) {
  if (s == "encoder") return LayerPart::kEncoder;
  if (s == "decoder") return LayerPart::kDecoder;
  return MakeError("layer: expected encoder or decoder, got '" + s + "'");
}

int64_t OpGraph::TotalFlops() const {
  int64_t t = 0;
  for (const Op& op : ops) t += op.flops;
  return t;
}

int64_t OpGraph::TotalBytes() const {
  int64_t t = 0;
  for (const Op& op : ops) t += op.bytes;
  return t;
}

Workload OpGraph::AttentionWorkload() const {
  Workload w;
  w.batch = batch;
  w.seq_len = seq_len;
  w.heads = heads;
  w.head_dim = head_dim;
  w.dtype = dtype;
  return w;
}

}  // namespace stof::engine
