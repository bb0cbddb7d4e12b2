// AnalysisWorker (analysis_worker.h): a single-slot queue (only the newest job matters).
#include "app/studio/analysis_worker.h"

#include <chrono>

namespace stof::app {

AnalysisWorker::AnalysisWorker() : m_thread([this] { Loop(); }) {}

AnalysisWorker::~AnalysisWorker() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_quit = true;
    m_cancel = true;
  }
  m_cv.notify_all();
  m_thread.join();
}

void AnalysisWorker::Submit(std::shared_ptr<const engine::Mask> mask,
                            const engine::AnalysisRequest& request, uint64_t tag) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_pending = Job{std::move(mask), request, tag};
    m_cancel = true;  // the running job (if any) is stale now
    m_busy = true;
  }
  m_cv.notify_all();
}

std::optional<AnalysisResult> AnalysisWorker::Poll() {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::optional<AnalysisResult> out = std::move(m_result);
  m_result.reset();
  return out;
}

std::string AnalysisWorker::Stage() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_stage;
}

void AnalysisWorker::Loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_cv.wait(lock, [this] { return m_quit || m_pending.has_value(); });
      if (m_quit) return;
      job = std::move(*m_pending);
      m_pending.reset();
      m_cancel = false;
      m_progress = 0.0;
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto analysis = engine::AnalyzeMask(*job.mask, job.request,
                                        [this](double fraction, const std::string& stage) {
                                          m_progress = fraction;
                                          {
                                            std::lock_guard<std::mutex> lock(m_mutex);
                                            m_stage = stage;
                                          }
                                          return !m_cancel.load();
                                        });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_cancel && m_pending) continue;  // superseded: the newer job runs next
    AnalysisResult r;
    r.tag = job.tag;
    r.seconds = seconds;
    if (analysis.IsOk()) {
      r.analysis = std::make_shared<const engine::MaskAnalysis>(std::move(*analysis));
    } else {
      r.error = analysis.Message();
    }
    m_result = std::move(r);
    if (!m_pending) m_busy = false;
  }
}

}  // namespace stof::app
