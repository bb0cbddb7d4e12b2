// CUDA-event timing (cuda_timing.h, profiler.h): one event pair per run so every sample is its
// own, then order statistics. Events are recorded on the same stream as the work; the runs go
// back to back (no synchronisation between them) so a short kernel's launch latency hides
// behind the previous run, as it does in a real pipeline.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>
#include <vector>

#include "profiler/capture/cuda_timing.h"
#include "profiler/capture/cupti_check.h"

namespace stof::profiler {

namespace detail {

namespace {
// Owns the events of one timing loop; destroyed on every return path.
class EventPool {
 public:
  ~EventPool() {
    for (cudaEvent_t ev : m_events)
      if (ev) cudaEventDestroy(ev);
  }
  engine::Status Create(size_t n) {
    m_events.assign(n, nullptr);
    for (cudaEvent_t& ev : m_events) STOF_PROFILER_CUDA_TRY(cudaEventCreate(&ev));
    return engine::Status::Ok();
  }
  cudaEvent_t operator[](size_t i) const { return m_events[i]; }

 private:
  std::vector<cudaEvent_t> m_events;
};
}  // namespace

engine::Expected<LatencyStats> TimeOnStream(const WorkFn& work, int warmup, int runs,
                                            cudaStream_t stream) {
  if (runs < 1) return engine::Error{"profiler: runs: must be >= 1, got " + std::to_string(runs)};
  if (warmup < 0)
    return engine::Error{"profiler: warmup: must be >= 0, got " + std::to_string(warmup)};
  EventPool events;
  STOF_RETURN_IF_ERROR(events.Create(2 * static_cast<size_t>(runs)));
  for (int i = 0; i < warmup; ++i) STOF_RETURN_IF_ERROR(work(stream));
  STOF_PROFILER_CUDA_TRY(cudaStreamSynchronize(stream));

  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    STOF_PROFILER_CUDA_TRY(cudaEventRecord(events[2 * i], stream));
    STOF_RETURN_IF_ERROR(work(stream));
    STOF_PROFILER_CUDA_TRY(cudaEventRecord(events[2 * i + 1], stream));
  }
  STOF_PROFILER_CUDA_TRY(cudaStreamSynchronize(stream));
  const auto t1 = std::chrono::steady_clock::now();

  LatencyStats st;
  st.runs = runs;
  st.wall_us_per_run = std::chrono::duration<double, std::micro>(t1 - t0).count() / runs;
  for (int i = 0; i < runs; ++i) {
    float ms = 0;
    STOF_PROFILER_CUDA_TRY(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    st.samples_us.push_back(1e3 * static_cast<double>(ms));
  }
  st.median_us = Median(st.samples_us);
  st.min_us = *std::min_element(st.samples_us.begin(), st.samples_us.end());
  st.max_us = *std::max_element(st.samples_us.begin(), st.samples_us.end());
  st.mean_us = std::accumulate(st.samples_us.begin(), st.samples_us.end(), 0.0) / runs;
  return st;
}

}  // namespace detail

engine::Expected<LatencyStats> TimeWithCudaEvents(const WorkFn& work, int warmup, int runs) {
  if (runs < 1) return engine::Error{"profiler: runs: must be >= 1, got " + std::to_string(runs)};
  if (warmup < 0)
    return engine::Error{"profiler: warmup: must be >= 0, got " + std::to_string(warmup)};
  cudaStream_t stream = nullptr;
  STOF_PROFILER_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto st = detail::TimeOnStream(work, warmup, runs, stream);
  // Drain whatever `work` left queued (it may have failed mid-run) before the stream goes.
  (void)cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  return st;
}

}  // namespace stof::profiler
