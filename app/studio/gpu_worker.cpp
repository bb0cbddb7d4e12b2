// GpuWorker (gpu_worker.h).
#include "app/studio/gpu_worker.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/cuda_backend.h"
#endif

namespace stof::app {

GpuWorker::GpuWorker(bool use_gpu) : m_thread([this, use_gpu] { Loop(use_gpu); }) {}

GpuWorker::~GpuWorker() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_quit = true;
    m_queue.clear();
    m_cancel = true;
  }
  m_cv.notify_all();
  m_thread.join();
}

void GpuWorker::Submit(const std::string& title, Job job) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_queue.emplace_back(title, std::move(job));
    m_busy = true;
  }
  m_cv.notify_all();
}

void GpuWorker::Cancel() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_queue.clear();
  m_cancel = true;
}

std::vector<GpuWorker::Done> GpuWorker::TakeDone() {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<Done> out;
  out.swap(m_done);
  // Busy until the last job's result has been handed over, so "idle" means "landed".
  if (m_queue.empty() && m_title.empty()) m_busy = false;
  return out;
}

std::string GpuWorker::DeviceText() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_device_text;
}

std::string GpuWorker::Title() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_title;
}

std::string GpuWorker::Stage() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_stage;
}

int GpuWorker::Queued() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return static_cast<int>(m_queue.size());
}

void GpuWorker::Loop(bool use_gpu) {
  // The backend and the profiler live and die on this thread.
  std::unique_ptr<engine::Backend> backend;
  std::string text;
#ifdef STOF_WITH_KERNELS
  if (use_gpu) {
    auto b = kernels::CudaBackend::Create(0);
    if (b.IsOk()) {
      backend = std::move(*b);
      text = backend->Name();
    } else {
      text = "no GPU (" + b.Message() + "): predictions";
    }
  } else {
    text = "GPU not used (--no-gpu): predictions";
  }
  std::unique_ptr<profiler::Profiler> prof =
      backend ? profiler::CreateProfiler() : profiler::CreateNullProfiler("no GPU");
#else
  (void)use_gpu;
  text = "this build has no CUDA (STOF_CUDA=OFF): predictions";
  std::unique_ptr<profiler::Profiler> prof = profiler::CreateNullProfiler();
#endif
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_device_text = text;
  }
  m_has_gpu = backend != nullptr;
  m_ready = true;

  for (;;) {
    std::pair<std::string, Job> job;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_cv.wait(lock, [&] { return m_quit || !m_queue.empty(); });
      if (m_quit) break;
      job = std::move(m_queue.front());
      m_queue.pop_front();
      m_title = job.first;
      m_stage.clear();
      m_cancel = false;
    }
    m_fraction = -1.0;
    JobContext ctx;
    ctx.backend = backend.get();
    ctx.profiler = prof.get();
    ctx.cancel = &m_cancel;
    ctx.progress = [this](const std::string& stage, double fraction) {
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stage = stage;
      }
      m_fraction = fraction;
    };
    Done done;
    try {  // a job's exception must not take the GUI down
      done = job.second(ctx);
    } catch (const std::exception& e) {
      const std::string what = job.first + ": " + e.what();
      done = nullptr;
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stage = what;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    if (done) m_done.push_back(std::move(done));
    m_title.clear();
    if (m_queue.empty() && m_done.empty()) m_busy = false;
  }
}

}  // namespace stof::app
