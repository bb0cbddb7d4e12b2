// The tune view's plots as data (no ImGui): the best layer latency over tuning time per
// method, each evaluated candidate, and STOF's stage-2 rewards, built from a TuneLive snapshot
// only when its version moves. The candidate plot says what it is: predicted against measured
// (with y = x) when candidates were measured, or the predictions alone in evaluation order
// when nothing was (no GPU): never a "measured" axis holding predictions. LayerWorkbench owns
// one; panels/tune_panel draws it; LayerWorkbench::StateJson dumps TunePlotsJson for the GUI
// tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/studio/tune_job.h"
#include "app/studio/widgets/plots.h"

namespace stof::app {

struct TunePlots {
  uint64_t version = ~uint64_t{0};
  std::vector<plots::Series> best, candidates, rewards;
  // True when at least one candidate was measured: `candidates` then holds only measured
  // points, x = predicted, y = measured. False: x = evaluation order, y = predicted.
  bool measured = false;
  std::string candidates_title;
  plots::Axis candidates_x, candidates_y;
  TuneLive live;
};

TunePlots BuildTunePlots(const TuneLive& live);

// {"measured": bool, "title", "x_axis", "y_axis", "series": [{"name", "points"}],
//  "measured_series": n}: what the candidate plot shows.
nlohmann::json TunePlotsJson(const TunePlots& p);

}  // namespace stof::app
