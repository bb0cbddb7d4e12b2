// TimeWithCudaEvents (profiler.h): one event pair per run so every sample is its own, then
// order statistics. Events are recorded on the same stream as the work.
#include <cuda_runtime.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "profiler/profiler.h"

namespace stof::profiler {

namespace {
engine::Error CudaFail(cudaError_t e, const char* what) {
  return engine::Error{std::string("profiler: ") + what + ": " + cudaGetErrorString(e)};
}
}  // namespace

engine::Expected<LatencyStats> TimeWithCudaEvents(
    const std::function<engine::Status(void* stream)>& work, int warmup, int runs) {
  if (runs < 1) return engine::Error{"profiler: runs: must be >= 1, got " + std::to_string(runs)};
  if (warmup < 0) return engine::Error{"profiler: warmup: must be >= 0"};
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess)
    return CudaFail(e, "cudaStreamCreate");
  std::vector<cudaEvent_t> events(2 * static_cast<size_t>(runs), nullptr);
  auto cleanup = [&] {
    for (cudaEvent_t ev : events)
      if (ev) cudaEventDestroy(ev);
    cudaStreamDestroy(stream);
  };
  for (cudaEvent_t& ev : events) {
    if (cudaError_t e = cudaEventCreate(&ev); e != cudaSuccess) {
      cleanup();
      return CudaFail(e, "cudaEventCreate");
    }
  }
  for (int i = 0; i < warmup; ++i) {
    if (engine::Status s = work(stream); !s.IsOk()) {
      cleanup();
      return engine::Error{s.Message()};
    }
  }
  for (int i = 0; i < runs; ++i) {
    cudaEventRecord(events[2 * i], stream);
    if (engine::Status s = work(stream); !s.IsOk()) {
      cleanup();
      return engine::Error{s.Message()};
    }
    cudaEventRecord(events[2 * i + 1], stream);
  }
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) {
    cleanup();
    return CudaFail(e, "cudaStreamSynchronize");
  }
  LatencyStats st;
  st.runs = runs;
  for (int i = 0; i < runs; ++i) {
    float ms = 0;
    if (cudaError_t e = cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]);
        e != cudaSuccess) {
      cleanup();
      return CudaFail(e, "cudaEventElapsedTime");
    }
    st.samples_us.push_back(1e3 * ms);
  }
  cleanup();
  std::vector<double> sorted = st.samples_us;
  std::sort(sorted.begin(), sorted.end());
  st.min_us = sorted.front();
  st.max_us = sorted.back();
  st.median_us = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                   : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  st.mean_us = std::accumulate(sorted.begin(), sorted.end(), 0.0) / runs;
  return st;
}

}  // namespace stof::profiler
