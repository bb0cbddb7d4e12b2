// The plain data LayerWorkbench shares with the panels that draw it: the layer chosen (a model
// preset or a config.json at a batch size), one segment of the shown scheme as the fusion view
// lists it, and a "run plan" report. Panels include this, never layer_workbench.h (the
// architecture test holds them to it); studio.cpp and the lessons build LayerChoice values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "app/studio/studio_defaults.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/run/model_runner.h"

namespace stof::app {

struct LayerChoice {
  std::string model = studio_defaults::kModel;  // preset name, used when config_path is empty
  std::string config_path;                      // a HuggingFace config.json
  int64_t batch = studio_defaults::kBatch;
  bool operator==(const LayerChoice&) const = default;
};

// One segment of the shown scheme, as the fusion view lists it.
struct SegmentView {
  engine::Segment segment;
  std::string tmpl;          // template, "" op by op
  std::string why;           // op by op: the matcher's reason
  std::string mix;           // "CI+MI"
  std::string choice;        // parameters (ChoiceText)
  double predicted_us = 0, predicted_bytes = 0;
  std::optional<double> measured_us;  // from the tuning run or plan that chose this scheme
  std::string predict_error;
};

struct PlanRunReport {
  engine::RunReport report;
  std::optional<double> tuned_us;  // the plan's own whole-model figure
  std::string plan_label;
};

}  // namespace stof::app
