// Re-fits the analytical segment model's H100 constants (engine/tune/segment_model.cpp) to every
// measured sample (tests/engine/segment_model_samples.h): Nelder-Mead on the log constants,
// restarted, minimising the mean squared log ratio over all samples; prints the constants and
// their accuracy per data set. A tool, not a test: run it after new measurements
// (build/tests/bench/stof_segment_model_refit; STOF_FIT_OCC_EXP=x holds the Eq. 2 occupancy
// exponent at x), then copy the constants into segment_model.cpp and the accuracy into
// docs/tuner-model.md. Not registered with ctest.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "segment_model_samples.h"

using namespace stof::engine;
using namespace stof::engine::testing::segment_model;

TEST(SegmentModelFit, RefitConstants) {
  const auto samples = AllSamples();
  std::vector<std::string> sets = {"run fused", "run op by op", "ladder", "chain", "sweep",
                                   "gemm_norm"};
  using Vec = std::vector<double>;
  const SegmentModelConstants base = H100SegmentConstants();
  // STOF_FIT_OCC_EXP=x holds the Eq. 2 occupancy exponent at x (to see what it costs).
  const char* fixed_occ_exp = std::getenv("STOF_FIT_OCC_EXP");
  auto unpack = [&](const Vec& x) {
    SegmentModelConstants c = base;
    c.bw_eff = std::exp(x[0]), c.tc_eff = std::exp(x[1]), c.launch_us = std::exp(x[2]);
    c.segment_us = std::exp(x[3]), c.mha_bw_eff = std::exp(x[4]), c.mha_tc_eff = std::exp(x[5]);
    c.mha_occ_exp = fixed_occ_exp ? std::atof(fixed_occ_exp) : x[6];
    c.chain_scale = std::exp(x[7]);
    c.gemm_norm_block_bytes_per_s = std::exp(x[8]);
    c.l2_speedup = std::exp(x[9]), c.mha_row_step_eff = std::exp(x[10]);
    return c;
  };
  auto cost = [&](const Vec& x) {
    const SegmentModelConstants c = unpack(x);
    if (c.bw_eff > 1 || c.tc_eff > 1 || c.mha_tc_eff > 1 || c.l2_speedup < 1) return 1e9;
    // Every measurement weighs the same (the constants of a small set, gemm_norm's, are
    // its own, so it still fits).
    const Vec v = AbsLogs(samples, "", c);
    double sq = 0;
    for (double r : v) sq += r * r;
    return sq / static_cast<double>(v.size());
  };
  Vec x0 = {std::log(base.bw_eff), std::log(base.tc_eff), std::log(base.launch_us),
            std::log(base.segment_us), std::log(base.mha_bw_eff), std::log(base.mha_tc_eff),
            base.mha_occ_exp, std::log(base.chain_scale),
            std::log(base.gemm_norm_block_bytes_per_s), std::log(base.l2_speedup),
            std::log(base.mha_row_step_eff)};
  const size_t n = x0.size();
  std::vector<Vec> simplex(n + 1, x0);
  for (size_t i = 0; i < n; ++i) simplex[i + 1][i] += 0.2;
  Vec f(n + 1);
  for (size_t i = 0; i <= n; ++i) f[i] = cost(simplex[i]);
  for (int it = 0; it < 3000; ++it) {
    if (it % 600 == 599) {  // restart around the best point: Nelder-Mead stalls in 11 dimensions
      size_t b = 0;
      for (size_t i = 0; i <= n; ++i)
        if (f[i] < f[b]) b = i;
      const Vec keep = simplex[b];
      for (size_t i = 0; i <= n; ++i) {
        simplex[i] = keep;
        if (i > 0) simplex[i][i - 1] += 0.1;
        f[i] = cost(simplex[i]);
      }
    }
    std::vector<size_t> idx(n + 1);
    for (size_t i = 0; i <= n; ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return f[a] < f[b]; });
    std::vector<Vec> s2;
    Vec f2;
    for (size_t i : idx) s2.push_back(simplex[i]), f2.push_back(f[i]);
    simplex = s2, f = f2;
    Vec c(n, 0);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) c[j] += simplex[i][j] / static_cast<double>(n);
    auto along = [&](double t) {
      Vec y(n);
      for (size_t j = 0; j < n; ++j) y[j] = c[j] + t * (simplex[n][j] - c[j]);
      return y;
    };
    Vec xr = along(-1);
    const double fr = cost(xr);
    if (fr < f[0]) {
      Vec xe = along(-2);
      const double fe = cost(xe);
      if (fe < fr) simplex[n] = xe, f[n] = fe;
      else simplex[n] = xr, f[n] = fr;
    } else if (fr < f[n - 1]) {
      simplex[n] = xr, f[n] = fr;
    } else {
      Vec xc = along(0.5);
      const double fc = cost(xc);
      if (fc < f[n]) {
        simplex[n] = xc, f[n] = fc;
      } else {
        for (size_t i = 1; i <= n; ++i) {
          for (size_t j = 0; j < n; ++j) simplex[i][j] = simplex[0][j] + 0.5 * (simplex[i][j] - simplex[0][j]);
          f[i] = cost(simplex[i]);
        }
      }
    }
    if (it % 300 == 0) std::printf("iteration %d cost %.5f\n", it, f[0]);
  }
  size_t best = 0;
  for (size_t i = 0; i <= n; ++i)
    if (f[i] < f[best]) best = i;
  const SegmentModelConstants c = unpack(simplex[best]);
  std::printf("l2_speedup %.4f mha_row_step_eff %.4f\n", c.l2_speedup, c.mha_row_step_eff);
  std::printf("bw_eff %.4f tc_eff %.4f launch_us %.3f segment_us %.3f mha_bw_eff %.4f "
              "mha_tc_eff %.4f mha_occ_exp %.4f chain_scale %.4f gemm_norm_block_bytes_per_s "
              "%.4g (cost %.5f)\n",
              c.bw_eff, c.tc_eff, c.launch_us, c.segment_us, c.mha_bw_eff, c.mha_tc_eff,
              c.mha_occ_exp, c.chain_scale, c.gemm_norm_block_bytes_per_s, f[best]);
  int pairs = 0;
  const double ordered = SweepPairsOrdered(samples, c, &pairs);
  std::printf("sweep pairs ordered as measured: %.3f of %d\n", ordered, pairs);
  for (const auto& set : sets) {
    Accuracy a;
    AbsLogs(samples, set, c, &a, true);
    std::printf("%-13s n=%3zu median |ratio| %.3f worst %.2fx (%s)\n", set.c_str(), a.n,
                std::exp(a.median_abs_log), a.worst_ratio, a.worst.c_str());
  }
}
