// AnalysisWorker: one background thread that runs engine::AnalyzeMask for the studio, so the
// layouts, the selection and the block-size table of an L = 16384 mask never stall a frame.
// The GUI submits an immutable mask snapshot with a tag (the mask version); a newer Submit
// cancels the running job (checked between stages). Progress comes back through atomics,
// results as immutable snapshots that AnalysisCache picks up with Poll() at the start of a
// frame.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "engine/analysis/layout_analysis.h"
#include "engine/mask/mask.h"

namespace stof::app {

struct AnalysisResult {
  uint64_t tag = 0;
  std::shared_ptr<const engine::MaskAnalysis> analysis;  // null on failure
  std::string error;
  double seconds = 0;  // wall time of AnalyzeMask
};

class AnalysisWorker {
 public:
  AnalysisWorker();
  ~AnalysisWorker();  // cancels and joins
  AnalysisWorker(const AnalysisWorker&) = delete;
  AnalysisWorker& operator=(const AnalysisWorker&) = delete;

  void Submit(std::shared_ptr<const engine::Mask> mask, const engine::AnalysisRequest& request,
              uint64_t tag);
  // The newest finished result not yet returned (older ones are dropped).
  std::optional<AnalysisResult> Poll();
  bool Busy() const { return m_busy.load(); }  // a job queued or running
  double Progress() const { return m_progress.load(); }
  std::string Stage() const;

 private:
  void Loop();

  struct Job {
    std::shared_ptr<const engine::Mask> mask;
    engine::AnalysisRequest request;
    uint64_t tag = 0;
  };
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::optional<Job> m_pending;
  std::optional<AnalysisResult> m_result;
  std::string m_stage;
  bool m_quit = false;
  std::atomic<bool> m_cancel{false};
  std::atomic<bool> m_busy{false};
  std::atomic<double> m_progress{0.0};
  std::thread m_thread;  // last: starts after the members it uses
};

}  // namespace stof::app
