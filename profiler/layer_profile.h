// A layer profile: one transformer layer under a fusion scheme measured by the profiler
// segment by segment (each segment's kernels, latency samples and DRAM counters, with the
// segment's FLOPs and minimum bytes from the op graph, for the roofline) and as a whole (the
// kernel timeline and the latency histogram of repeated runs). Made by `stof profile layer`
// on a GPU machine and by the studio's profile view; the studio opens the JSON anywhere, a
// machine without a GPU included. Schema "stof-layer-profile", version 1 (docs/profiler.md).
// Invariants: LayerProfileFromJson(LayerProfileToJson(p)) == p for finite numbers (non-finite
// ones are written as null and read back as NaN); segments are in layer order and their `ops`
// labels are SegmentLabel's ("[#7-#9]"); a part the profiler could not measure says so in
// its ProfileResult::availability and leaves its data empty.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/plan/plan.h"
#include "engine/run/layer_runner.h"
#include "profiler/model/profile_result.h"
#include "profiler/profiler.h"

namespace stof::profiler {

inline constexpr const char* kLayerProfileSchemaName = "stof-layer-profile";

struct SegmentProfile {
  int index = 0;              // 0-based position in the layer
  std::string ops;            // SegmentLabel: "[#7-#9]", "[#1]"
  std::string tmpl;           // template name, "" when run op by op
  std::string how;            // SegmentRun::how
  double flops = 0;           // sum of the segment's ops' FLOPs (op graph)
  double min_bytes = 0;       // sum of the ops' minimum bytes (op graph), unfused
  ProfileResult profile;      // this segment's steps alone
  bool operator==(const SegmentProfile&) const = default;
};

struct LayerProfile {
  static constexpr int kSchemaVersion = 1;
  std::string label;          // "bert-base 8x512 bigbird (plan bert.json)"
  std::string model;          // OpGraph::model
  int64_t batch = 0, seq_len = 0;
  std::string mask_label, mask_hash;
  std::string scheme_code;    // the fusion scheme profiled
  std::string backend;        // Backend::Name()
  std::string source_plan;    // the plan file it came from, "" when none
  std::string created_by;     // "stof profile layer", "stof-studio", "plan"
  std::string created_at;     // ISO 8601 UTC
  // The device's roofs for the roofline: DeviceSpec's DRAM bandwidth and fp16 tensor peak.
  std::string device_name;
  double peak_dram_bytes_per_s = 0, peak_flops_per_s = 0;
  double layer_flops = 0, layer_min_bytes = 0;
  ProfileResult layer;        // the whole layer: kernel timeline, latency samples, counters
  std::vector<SegmentProfile> segments;
  std::vector<std::string> notes;  // "cancelled before segment 4/9 ([#8])", "from a plan: ..."
  bool operator==(const LayerProfile&) const = default;
};

struct LayerProfileOptions {
  MeasureOptions measure;     // per segment and for the layer (label and flops set per part)
  bool segments = true;       // profile each segment alone as well as the layer
  // Called before each part ("segment 3/9 (7-9)", "layer"), fraction done in [0, 1];
  // returning false cancels (the profile so far is returned with a note).
  std::function<bool(const std::string& part, double fraction)> progress;
};

// Profiles `runner` (already bound to a scheme, on its backend) with `profiler`: segment i is
// measured alone with the label "segment i+1 ([#a-#b])" (1-based, as plans count), then the
// whole layer ("layer"). The runner's graph gives the FLOPs and minimum bytes; `device` the
// roofs. Fills model, batch, seq_len, scheme_code (from the runner's segments), device,
// created_at and the numbers; the caller sets label (default "<model> <B>x<L>"), mask_label,
// mask_hash, backend, source_plan and created_by (default "stof"). A cancel (progress returns
// false) returns the segments measured so far, the layer part unavailable ("cancelled") and a
// note. Errors: a segment that fails to run (named), bad options (runs < 1, no segments).
engine::Expected<LayerProfile> ProfileLayer(engine::LayerRunner& runner, Profiler& profiler,
                                            const engine::DeviceSpec& device,
                                            const LayerProfileOptions& options);

nlohmann::json LayerProfileToJson(const LayerProfile& p);
// Errors name the JSON path ("bert.profile.json: segments[2].profile.latency.runs: ...").
engine::Expected<LayerProfile> LayerProfileFromJson(const nlohmann::json& j,
                                                    const std::string& what = "layer profile");
engine::Status SaveLayerProfile(const std::string& path, const LayerProfile& p);
engine::Expected<LayerProfile> LoadLayerProfile(const std::string& path);

// A profile made from a tuned plan's measurements ("segment N", N from 1, as the tuner writes
// them; the layer's from "layer" or "total", else the sum of the segments), so a loaded plan
// can be pinned as a baseline in the studio: each segment's ProfileResult has the latency only
// (availability.events true, one sample, summary.latency_us, latency_source "plan"; no
// kernels, no counters, each saying why), its ops and template from fusion.segments, its FLOPs
// and minimum bytes from the plan's model (0 without one, noted). A predicted (not measured)
// figure is noted in that segment's notes. `what` (a file name) prefixes messages and is
// kept as source_plan. Errors: no "segment N" measurement ("...: measurements: the plan has no
// per-segment measurements ..."), N outside fusion.segments, a bad latency.
engine::Expected<LayerProfile> LayerProfileFromPlan(const engine::Plan& plan,
                                                    const std::string& what);

}  // namespace stof::profiler
