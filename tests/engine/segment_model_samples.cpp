// The measured samples of the segment model's fit (segment_model_samples.h).
#include "segment_model_samples.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/mask/mask_spec.h"
#include "test_graphs.h"
#include "test_masks.h"

namespace stof::engine::testing::segment_model {

using stof::engine::testing::PatternMask;
using stof::engine::testing::PresetGraph;

// Measured inputs (tests/data/README.md says where each was copied from).
extern const std::string kBenchDir;
const std::string kBenchDir = std::string(STOF_SOURCE_DIR) + "/tests/data/segment_model/";
extern const std::string kSweepFile;
const std::string kSweepFile = kBenchDir + "config_sweep.txt";

DeviceSpec H100() {
  auto d = FindBuiltinDevice("h100");
  EXPECT_TRUE(d.IsOk()) << d.Message();
  return *d;
}

// The paper-default mask of a pattern, generated once per (pattern, L).
std::shared_ptr<const Mask> SharedMask(const std::string& pattern, int64_t L) {
  static std::map<std::pair<std::string, int64_t>, std::shared_ptr<const Mask>> cache;
  auto& slot = cache[{pattern, L}];
  if (!slot) slot = std::make_shared<const Mask>(PatternMask(pattern, L));
  return slot;
}



std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// ---- The measured data set ---------------------------------------------------------------

// Segments "a-b" or "a".
static Segment ParseOps(const std::string& ops) {
  const auto dash = ops.find('-');
  if (dash == std::string::npos) return {std::stoi(ops), std::stoi(ops)};
  return {std::stoi(ops.substr(0, dash)), std::stoi(ops.substr(dash + 1))};
}

// The fused MHA of these runs: ChooseMhaConfig's pick, Eq. 2 within the preferred set =
// block-wise 64 x 64, 4 warps at every shape (docs/kernels.md, "Choosing parameters").
static SegmentChoice RunChoice() {
  SegmentChoice c;
  c.mha_config = MhaConfig{MhaKernel::kBlockWise, 64, 64, 4};
  return c;
}

// tests/data/segment_model/run_<model>_<B>x<L>.json (docs/bench/2026-11-22-fusion-h100/): each
// segment of the default scheme, and per segment the summed single-op segments of the op-by-op run (`versus`).
std::vector<Sample> RunSamples() {
  std::vector<Sample> out;
  for (const char* model : {"bert-small", "bert-base", "bert-large"}) {
    for (auto [b, l] : {std::pair<int64_t, int64_t>{1, 128}, {8, 512}, {16, 2048}}) {
      const std::string name = std::string("run_") + model + "_" + std::to_string(b) + "x" +
                               std::to_string(l) + ".json";
      const auto j = nlohmann::json::parse(ReadText(kBenchDir + name));
      auto g = std::make_shared<const OpGraph>(PresetGraph(model, b, l));
      auto mask = SharedMask("bigbird", l);
      EXPECT_EQ(mask->HashHex(), j.at("mask").at("hash").get<std::string>())
          << name << ": the regenerated mask differs from the measured one";
      const std::string tag = std::string(model) + " " + std::to_string(b) + "x" + std::to_string(l);
      for (const auto& seg : j.at("segments")) {
        const Segment s = ParseOps(seg.at("ops").get<std::string>());
        out.push_back({"run fused", tag + " " + SegmentLabel(s) + " " +
                                        seg.at("template").get<std::string>(),
                       seg.at("us").get<double>(), [g, mask, s](const SegmentModelConstants& k) {
                         return PredictSegment(*g, s, RunChoice(), *mask, H100(), k);
                       }});
      }
      for (const auto& seg : j.at("versus").at("segments")) {
        const Segment s = ParseOps(seg.at("ops").get<std::string>());
        out.push_back({"run op by op", tag + " " + SegmentLabel(s) + " op by op",
                       seg.at("versus_us").get<double>(),
                       [g, mask, s](const SegmentModelConstants& k) -> Expected<SegmentPrediction> {
                         // The op-by-op run times each op as its own segment; sum them.
                         SegmentPrediction sum;
                         for (int n = s.first; n <= s.last; ++n) {
                           auto p = PredictSegment(*g, {n, n}, RunChoice(), *mask, H100(), k);
                           if (!p.IsOk()) return p;
                           sum.us += p->us, sum.bytes += p->bytes, sum.flops += p->flops;
                           sum.kernels += p->kernels;
                         }
                         return sum;
                       }});
      }
    }
  }
  return out;
}

// The fusion ladder at L = 4096, batch 1, 16 heads, d 64 (`stof profile mha`, CUDA events).
std::vector<Sample> LadderSamples() {
  std::vector<Sample> out;
  const Workload w{1, 4096, 16, 64, DType::kF16};
  for (const char* pattern : {"full", "bigbird"}) {
    for (const char* rung : {"native", "sd", "sdf", "auto"}) {
      const std::string name = std::string("ladder_") + pattern + "_" + rung + ".json";
      const auto j = nlohmann::json::parse(ReadText(kBenchDir + name));
      const MhaVariant v = std::string(rung) == "native" ? MhaVariant::kUnfused
                           : std::string(rung) == "sd"   ? MhaVariant::kDecomposed
                           : std::string(rung) == "sdf"  ? MhaVariant::kRecomposed
                                                         : MhaVariant::kFused;
      auto mask = SharedMask(pattern, 4096);
      out.push_back({"ladder", std::string(pattern) + " L4096 B1 H16 " + rung,
                     j.at("latency").at("median_us").get<double>(),
                     [w, v, mask](const SegmentModelConstants& k) {
                       return PredictMhaCall(w, *mask, v, MhaConfig{}, 64, H100(), k);
                     }});
    }
  }
  return out;
}

// `stof bench chain`: every measured tile setting of MCFuser's G1-G12 (CUDA graph + events).
std::vector<Sample> ChainSamples() {
  std::vector<Sample> out;
  const auto j = nlohmann::json::parse(ReadText(kBenchDir + "chain.json"));
  for (const auto& row : j.at("rows")) {
    GemmChainShape shape;
    shape.batch = row.at("batch"), shape.m = row.at("m"), shape.n = row.at("n");
    shape.k = row.at("k"), shape.h = row.at("h");
    for (const auto& st : row.at("settings")) {
      const std::string tiles = st.at("tiles");  // "32x64x64x64/4w"
      ChainTiles t;
      EXPECT_EQ(std::sscanf(tiles.c_str(), "%ldx%ldx%ldx%ld", &t.bm, &t.bn, &t.bk, &t.bh), 4);
      out.push_back({"chain", row.at("shape").get<std::string>() + " " + tiles,
                     st.at("us").get<double>(), [shape, t](const SegmentModelConstants& k) {
                       return PredictGemmChain(shape, t, H100(), k);
                     }});
    }
  }
  return out;
}

// tests/data/segment_model/config_sweep.txt (docs/bench/2026-11-21-mha-h100-v2/): `stof bench
// mha` per block-wise setting
// (and the native baseline), 12 heads, paper-default masks, median of 50 CUDA-event calls.
std::vector<Sample> SweepSamples() {
  std::vector<Sample> out;
  std::istringstream in(ReadText(kSweepFile));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    char cfg[32], pattern[32];
    int64_t L = 0, B = 0, d = 0;
    double us = 0;
    if (std::sscanf(line.c_str(), "%31s %31s L%ld B%ld d%ld median %lf", cfg, pattern, &L, &B, &d,
                    &us) != 6)
      continue;
    MhaConfig c;
    MhaVariant v = MhaVariant::kFused;
    if (std::string(cfg) == "native") {
      v = MhaVariant::kUnfused;
    } else {
      EXPECT_EQ(std::sscanf(cfg, "%ldx%ldx%ld", &c.block_m, &c.block_n, &c.num_warps), 3) << line;
    }
    const Workload w{B, L, 12, d, DType::kF16};
    auto mask = SharedMask(pattern, L);
    const std::string label = std::string(cfg) + " " + pattern + " L" + std::to_string(L) + " B" +
                              std::to_string(B) + " d" + std::to_string(d);
    out.push_back({"sweep", label, us, [w, mask, v, c](const SegmentModelConstants& k) {
                     return PredictMhaCall(w, *mask, v, c, 64, H100(), k);
                   }});
  }
  return out;
}

// bert-base [#12-#14] as gemm_norm on an H100 (`stof run --scheme all --versus unfused`;
// docs/benchmarks.md, "Fused segments against their unfused sequences, whole BERT models"):
// 186 us at 1 x 128, 173 us at 8 x 512, default parameters.
std::vector<Sample> GemmNormSamples() {
  std::vector<Sample> out;
  for (auto [b, l, us] : {std::tuple<int64_t, int64_t, double>{1, 128, 186}, {8, 512, 173}}) {
    auto g = std::make_shared<const OpGraph>(PresetGraph("bert-base", b, l));
    auto mask = SharedMask("bigbird", l);
    out.push_back({"gemm_norm", "bert-base " + std::to_string(b) + "x" + std::to_string(l) +
                                    " [#12-#14] gemm_norm",
                   us, [g, mask](const SegmentModelConstants& k) {
                     return PredictSegment(*g, {12, 14}, SegmentChoice{}, *mask, H100(), k);
                   }});
  }
  return out;
}

std::vector<Sample> AllSamples() {
  std::vector<Sample> all = RunSamples();
  for (auto f : {LadderSamples, ChainSamples, SweepSamples, GemmNormSamples}) {
    auto s = f();
    all.insert(all.end(), s.begin(), s.end());
  }
  return all;
}


// |ln(pred / measured)| per sample of `set` ("" = all); fails the test on a prediction error.
std::vector<double> AbsLogs(const std::vector<Sample>& samples, const std::string& set,
                            const SegmentModelConstants& k, Accuracy* acc, bool print) {
  std::vector<double> v;
  Accuracy a;
  for (const Sample& s : samples) {
    if (!set.empty() && s.set != set) continue;
    auto p = s.predict(k);
    EXPECT_TRUE(p.IsOk()) << s.label << ": " << p.Message();
    if (!p.IsOk()) continue;
    const double r = std::fabs(std::log(p->us / s.measured_us));
    if (print)
      std::printf("  %-13s %-48s measured %8.1f predicted %8.1f  x%.2f\n", s.set.c_str(),
                  s.label.c_str(), s.measured_us, p->us, p->us / s.measured_us);
    if (std::exp(r) > a.worst_ratio) a.worst_ratio = std::exp(r), a.worst = s.label;
    v.push_back(r);
  }
  if (acc) {
    a.n = v.size();
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    if (!sorted.empty())
      a.median_abs_log = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                           : 0.5 * (sorted[sorted.size() / 2 - 1] +
                                                    sorted[sorted.size() / 2]);
    *acc = a;
  }
  return v;
}

// The config sweep as a tuner sees it: per workload, the pairs of block-wise settings whose
// measured times differ by more than 5 %, and the fraction the model orders the same way.
double SweepPairsOrdered(const std::vector<Sample>& samples, const SegmentModelConstants& k,
                         int* pairs) {
  std::map<std::string, std::vector<std::pair<double, double>>> by_workload;
  for (const Sample& s : samples) {
    if (s.set != "sweep" || s.label.rfind("native", 0) == 0) continue;
    auto p = s.predict(k);
    if (!p.IsOk()) continue;
    by_workload[s.label.substr(s.label.find(' ') + 1)].push_back({s.measured_us, p->us});
  }
  int total = 0, agree = 0;
  for (const auto& [w, v] : by_workload)
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = i + 1; j < v.size(); ++j) {
        if (std::max(v[i].first, v[j].first) < 1.05 * std::min(v[i].first, v[j].first)) continue;
        ++total;
        agree += (v[i].first < v[j].first) == (v[i].second < v[j].second);
      }
  if (pairs) *pairs = total;
  return total ? static_cast<double>(agree) / total : 0;
}

}  // namespace stof::engine::testing::segment_model
