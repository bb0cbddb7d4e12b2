// The H100 measurements the analytical segment model (engine/tune/segment_model.h) was fitted
// to, as samples that predict themselves under given constants: every segment of the `stof run`
// files copied into tests/data/segment_model/ (fused and op by op), the fusion ladder, `stof
// bench chain`, the block-wise config sweep and the two gemm_norm figures (tests/data/README.md
// says where each was copied from). Used by tests/engine/segment_model_test.cpp (the model's
// accuracy) and tests/bench/segment_model_refit.cpp (the fit). Loading reports a bad file as a
// gtest failure, so both run under gtest.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "engine/tune/segment_model.h"

namespace stof::engine::testing::segment_model {

extern const std::string kBenchDir;   // tests/data/segment_model/
extern const std::string kSweepFile;  // its config_sweep.txt

// The built-in H100 spec the constants were fitted against.
DeviceSpec H100();
// The paper-default mask of a pattern, generated once per (pattern, L).
std::shared_ptr<const Mask> SharedMask(const std::string& pattern, int64_t L);
std::string ReadText(const std::string& path);

using Predictor = std::function<Expected<SegmentPrediction>(const SegmentModelConstants&)>;
struct Sample {
  std::string set;    // "run fused", "run op by op", "ladder", "chain", "sweep", "gemm_norm"
  std::string label;  // what was measured
  double measured_us = 0;
  Predictor predict;
};

std::vector<Sample> RunSamples();
std::vector<Sample> LadderSamples();
std::vector<Sample> ChainSamples();
std::vector<Sample> SweepSamples();
std::vector<Sample> GemmNormSamples();
std::vector<Sample> AllSamples();

struct Accuracy {
  size_t n = 0;
  double median_abs_log = 0;  // median |ln(predicted / measured)|
  double worst_ratio = 1;     // max over samples of max(p/m, m/p)
  std::string worst;
};

// |ln(pred / measured)| per sample of `set` ("" = all); a prediction error fails the test.
std::vector<double> AbsLogs(const std::vector<Sample>& samples, const std::string& set,
                            const SegmentModelConstants& k, Accuracy* acc = nullptr,
                            bool print = false);

// The config sweep as a tuner sees it: per workload, the pairs of block-wise settings whose
// measured times differ by more than 5 %, and the fraction the model orders the same way.
double SweepPairsOrdered(const std::vector<Sample>& samples, const SegmentModelConstants& k,
                         int* pairs = nullptr);

}  // namespace stof::engine::testing::segment_model
