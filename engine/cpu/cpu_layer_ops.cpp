// CpuBackend's layer ops (engine/layer_ops.h) on fp32 host buffers, by the reference of
// reference.h: a fused call computes exactly what its unfused sequence computes (in double
// where the reference does), so the layer runner's CPU result is the ground truth a GPU layer
// is checked against (engine/run/, `stof run --check`). Buffers may alias where layer_ops.h
// allows it (out == residual, out == x): every op reads a row completely before writing it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/reference.h"

namespace stof::engine {

namespace {
const float* F(const void* p) { return static_cast<const float*>(p); }
float* F(void* p) { return static_cast<float*>(p); }
}  // namespace

Status CpuBackend::RunGemm(const GemmCall& c) {
  STOF_RETURN_IF_ERROR(ValidateGemmCall(c));
  // LinearEpilogue reads residual[i, j] after computing row i's dot products: out may alias it.
  std::vector<float> row(static_cast<size_t>(c.n));
  for (int64_t i = 0; i < c.m; ++i) {
    cpu::LinearEpilogue(F(c.a) + i * c.k, F(c.w), F(c.bias), c.act,
                        c.residual ? F(c.residual) + i * c.n : nullptr, row.data(), 1, c.n, c.k);
    std::copy(row.begin(), row.end(), F(c.out) + i * c.n);
  }
  return Status::Ok();
}

Status CpuBackend::RunBatchedGemm(const BatchedGemmCall& c) {
  STOF_RETURN_IF_ERROR(ValidateBatchedGemmCall(c));
  for (int64_t i = 0; i < c.batch; ++i)
    cpu::Gemm(F(c.a) + i * c.m * c.k, F(c.b) + i * c.k * c.n, F(c.c) + i * c.m * c.n, c.m, c.n,
              c.k, false, c.trans_b, c.alpha, 0.0f);
  return Status::Ok();
}

Status CpuBackend::RunEpilogue(const EpilogueCall& c) {
  STOF_RETURN_IF_ERROR(ValidateEpilogueCall(c));
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < c.cols; ++j) {
      const int64_t i = r * c.cols + j;
      double v = F(c.x)[i] + (c.bias ? F(c.bias)[j] : 0.0f);
      v = Activate(c.act, v);
      if (c.residual) v += F(c.residual)[i];
      F(c.out)[i] = static_cast<float>(v);
    }
  return Status::Ok();
}

Status CpuBackend::RunNorm(const NormCall& c) {
  STOF_RETURN_IF_ERROR(ValidateNormCall(c));
  if (c.sum_out) {
    EpilogueCall e;
    e.rows = c.rows, e.cols = c.cols, e.x = c.x, e.bias = c.bias, e.residual = c.residual;
    e.out = c.sum_out;
    STOF_RETURN_IF_ERROR(RunEpilogue(e));
    cpu::BiasAddNorm(F(c.sum_out), nullptr, nullptr, F(c.gamma), F(c.beta), F(c.out), c.rows,
                     c.cols, c.eps);
    return Status::Ok();
  }
  cpu::BiasAddNorm(F(c.x), F(c.bias), F(c.residual), F(c.gamma), F(c.beta), F(c.out), c.rows,
                   c.cols, c.eps);
  return Status::Ok();
}

Status CpuBackend::RunGemmNorm(const GemmNormCall& c) {
  STOF_RETURN_IF_ERROR(ValidateGemmNormCall(c));
  std::vector<float> y(static_cast<size_t>(c.m * c.n));
  cpu::LinearEpilogue(F(c.a), F(c.w), F(c.bias), Activation::kNone, F(c.residual), y.data(), c.m,
                      c.n, c.k);
  cpu::BiasAddNorm(y.data(), nullptr, nullptr, F(c.gamma), F(c.beta), F(c.out), c.m, c.n, c.eps);
  return Status::Ok();
}

Status CpuBackend::RunGemmChain(const GemmChainCall& c) {
  STOF_RETURN_IF_ERROR(ValidateGemmChainCall(c));
  const auto stride = [](int64_t s, int64_t packed) { return s < 0 ? packed : s; };
  const int64_t sa = stride(c.stride_a, c.m * c.k), sb = stride(c.stride_b, c.k * c.n);
  const int64_t sd = stride(c.stride_d, c.n * c.h), se = stride(c.stride_e, c.m * c.h);
  std::vector<float> mid(static_cast<size_t>(c.m * c.n));
  for (int64_t i = 0; i < c.batch; ++i) {
    cpu::LinearEpilogue(F(c.a) + i * sa, F(c.b) + i * sb, F(c.bias1), c.act, nullptr, mid.data(),
                        c.m, c.n, c.k);
    cpu::LinearEpilogue(mid.data(), F(c.d) + i * sd, F(c.bias2), Activation::kNone, nullptr,
                        F(c.e) + i * se, c.m, c.h, c.n);
  }
  return Status::Ok();
}

Status CpuBackend::RunScores(const ScoresCall& c) {
  STOF_RETURN_IF_ERROR(ValidateScoresCall(c));
  const int64_t L = c.seq_len, n = c.bh * L * L;
  const float* x = F(c.x);
  float* out = F(c.out);
  switch (c.op) {
    case ScoreOp::kScale:
      for (int64_t i = 0; i < n; ++i) out[i] = x[i] * c.scale;
      return Status::Ok();
    case ScoreOp::kMask:
      for (int64_t h = 0; h < c.bh; ++h)
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < L; ++j) {
            const int64_t i = (h * L + r) * L + j;
            out[i] = c.mask->Get(r, j) ? x[i] : -std::numeric_limits<float>::infinity();
          }
      return Status::Ok();
    case ScoreOp::kSoftmax:
      for (int64_t r = 0; r < c.bh * L; ++r) {
        const float* xr = x + r * L;
        float* o = out + r * L;
        if (std::all_of(xr, xr + L, [](float v) { return std::isinf(v) && v < 0; })) {
          std::fill(o, o + L, 0.0f);  // nothing attended: zeros, never NaN
          continue;
        }
        if (o != xr) std::copy(xr, xr + L, o);
        cpu::Softmax(o, 1, L);
      }
      return Status::Ok();
    default:
      if (out != x) std::copy(x, x + n, out);
      return cpu::ScaleMaskSoftmax(out, c.bh, L, *c.mask, c.scale);
  }
}

Status CpuBackend::RunHeads(const HeadsCall& c) {
  STOF_RETURN_IF_ERROR(ValidateHeadsCall(c));
  if (c.split)
    cpu::SplitHeads(F(c.src), c.src_row_stride, c.col_offset, F(c.dst), c.batch, c.seq_len,
                    c.heads, c.head_dim);
  else
    cpu::MergeHeads(F(c.src), F(c.dst), c.batch, c.seq_len, c.heads, c.head_dim);
  return Status::Ok();
}

}  // namespace stof::engine
