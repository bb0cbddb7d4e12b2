// Internal, CUDA-free pieces of the CUPTI profiler that are pure bookkeeping, kept apart so the
// CPU tests cover them without a GPU: splitting activity records into runs, the per-run GPU
// span, matching auto ranges to kernels, and the environment switch. Included by
// cupti_profiler.cpp, measure_common.cpp and tests/profiler; not part of the public API.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/model/profile_result.h"
#include "profiler/profiler.h"

namespace stof::profiler::detail {

// `boundaries` are CUPTI timestamps taken after synchronising the stream before run 0 and after
// each run: run i owns records whose start lies in [boundaries[i], boundaries[i + 1]). Sets
// each record's `run`, drops records outside every run (another thread's work), sorts by
// (run, start, correlation id) and returns how many were dropped.
size_t AssignRuns(std::vector<KernelRecord>* kernels, const std::vector<uint64_t>& boundaries);

// Run i owns the records whose CUPTI correlation id (the id of the API call that launched the
// kernel) maps to run i in `run_of_correlation` (from the external correlation records of the
// ids pushed around each run). Clock-free: a long-lived process's CPU and GPU clocks drift
// apart, and CUPTI's normalised kernel timestamps then fall outside the CPU-timestamp windows
// of short runs (AssignRuns), which dropped every kernel of a small segment after many
// captures. Drops unmapped records (another thread's launches), sorts as AssignRuns and returns
// how many were dropped.
size_t AssignRunsByCorrelation(std::vector<KernelRecord>* kernels,
                               const std::unordered_map<uint32_t, int>& run_of_correlation);

// GPU span of each run (last end - first start, in us); 0 for a run without kernels.
std::vector<double> RunSpansUs(const std::vector<KernelRecord>& kernels, int runs);

// Sum of kernel durations of each run (us).
std::vector<double> RunKernelTimesUs(const std::vector<KernelRecord>& kernels, int runs);

// Auto range: range i is the i-th kernel launched in the counter pass. When run 0 of the
// activity pass launched exactly as many kernels as there are ranges, name them.
void MatchRangesToKernels(std::vector<RangeRecord>* ranges,
                          const std::vector<KernelRecord>& kernels);

// Auto range: kernels of activity run 0 beyond the `ranges` CUPTI profiled (0 when the
// trace has no run 0 or fewer kernels). CUPTI does not count these as dropped.
uint64_t UnprofiledKernels(size_t ranges, const std::vector<KernelRecord>& kernels);

// Reads STOF_PROFILER_DISABLE; an unparsable value disables nothing and says why in *note.
DisableSpec DisableSpecFromEnv(std::string* note);

// "<CUPTI message>" -> "<CUPTI message>; <hint>" for the failures a user can fix.
std::string WithHint(const std::string& message);

}  // namespace stof::profiler::detail
