// The tuning run behind the studio's tune view: the view's settings (methods, budget, seed,
// cache), the live feed the tuner's observer writes on the GpuWorker thread and the GUI reads
// (best-so-far traces, every candidate, STOF's stage-2 rewards, the progress), and RunTuneJob,
// the job body: every chosen method in turn through engine::RunTuneSession, stopped by the
// cancel flag or the first failure. LayerWorkbench starts the job and lands its results;
// panels/tune_panel draws TuneLive snapshots and the settings; batch_driver.cpp sets the
// settings for --tune.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/studio/gpu_worker.h"
#include "engine/device/device_spec.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/tune/tune_session.h"

namespace stof::app {

// What the tuner's observer saw, shared between the worker (writer) and the GUI (reader).
struct TuneLive {
  struct Trace {                       // best layer latency over time, one per method run
    std::string method;
    std::vector<double> t_s, best_us;
  };
  struct Point {                       // one evaluated candidate
    std::string method, segment, tmpl, choice;
    double predicted_us = 0, us = 0;
    bool measured = false;
  };
  struct Reward {                      // STOF stage 2
    std::string segment;
    int64_t iteration = 0, samples = 0;
    double gain_us = 0, best_us = 0;
  };
  std::vector<Trace> traces;
  std::vector<Point> points;
  std::vector<Reward> rewards;
  engine::TuneProgress progress;
  uint64_t version = 0;
};

// A TuneLive under its mutex: the observer changes it with Update (which bumps the version),
// the GUI copies it with Snapshot when Version moved.
class TuneLiveFeed {
 public:
  TuneLive Snapshot() const;
  uint64_t Version() const;
  void Reset();  // empty for a new run
  template <typename F>
  void Update(F&& change) {
    std::lock_guard<std::mutex> lock(m_mutex);
    change(m_live);
    ++m_live.version;
  }

 private:
  mutable std::mutex m_mutex;
  TuneLive m_live;
};

// "stof stage 2: parameters: 97 candidates, best 142.3 us, 0.8 s, ~1 s left": the status bar's
// and the tune view's line for the tuner's progress.
std::string TuneProgressText(const engine::TuneProgress& p);

// One tuning method of the tune view: its checkbox.
struct TuneMethodRow {
  engine::TuneMethod method = engine::TuneMethod::kStof;
  bool chosen = false;
};
// Every method, in engine::AllTuneMethods() order, STOF alone chosen.
std::vector<TuneMethodRow> AllTuneMethodRows();

struct TuneSettings {
  std::vector<TuneMethodRow> methods = AllTuneMethodRows();
  std::string budget = "60s";
  uint64_t seed = 1;
  bool use_cache = false;   // the user's tune cache file (off: every candidate measured)
};

struct MethodResult {
  engine::TuneSessionResult session;
};

// A method's speed-up over the one baseline every method shares: the untuned default layer
// (TuneSessionResult::default_layer_us) over the method's tuned layer; nullopt without it.
std::optional<double> TuneSpeedup(const engine::TuneSessionResult& s);

// A tuning run's inputs, copied from the GUI's state when it starts.
struct TuneJobRequest {
  engine::OpGraph graph;
  std::shared_ptr<const engine::Mask> mask;
  std::optional<engine::MaskSpec> spec;
  engine::DeviceSpec device;
  std::vector<engine::TuneMethod> methods;
  engine::TuneOptions options;  // budget and seed; method and cancel are set per method
  bool use_cache = false;
};

struct TuneJobResult {
  std::vector<MethodResult> results;  // the methods that finished, in order
  std::string error;                  // "gtco: ..." when a method failed, "" otherwise
};

// The job body, on the GpuWorker thread: feeds `live` and the worker's progress line.
TuneJobResult RunTuneJob(const TuneJobRequest& request, TuneLiveFeed& live, JobContext& ctx);

}  // namespace stof::app
