// The pieces of `stof run` that its files share: the options (RunArgs), the progress display
// and the steps cmd_run.cpp runs in order: the check against the CPU reference
// (cmd_run_check.cpp), the --versus measurement (cmd_run_versus.cpp) and the report
// (cmd_run_report.cpp). Included only by those four files.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/graph_args.h"
#include "app/cli/progress_line.h"
#include "app/cli/run_common.h"
#include "engine/plan/plan.h"
#include "engine/run/model_runner.h"

namespace stof::app::run_detail {

// The options of `stof run` (RegisterRunCommand).
struct RunArgs {
  GraphArgs graph;
  MaskSourceOptions mask;
  std::string layers = "full";
  std::string plan;
  std::string mha = "fused";
  std::string mha_kernel = "auto";
  int64_t sub_len = 64;
  std::string device = "local";
  bool check = true;
  double tolerance = 0.05;
  int repeats = 20;
  bool no_graph = false;
  uint64_t weight_seed = 1;
  std::string versus;  // a second scheme measured in the same process
  // Given on the command line (with --plan, what is not given comes from the plan).
  bool batch_given = false, seq_given = false, layers_given = false;
  bool mha_kernel_given = false, sub_len_given = false;
  bool quiet = false;  // --quiet (or --json): no progress on stderr
};

// The run's progress on stderr (tune's display): on the CPU reference a large layer takes
// minutes, a whole model hours, and the run would otherwise be silent.
struct RunProgress {
  explicit RunProgress(bool quiet) : line(quiet), t0(std::chrono::steady_clock::now()) {}
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void Stage(const std::string& stage) { line.Stage(Elapsed(), "run", stage); }
  // MeasureModel's reports on that display; `what` names the scheme measured.
  engine::MeasureProgressFn OnMeasure(const std::string& what) {
    return [this, what](const engine::MeasureProgress& p, bool new_stage) {
      if (new_stage) Stage(what + p.stage);
      if (!new_stage && !line.Due()) return;
      std::string detail = p.stage + ": " + std::to_string(p.runs) + (p.runs == 1 ? " run" : " runs") + " done";
      if (p.layers_done > 0 && p.layers_done < p.layers)
        detail += ", " + std::to_string(p.layers_done) + "/" + std::to_string(p.layers) +
                  " layers of the next";
      line.Status(p.fraction, detail, Elapsed(), p.remaining_s);
    };
  }
  ProgressLine line;
  std::chrono::steady_clock::time_point t0;
};

// ---- The report (cmd_run_report.cpp) ---------------------------------------------------

// The choice of the first sparse_mha segment (what --versus and the "mha_variant" field
// carry over), or the default when the layer has none.
engine::SegmentChoice MhaChoice(const engine::OpGraph& g, const engine::FusionScheme& scheme,
                                const std::vector<engine::SegmentChoice>& choices);
// The run's description before any measurement: model, shape, mask, device, scheme, plan.
nlohmann::json RunHeaderJson(const RunArgs& a, const engine::OpGraph& graph,
                             const MaskSource& mask, const engine::Backend& backend, int layers,
                             const engine::FusionScheme& scheme,
                             const std::vector<engine::SegmentChoice>& choices,
                             const std::optional<engine::Plan>& plan,
                             const nlohmann::json& warnings);
// The measured model's figures, and the plan's own measurement of it when this run is the
// same model.
void AddReport(nlohmann::json& out, const engine::RunReport& report, int repeats, int layers,
               const std::optional<engine::Plan>& plan);
// The human report of a finished run (`out` as --json would print it).
void PrintRunText(const RunArgs& a, const nlohmann::json& out, const engine::OpGraph& graph,
                  const MaskSource& mask, const engine::Backend& backend, int layers,
                  const std::optional<engine::Plan>& plan, const engine::FusionScheme& scheme,
                  const engine::RunReport& report);

// ---- The check (cmd_run_check.cpp) -----------------------------------------------------

// One small layer (batch 1, L <= 128, the same scheme) against the CPU reference: its JSON,
// or an error when it could not run or differs.
engine::Expected<nlohmann::json> CheckSmallLayer(const RunArgs& a, const LayerSource& src,
                                                 engine::Backend& backend,
                                                 engine::DType dtype,
                                                 const engine::FusionScheme& scheme,
                                                 const std::vector<engine::SegmentChoice>& choices);

// ---- --versus (cmd_run_versus.cpp) -----------------------------------------------------

// The same model under the --versus scheme, measured in this process right after: its JSON.
// `o` carries the first run's options; `model` is released first (its buffers).
engine::Expected<nlohmann::json> MeasureVersus(
    const RunArgs& a, engine::Backend& backend, const engine::OpGraph& run_graph,
    const engine::Mask& mask, const engine::FusionScheme& scheme,
    const std::vector<engine::SegmentChoice>& choices, engine::ModelRunOptions o,
    const engine::MeasureOptions& mo, const engine::RunReport& report,
    std::unique_ptr<engine::ModelRunner>& model, RunProgress& progress);

}  // namespace stof::app::run_detail
