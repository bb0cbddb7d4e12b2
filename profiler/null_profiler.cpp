// NullProfiler (profiler.h): the profiler of a build without CUDA (and what the CUPTI build
// falls back to when it was configured without libcupti). It never calls `work` and reports
// every part unavailable with the reason, so callers handle "nothing measured" as data.
// Also the CUDA-off definitions of CreateProfiler / BuildHasCupti / TimeWithCudaEvents; the
// CUDA build defines them in cupti_profiler.cpp and cuda_event_timer.cpp instead.
#include <string>
#include <utility>

#include "profiler/profiler.h"

namespace stof::profiler {

namespace {
constexpr const char* kNoCuda = "this build has no CUDA (STOF_CUDA=OFF)";

class NullProfiler final : public Profiler {
 public:
  explicit NullProfiler(std::string why) : m_why(std::move(why)) {}
  std::string Name() const override { return "null"; }
  engine::Expected<ProfileResult> Measure(const WorkFn& /*work*/,
                                          const MeasureOptions& options) override {
    ProfileResult r;
    r.profiler = Name();
    r.label = options.label;
    r.options = options;
    if (r.options.metrics.empty()) r.options.metrics = DefaultMetricNames();
    r.availability.events_why_not = m_why;
    r.availability.activity_why_not = m_why;
    r.availability.range_why_not = m_why;
    ComputeSummary(&r);
    return r;
  }

 private:
  std::string m_why;
};
}  // namespace

std::unique_ptr<Profiler> CreateNullProfiler(std::string why) {
  return std::make_unique<NullProfiler>(why.empty() ? kNoCuda : std::move(why));
}

#ifndef STOF_PROFILER_WITH_CUPTI
std::unique_ptr<Profiler> CreateProfiler() {
#ifdef STOF_PROFILER_WITH_CUDA
  return CreateNullProfiler(
      "this build has no CUPTI (libcupti was not found when CMake configured the build)");
#else
  return CreateNullProfiler();
#endif
}
bool BuildHasCupti() { return false; }
#endif

#ifndef STOF_PROFILER_WITH_CUDA
engine::Expected<LatencyStats> TimeWithCudaEvents(const WorkFn& /*work*/, int /*warmup*/,
                                                  int /*runs*/) {
  return engine::Error{std::string("profiler: ") + kNoCuda + ": nothing can be timed"};
}
#endif

}  // namespace stof::profiler
