// ScriptedBackend: an engine::Backend for the tuner tests whose "kernels" compute nothing and
// whose Measure returns a scripted time: the sum, over the calls the work issues, of
// Cost(call). Each test scripts costs so that the optimum is known by construction (or checks
// one method against another on pseudo-random costs). Buffers are host memory.
// Used by tests/engine/tune_test.cpp (and the studio's tuning tests).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend.h"

namespace stof::engine::testing {

class ScriptedBackend : public Backend {
 public:
  // Cost of one call in us, by kind ("gemm", "norm", "mha", ...), its params and a shape
  // tag; the default script: 10 us per kernel, with one best setting per tunable kind.
  using Script = std::function<double(const std::string& kind, const ParamMap& params,
                                      const std::string& shape)>;
  explicit ScriptedBackend(Script script = {}) : m_script(std::move(script)) {}

  std::string Name() const override { return "scripted"; }
  DeviceSpec Device() const override {
    DeviceSpec d;
    d.name = "scripted-gpu";
    d.sm_count = 132, d.smem_per_sm_bytes = 233472, d.smem_per_block_bytes = 232448;
    d.max_warps_per_sm = 64, d.l2_bytes = 50 << 20;
    d.dram_bytes_per_s = 3.35e12, d.fp16_tensor_flops = 989e12, d.cc_major = 9;
    return d;
  }
  bool Supports(DType dtype) const override { return dtype == DType::kF16; }
  Expected<void*> Allocate(size_t bytes) override {
    void* p = std::calloc(bytes ? bytes : 1, 1);
    if (!p) return MakeError("scripted: out of memory");
    return p;
  }
  void Free(void* p) override { std::free(p); }
  Status CopyToDevice(void* dst, const void* src, size_t n) override {
    std::memcpy(dst, src, n);
    return Status::Ok();
  }
  Status CopyToHost(void* dst, const void* src, size_t n) override {
    std::memcpy(dst, src, n);
    return Status::Ok();
  }
  Status Synchronize() override { return Status::Ok(); }

  Status RunMha(const MhaCall& c) override {
    ParamMap p{{"variant", static_cast<int64_t>(c.variant)},
               {"row_wise", c.config.kernel == MhaKernel::kRowWise},
               {"bm", c.config.block_m}, {"bn", c.config.block_n}, {"warps", c.config.num_warps}};
    return Add("mha", p, std::to_string(c.workload.seq_len));
  }
  Status RunGemm(const GemmCall& c) override {
    std::string tag = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    if (c.act != Activation::kNone) tag += "+act";
    if (c.residual) tag += "+res";
    return Add("gemm", c.params, tag);
  }
  Status RunBatchedGemm(const BatchedGemmCall& c) override {
    return Add("bgemm", {}, std::to_string(c.m) + "x" + std::to_string(c.n));
  }
  Status RunEpilogue(const EpilogueCall&) override { return Add("epilogue", {}, ""); }
  Status RunNorm(const NormCall& c) override {
    return Add("norm", c.params, c.residual ? "+res" : "");
  }
  Status RunGemmNorm(const GemmNormCall& c) override { return Add("gemm_norm", c.params, ""); }
  Status RunGemmChain(const GemmChainCall& c) override { return Add("gemm_chain", c.params, ""); }
  Status RunScores(const ScoresCall&) override { return Add("scores", {}, ""); }
  Status RunHeads(const HeadsCall&) override { return Add("heads", {}, ""); }

  Expected<std::vector<ParamMap>> GemmParamChoices(const GemmCall&) override {
    return std::vector<ParamMap>{{{"algo", 0}}, {{"algo", 1}}, {{"algo", 2}}, {{"algo", 3}}};
  }
  Expected<std::vector<ParamMap>> NormParamChoices(const NormCall&) override {
    return std::vector<ParamMap>{{{"rows_per_block", 1}}, {{"rows_per_block", 2}},
                                 {{"rows_per_block", 4}}};
  }
  Expected<std::vector<ParamMap>> GemmNormParamChoices(const GemmNormCall&) override {
    return std::vector<ParamMap>{{{"bm", 16}}, {{"bm", 32}}};
  }
  Expected<std::vector<ParamMap>> GemmChainParamChoices(const GemmChainCall&) override {
    std::vector<ParamMap> out{{{"bm", 32}, {"bn", 64}, {"bk", 32}, {"bh", 64}, {"warps", 4}},
                              {{"bm", 64}, {"bn", 64}, {"bk", 32}, {"bh", 64}, {"warps", 4}}};
    out.insert(out.end(), extra_chain_choices.begin(), extra_chain_choices.end());
    return out;
  }
  // More chain settings offered after the two tilings (as CudaBackend offers the Hopper
  // chain's {"cluster", "splits"} on sm_90).
  std::vector<ParamMap> extra_chain_choices;
  Expected<std::vector<MhaConfig>> MhaConfigChoices(const Workload&, const Mask&) override {
    return std::vector<MhaConfig>{{MhaKernel::kBlockWise, 64, 64, 4},
                                  {MhaKernel::kBlockWise, 32, 32, 4},
                                  {MhaKernel::kBlockWise, 128, 64, 8},
                                  {MhaKernel::kRowWise, 64, 64, 4}};
  }

  Expected<Measurement> Measure(const std::function<Status(void*)>& work,
                                const MeasureOptions&) override {
    ++measure_calls;
    m_acc = 0;
    STOF_RETURN_IF_ERROR(work(nullptr));
    Measurement m;
    m.median_us = m.min_us = m_acc;
    m.repeats = 1;
    m.method = "scripted";
    return m;
  }

  // The default script: every kernel 10 us; GEMM algo 2 saves 3 us, norm rows_per_block 4
  // saves 1, gemm_norm bm 32 saves 2, chain bm 64 saves 2, attention 128x64 w8 saves 4; SDF
  // attention costs 30.
  static double DefaultCost(const std::string& kind, const ParamMap& p, const std::string&) {
    const auto get = [&](const char* k) {
      auto it = p.find(k);
      return it == p.end() ? int64_t{-1} : it->second;
    };
    double t = 10;
    if (kind == "gemm" && get("algo") == 2) t -= 3;
    if (kind == "norm" && get("rows_per_block") == 4) t -= 1;
    if (kind == "gemm_norm" && get("bm") == 32) t -= 2;
    if (kind == "gemm_chain" && get("bm") == 64) t -= 2;
    if (kind == "mha") {
      if (get("variant") == static_cast<int64_t>(MhaVariant::kRecomposed)) return 30;
      if (get("bm") == 128 && get("warps") == 8 && get("row_wise") == 0) t -= 4;
    }
    return t;
  }

  int64_t measure_calls = 0;
  int64_t fail_kind_calls = 0;
  std::string fail_kind;  // calls of this kind fail (an unsupported kernel)

 private:
  Status Add(const std::string& kind, const ParamMap& p, const std::string& shape) {
    if (kind == fail_kind) {
      ++fail_kind_calls;
      return MakeError("scripted: " + kind + " is not supported here");
    }
    m_acc += m_script ? m_script(kind, p, shape) : DefaultCost(kind, p, shape);
    return Status::Ok();
  }
  Script m_script;
  double m_acc = 0;
};

}  // namespace stof::engine::testing
