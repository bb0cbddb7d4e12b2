// Host-side checking of MHA kernels against the fp32 CPU reference: seeded random fp16 (or
// bf16) inputs, the threaded reference and the error metric. Used by the GPU tests
// (tests/gpu/mha_test_util.h) and `stof bench|profile mha` (app/cli/cmd_bench.cpp), so both
// judge a kernel by the same rule. CUDA-free, header-only.
//
// Error metric (docs/kernels.md): per query row, max_c |out - ref| / max(max_c |ref|, 1e-3), the
// worst over all rows must stay below kMhaTolerance = 2e-3 (bf16: kMhaToleranceBf16). Normalising
// per row (not by the global max) keeps long rows, whose outputs are small averages, as strict as
// short ones: a dropped or extra key in a 4096-key row moves it by ~1e-4 absolute, invisible
// against a global max near 1 but ~5e-3 of its own row's scale. Expected error: fp16 rounding of
// the output (<= 4.9e-4 of a value) plus fp16 rounding of P before P V (~1e-4 of the row scale).
// The global form max |out - ref| / max |ref| is reported alongside.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/half.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/cpu/reference.h"
#include "engine/mask/mask.h"

namespace stof::kernels {

inline constexpr double kMhaTolerance = 2e-3;
// bf16 keeps 8 significant bits against fp16's 11: its rounding of the output and of P is 4x
// coarser (unit roundoff 2^-9 against 2^-11), so 4x the fp16 tolerance, plus a little.
inline constexpr double kMhaToleranceBf16 = 1e-2;
inline constexpr double kMhaRowFloor = 1e-3;

// The tolerance of a workload's element type.
inline double MhaTolerance(engine::DType dtype) {
  return dtype == engine::DType::kBF16 ? kMhaToleranceBf16 : kMhaTolerance;
}

// fp16 / bf16 <-> fp32 on the host live in the engine (engine/core/half.h).
using engine::Bf16ToFloat;
using engine::FloatToBf16;
using engine::FloatToHalf;
using engine::HalfToFloat;

// A 16-bit element of `dtype` (bf16, else fp16) as a float, and back.
inline float Bits16ToFloat(uint16_t x, engine::DType dtype) {
  return dtype == engine::DType::kBF16 ? Bf16ToFloat(x) : HalfToFloat(x);
}
inline uint16_t FloatToBits16(float f, engine::DType dtype) {
  return dtype == engine::DType::kBF16 ? FloatToBf16(f) : FloatToHalf(f);
}

// splitmix64: the same stream on every platform.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// q, k, v uniform in [-1, 1) rounded to fp16 (or bf16); the fp32 copies hold the rounded
// values, so the reference sees exactly what the kernel sees.
struct MhaInputs {
  std::vector<uint16_t> q, k, v;
  std::vector<float> qf, kf, vf;
};

// `elements` values of q (and, unless kv_elements >= 0 says otherwise, of k and v: grouped
// heads or another key length make them differ).
inline MhaInputs RandomInputs(int64_t elements, uint64_t seed,
                              engine::DType dtype = engine::DType::kF16,
                              int64_t kv_elements = -1) {
  MhaInputs in;
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 1;
  auto fill = [&](std::vector<uint16_t>& h, std::vector<float>& f, int64_t n) {
    h.resize(static_cast<size_t>(n));
    f.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const double u = static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
      h[static_cast<size_t>(i)] = FloatToBits16(static_cast<float>(2.0 * u - 1.0), dtype);
      f[static_cast<size_t>(i)] = Bits16ToFloat(h[static_cast<size_t>(i)], dtype);
    }
  };
  const int64_t kv = kv_elements >= 0 ? kv_elements : elements;
  fill(in.q, in.qf, elements);
  fill(in.k, in.kf, kv);
  fill(in.v, in.vf, kv);
  return in;
}

// The q (and o) and the k (and v) element counts of a workload: [B, H, L_q, d] and
// [B, H_kv, L_k, d].
inline int64_t QueryElements(const engine::Workload& w) {
  return w.batch * w.heads * w.QLen() * w.head_dim;
}
inline int64_t KeyElements(const engine::Workload& w) {
  return w.batch * w.KvHeads() * w.seq_len * w.head_dim;
}

// cpu::MaskedAttention, one thread per (batch, query head) slice (each slice is contiguous;
// query slice s reads key/value slice s / group).
inline engine::Status ThreadedReference(const MhaInputs& in, const engine::Workload& w,
                                        const engine::Mask& mask, std::vector<float>& out) {
  const int64_t slice = w.QLen() * w.head_dim, kv_slice = w.seq_len * w.head_dim;
  const int64_t slices = w.batch * w.heads, group = w.GroupSize();
  out.assign(static_cast<size_t>(slice * slices), 0.f);
  engine::Workload one = w;
  one.batch = 1;
  one.heads = 1;
  one.kv_heads = 0;
  one.dtype = engine::DType::kF32;
  std::vector<engine::Status> results(static_cast<size_t>(slices));
  std::vector<std::thread> threads;
  const int64_t hw = std::max<int64_t>(1, std::thread::hardware_concurrency());
  for (int64_t first = 0; first < slices; first += hw) {
    threads.clear();
    for (int64_t s = first; s < std::min(slices, first + hw); ++s) {
      threads.emplace_back([&, s] {
        const size_t off = static_cast<size_t>(s * slice);
        const size_t kv_off = static_cast<size_t>(s / group * kv_slice);
        results[static_cast<size_t>(s)] = engine::cpu::MaskedAttention(
            in.qf.data() + off, in.kf.data() + kv_off, in.vf.data() + kv_off, out.data() + off,
            one, mask);
      });
    }
    for (auto& t : threads) t.join();
  }
  for (auto& r : results)
    if (!r.IsOk()) return r;
  return engine::Status::Ok();
}

struct MhaError {
  double row_err = 0;      // the metric above, worst row
  double global_err = 0;   // max |out - ref| / max |ref|
  int64_t worst_row = -1;  // flat row index (b * H + h) * L + i
  int64_t worst_col = -1;
  float worst_out = 0, worst_ref = 0;
  int64_t nonzero_empty_rows = 0;  // rows with nothing attended whose output is not exactly 0
};

inline MhaError CompareMha(const std::vector<uint16_t>& out, const std::vector<float>& ref,
                           const engine::Workload& w, const std::vector<uint8_t>& empty_row) {
  MhaError e;
  const int64_t d = w.head_dim, L = w.QLen();  // query rows per (batch, head)
  const int64_t rows = w.batch * w.heads * L;
  double max_abs_err = 0, max_abs_ref = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* rr = ref.data() + r * d;
    const uint16_t* ro = out.data() + r * d;
    double row_max = 0, row_err = 0;
    int64_t col = 0;
    for (int64_t c = 0; c < d; ++c) {
      const double o = Bits16ToFloat(ro[c], w.dtype);
      const double diff = std::fabs(o - rr[c]);
      row_max = std::max(row_max, std::fabs(static_cast<double>(rr[c])));
      if (!(diff <= row_err)) {  // also catches NaN
        row_err = diff;
        col = c;
      }
    }
    if (empty_row[static_cast<size_t>(r % L)]) {
      for (int64_t c = 0; c < d; ++c)
        if (ro[c] != 0 && ro[c] != 0x8000u) {  // +0 or -0
          ++e.nonzero_empty_rows;
          break;
        }
    }
    max_abs_err = std::max(max_abs_err, row_err);
    max_abs_ref = std::max(max_abs_ref, row_max);
    const double rel = row_err / std::max(row_max, kMhaRowFloor);
    if (!(rel <= e.row_err)) {
      e.row_err = rel;
      e.worst_row = r;
      e.worst_col = col;
      e.worst_out = Bits16ToFloat(ro[col], w.dtype);
      e.worst_ref = rr[col];
    }
  }
  e.global_err = max_abs_err / std::max(max_abs_ref, 1e-30);
  return e;
}

// `n` fp16 (or bf16) values uniform in [-1, 1) (seeded), for inputs that need no fp32 copy
// (timing).
inline std::vector<uint16_t> RandomValues16(int64_t n, uint64_t seed,
                                            engine::DType dtype = engine::DType::kF16) {
  std::vector<uint16_t> h(static_cast<size_t>(n));
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 1;
  for (auto& x : h) {
    const double u = static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    x = FloatToBits16(static_cast<float>(2.0 * u - 1.0), dtype);
  }
  return h;
}

// Per mask row: 1 when the row attends nothing (its output must be exactly zero).
inline std::vector<uint8_t> EmptyRows(const engine::Mask& mask) {
  std::vector<uint8_t> empty(static_cast<size_t>(mask.Rows()));
  for (int64_t r = 0; r < mask.Rows(); ++r) empty[static_cast<size_t>(r)] = mask.CountRow(r) == 0;
  return empty;
}

}  // namespace stof::kernels
