// Public, CUDA-free interface of the measurement layer. This first piece is latency by CUDA
// events (the fallback every later CUPTI path keeps: warm-up, then the median of N timed runs).
// The CUPTI Activity and Range Profiler parts come with the profiler issue.
// Used by GPU tests and benchmarks; the callable launches work on the opaque stream it is given.
#pragma once

#include <functional>
#include <vector>

#include "engine/core/status.h"

namespace stof::profiler {

struct LatencyStats {
  int runs = 0;
  double median_us = 0, min_us = 0, max_us = 0, mean_us = 0;
  std::vector<double> samples_us;  // every timed run, in order
};

// Launches `work(stream)` `warmup` times, then times `runs` launches one by one with CUDA
// events on a fresh stream. Fails (with the CUDA call and its error) when there is no GPU or
// `work` fails; runs must be >= 1.
engine::Expected<LatencyStats> TimeWithCudaEvents(
    const std::function<engine::Status(void* stream)>& work, int warmup, int runs);

}  // namespace stof::profiler
