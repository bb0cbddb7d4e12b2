// GpuWorker: the one thread of stof-studio that owns all CUDA work (docs/architecture.md,
// "app/"): the backend (our kernels on this machine's GPU, created on the thread at start) and
// the CUPTI profiler.
// Panels submit jobs (tune, run a plan, profile a layer, measure the fusion ladder); they run
// one at a time in order; each gets a cancel flag (checked between candidates and between
// parts) and reports its stage and fraction through atomics the status bar reads each frame.
// A job returns a closure that Studio runs on the GUI thread at the start of a frame, so
// results land as whole snapshots and the GUI never blocks on the GPU.
// Without a GPU (or in a build without CUDA) jobs get no backend and predict; DeviceText says
// why, in the words of the failed backend creation.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/backend.h"
#include "profiler/profiler.h"

namespace stof::app {

struct JobContext {
  engine::Backend* backend = nullptr;     // null: no GPU, predict
  profiler::Profiler* profiler = nullptr; // never null (a NullProfiler without CUDA)
  std::atomic<bool>* cancel = nullptr;
  // Stage text and fraction done in [0, 1] (-1 unknown), shown by the status bar.
  std::function<void(const std::string& stage, double fraction)> progress;
};

class GpuWorker {
 public:
  using Done = std::function<void()>;              // runs on the GUI thread
  using Job = std::function<Done(JobContext&)>;    // runs on the worker

  // use_gpu = false keeps the worker on predictions even where a GPU exists (tests).
  explicit GpuWorker(bool use_gpu);
  ~GpuWorker();  // cancels the running job, drops queued ones, joins
  GpuWorker(const GpuWorker&) = delete;
  GpuWorker& operator=(const GpuWorker&) = delete;

  void Submit(const std::string& title, Job job);
  void Cancel();                      // the running job and every queued one
  std::vector<Done> TakeDone();       // finished jobs' closures, in order

  bool Ready() const { return m_ready.load(); }  // the backend question is settled
  bool HasGpu() const { return m_has_gpu.load(); }
  std::string DeviceText() const;     // "cuda:0 (NVIDIA H100 80GB HBM3)" or why there is none
  bool Busy() const { return m_busy.load(); }
  std::string Title() const;          // the running job's
  std::string Stage() const;
  double Fraction() const { return m_fraction.load(); }
  int Queued() const;

 private:
  void Loop(bool use_gpu);

  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<std::pair<std::string, Job>> m_queue;
  std::vector<Done> m_done;
  std::string m_title, m_stage, m_device_text;
  bool m_quit = false;
  std::atomic<bool> m_cancel{false};
  std::atomic<bool> m_busy{false};
  std::atomic<bool> m_ready{false};
  std::atomic<bool> m_has_gpu{false};
  std::atomic<double> m_fraction{-1.0};
  std::thread m_thread;  // last: starts after the members it uses
};

}  // namespace stof::app
