// Whether fusing a GEMM with what follows it pays on a device: each GEMM + epilogue (bias,
// activation or residual add: gemm_bias / gemm_act / gemm_add) and GEMM + LayerNorm
// (gemm_norm) candidate of a layer, predicted fused and apart by the analytical segment model
// (segment_model.h). Fusing saves the intermediate's round trip to DRAM; a GEMM + LayerNorm
// kernel must own whole rows of the output (the norm needs every column), so it tiles the
// GEMM coarsely and runs fewer thread blocks, which loses when there are few rows to share
// out. The studio's Learn tab (lesson 3) and docs/learn.md show these numbers; every figure
// is a prediction. Tested in tests/engine/fusion_tradeoff_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"

namespace stof::engine {

struct FusionTradeoff {
  std::string what;              // "GEMM + Add + LayerNorm", "GEMM + epilogue (activation)"
  std::string tmpl;              // the fused template: "gemm_norm", "gemm_act", ...
  Segment fused;                 // e.g. [#7-#9]
  std::vector<Segment> apart;    // e.g. [#7,#8] and [#9]: how the default scheme runs them
  double fused_us = 0, apart_us = 0;        // predicted
  double fused_bytes = 0, apart_bytes = 0;  // predicted DRAM bytes
  bool Pays() const { return fused_us < apart_us; }
};

// Every GEMM + epilogue pair and GEMM + Add + LayerNorm triple of `g` that a template fuses,
// in op order. Apart: the epilogue pair as two single ops; the LayerNorm triple as its
// GEMM + Add segment and the LayerNorm alone. Errors: a prediction that fails (a bad mask size).
Expected<std::vector<FusionTradeoff>> PredictFusionTradeoffs(const OpGraph& g, const Mask& mask,
                                                             const DeviceSpec& device);

// One template's trade-off (its first candidate in the layer, e.g. "gemm_norm") on each of
// `devices`: whether a fusion pays depends on the device (the parts run apart at its DRAM
// bandwidth). A device on which the layer has no such candidate is left out.
struct TradeoffOnDevice {
  std::string device;
  double dram_bytes_per_s = 0;   // the device's DRAM bandwidth
  FusionTradeoff tradeoff;
};
Expected<std::vector<TradeoffOnDevice>> TradeoffAcrossDevices(const OpGraph& g, const Mask& mask,
                                                              const std::vector<DeviceSpec>& devices,
                                                              const std::string& tmpl);

}  // namespace stof::engine
