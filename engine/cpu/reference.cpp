// CPU reference ops (see reference.h): fp32 in and out, double accumulation everywhere.
// Used by CpuBackend and by every GPU kernel test as the ground truth, so clarity wins over
// speed except in MaskedAttention, which tests run at L = 1024: it walks each mask row's set
// bits word by word, and builds those column lists once per mask row, not per (batch, head).
// Invariants: inputs are row-major and contiguous; outputs are fully written (no NaN from
// fully masked rows).
#include "engine/cpu/reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace stof::engine::cpu {

namespace {

// Four independent partial sums: without -ffast-math the compiler keeps a plain loop as one
// serial chain of dependent double adds, which four chains overlap. Only the summation order
// differs.
double Dot(const double* a, const float* b, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t t = 0;
  for (; t + 4 <= n; t += 4) {
    s0 += a[t] * b[t];
    s1 += a[t + 1] * b[t + 1];
    s2 += a[t + 2] * b[t + 2];
    s3 += a[t + 3] * b[t + 3];
  }
  for (; t < n; ++t) s0 += a[t] * b[t];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

Status MaskedAttention(const float* q, const float* k, const float* v, float* o,
                       const Workload& w, const Mask& mask, float scale_in) {
  STOF_RETURN_IF_ERROR(w.Validate("workload"));
  if (mask.Rows() != w.QLen() || mask.Cols() != w.seq_len) {
    return MakeError("mask: size " + std::to_string(mask.Rows()) + " x " +
                     std::to_string(mask.Cols()) + " does not match workload q_len x seq_len " +
                     std::to_string(w.QLen()) + " x " + std::to_string(w.seq_len));
  }
  if (q == nullptr) return MakeError("attention: q: must not be null");
  if (k == nullptr) return MakeError("attention: k: must not be null");
  if (v == nullptr) return MakeError("attention: v: must not be null");
  if (o == nullptr) return MakeError("attention: o: must not be null");

  const int64_t L = w.seq_len, Lq = w.QLen(), d = w.head_dim;
  const double scale =
      scale_in != 0.0f ? static_cast<double>(scale_in) : 1.0 / std::sqrt(static_cast<double>(d));

  // Attended columns of every row, in increasing order; shared by all (batch, head).
  std::vector<int64_t> row_begin(static_cast<size_t>(Lq) + 1, 0);
  std::vector<int32_t> cols;
  cols.reserve(static_cast<size_t>(mask.Count()));
  for (int64_t r = 0; r < Lq; ++r) {
    const uint64_t* words = mask.RowWords(r);
    for (int64_t wi = 0; wi < mask.WordsPerRow(); ++wi) {
      uint64_t bits = words[wi];
      while (bits != 0) {
        cols.push_back(static_cast<int32_t>(wi * 64 + std::countr_zero(bits)));
        bits &= bits - 1;  // clear the lowest set bit
      }
    }
    row_begin[static_cast<size_t>(r) + 1] = static_cast<int64_t>(cols.size());
  }

  std::vector<double> qi(static_cast<size_t>(d)), acc(static_cast<size_t>(d));
  std::vector<double> s(static_cast<size_t>(L));
  const int64_t heads_total = w.batch * w.heads, group = w.GroupSize();
  for (int64_t bh = 0; bh < heads_total; ++bh) {
    const int64_t bh_kv = bh / group;  // (b * H + h) / group = b * H_kv + h / group
    const float* qh = q + bh * Lq * d;
    const float* kh = k + bh_kv * L * d;
    const float* vh = v + bh_kv * L * d;
    float* oh = o + bh * Lq * d;
    for (int64_t i = 0; i < Lq; ++i) {
      float* out = oh + i * d;
      const int64_t b0 = row_begin[static_cast<size_t>(i)];
      const int64_t b1 = row_begin[static_cast<size_t>(i) + 1];
      if (b0 == b1) {  // fully masked: nothing to attend, output zeros
        std::fill(out, out + d, 0.0f);
        continue;
      }
      for (int64_t t = 0; t < d; ++t) qi[static_cast<size_t>(t)] = qh[i * d + t];
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t e = b0; e < b1; ++e) {
        const float* kj = kh + static_cast<int64_t>(cols[static_cast<size_t>(e)]) * d;
        const double dot = Dot(qi.data(), kj, d) * scale;
        s[static_cast<size_t>(e - b0)] = dot;
        mx = std::max(mx, dot);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double sum = 0;
      for (int64_t e = b0; e < b1; ++e) {
        const double p = std::exp(s[static_cast<size_t>(e - b0)] - mx);
        sum += p;
        const float* vj = vh + static_cast<int64_t>(cols[static_cast<size_t>(e)]) * d;
        for (int64_t t = 0; t < d; ++t) acc[static_cast<size_t>(t)] += p * vj[t];
      }
      const double inv = 1.0 / sum;  // sum >= 1: the max term contributes exp(0)
      for (int64_t t = 0; t < d; ++t)
        out[t] = static_cast<float>(acc[static_cast<size_t>(t)] * inv);
    }
  }
  return Status::Ok();
}

void Gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
          bool trans_a, bool trans_b, float alpha, float beta) {
  if (m <= 0 || n <= 0) return;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = trans_a ? a[p * m + i] : a[i * k + p];
        const double bv = trans_b ? b[j * k + p] : b[p * n + j];
        dot += av * bv;
      }
      double r = static_cast<double>(alpha) * dot;
      // As in BLAS, beta == 0 means C is write-only: whatever it held (even NaN) is ignored.
      if (beta != 0.0f) r += static_cast<double>(beta) * c[i * n + j];
      c[i * n + j] = static_cast<float>(r);
    }
  }
}

void BiasAdd(float* x, const float* bias, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      x[r * cols + c] = static_cast<float>(static_cast<double>(x[r * cols + c]) + bias[c]);
}

void Gelu(float* x, int64_t n) {
  const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    x[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v * inv_sqrt2)));
  }
}

void LayerNorm(const float* x, float* y, const float* gamma, const float* beta, int64_t rows,
               int64_t cols, float eps) {
  if (cols <= 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double mean = 0;
    for (int64_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= static_cast<double>(cols);
    double var = 0;  // biased (divide by cols), as torch.nn.LayerNorm
    for (int64_t c = 0; c < cols; ++c) {
      const double dv = xr[c] - mean;
      var += dv * dv;
    }
    var /= static_cast<double>(cols);
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(eps));
    for (int64_t c = 0; c < cols; ++c)
      yr[c] = static_cast<float>((xr[c] - mean) * inv * gamma[c] + beta[c]);
  }
}

void Softmax(float* x, int64_t rows, int64_t cols) {
  if (cols <= 0) return;
  std::vector<double> e(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    float* xr = x + r * cols;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, static_cast<double>(xr[c]));
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      e[static_cast<size_t>(c)] = std::exp(xr[c] - mx);
      sum += e[static_cast<size_t>(c)];
    }
    for (int64_t c = 0; c < cols; ++c) xr[c] = static_cast<float>(e[static_cast<size_t>(c)] / sum);
  }
}

void ApplyActivation(float* x, int64_t n, Activation act) {
  if (act == Activation::kNone) return;
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(Activate(act, x[i]));
}

void RmsNorm(const float* x, float* y, const float* gamma, int64_t rows, int64_t cols,
             float eps) {
  if (cols <= 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double ms = 0;
    for (int64_t c = 0; c < cols; ++c) ms += static_cast<double>(xr[c]) * xr[c];
    ms /= static_cast<double>(cols);
    const double inv = 1.0 / std::sqrt(ms + static_cast<double>(eps));
    for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(xr[c] * inv * gamma[c]);
  }
}

void LinearEpilogue(const float* a, const float* w, const float* bias, Activation act,
                    const float* residual, float* out, int64_t m, int64_t n, int64_t k) {
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t p = 0; p < k; ++p) {  // i-p-j order: w is read row by row
      const double av = a[i * k + p];
      const float* wp = w + p * n;
      for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += av * wp[j];
    }
    for (int64_t j = 0; j < n; ++j) {
      double v = row[static_cast<size_t>(j)] + (bias ? bias[j] : 0.0);
      v = Activate(act, v);
      if (residual) v += residual[i * n + j];
      out[i * n + j] = static_cast<float>(v);
    }
  }
}

void BiasAddNorm(const float* x, const float* bias, const float* residual, const float* gamma,
                 const float* beta, float* y, int64_t rows, int64_t cols, float eps) {
  std::vector<float> sum(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      double v = x[r * cols + c];
      if (bias) v += bias[c];
      if (residual) v += residual[r * cols + c];
      sum[static_cast<size_t>(c)] = static_cast<float>(v);
    }
    if (beta)
      LayerNorm(sum.data(), y + r * cols, gamma, beta, 1, cols, eps);
    else
      RmsNorm(sum.data(), y + r * cols, gamma, 1, cols, eps);
  }
}

Status ScaleMaskSoftmax(float* s, int64_t bh, int64_t seq_len, const Mask& mask, float scale) {
  if (mask.Rows() != seq_len || mask.Cols() != seq_len)
    return MakeError("mask: expected " + std::to_string(seq_len) + " x " +
                     std::to_string(seq_len) + ", got " + std::to_string(mask.Rows()) + " x " +
                     std::to_string(mask.Cols()));
  const int64_t L = seq_len;
  for (int64_t h = 0; h < bh; ++h) {
    for (int64_t i = 0; i < L; ++i) {
      float* row = s + (h * L + i) * L;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < L; ++j)
        if (mask.Get(i, j)) mx = std::max(mx, static_cast<double>(row[j]) * scale);
      if (mx == -std::numeric_limits<double>::infinity()) {  // nothing attended
        std::fill(row, row + L, 0.0f);
        continue;
      }
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) {
        const double e = mask.Get(i, j) ? std::exp(static_cast<double>(row[j]) * scale - mx) : 0.0;
        row[j] = static_cast<float>(e);
        sum += e;
      }
      for (int64_t j = 0; j < L; ++j) row[j] = static_cast<float>(row[j] / sum);
    }
  }
  return Status::Ok();
}

void SplitHeads(const float* src, int64_t src_row_stride, int64_t col_offset, float* dst,
                int64_t batch, int64_t seq_len, int64_t heads, int64_t head_dim) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t l = 0; l < seq_len; ++l)
        for (int64_t t = 0; t < head_dim; ++t)
          dst[((b * heads + h) * seq_len + l) * head_dim + t] =
              src[(b * seq_len + l) * src_row_stride + col_offset + h * head_dim + t];
}

void MergeHeads(const float* src, float* dst, int64_t batch, int64_t seq_len, int64_t heads,
                int64_t head_dim) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t l = 0; l < seq_len; ++l)
        for (int64_t t = 0; t < head_dim; ++t)
          dst[(b * seq_len + l) * heads * head_dim + h * head_dim + t] =
              src[((b * heads + h) * seq_len + l) * head_dim + t];
}

}  // namespace stof::engine::cpu
