// Passes 2 and 2b (cupti_activity.h): kernel records through the CUPTI Activity API.
// CUPTI hands records over in buffers we allocate (BufferRequested) and return to us, possibly
// on its own thread (BufferCompleted); the records go to a sink guarded by a mutex. The
// callbacks are registered once per process (CUPTI keeps them for its lifetime) and are
// noexcept: an exception inside them is caught and the batch dropped, never propagated.
// Runs are told apart by external correlation ids pushed around each run (the ids of the API
// calls that launched each kernel), not by comparing kernel timestamps with CPU timestamps:
// in a long-lived process the two clocks drift apart and short runs lost every kernel.
#include "profiler/capture/cupti_activity.h"

#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "profiler/capture/cuda_timing.h"
#include "profiler/capture/cupti_check.h"
#include "profiler/measure_internal.h"

namespace stof::profiler::detail {

namespace {

// 8 MiB holds ~40k kernel records; CUPTI asks for another when one fills. Records must be
// 8-byte aligned (CUPTI's requirement for activity buffers).
constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kBufferAlign = 8;

// The external correlation kind our runs push (run i pushes id i + 1).
constexpr CUpti_ExternalCorrelationKind kRunKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;

struct Sink {
  std::mutex mutex;
  std::vector<KernelRecord>* records = nullptr;  // null: count only (overhead pass)
  std::unordered_map<uint32_t, int>* run_of_correlation = nullptr;  // null: not correlating
  uint64_t kernels_seen = 0;
  uint64_t dropped = 0;
};
Sink& TheSink() {
  static Sink sink;
  return sink;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept {
  void* p = std::aligned_alloc(kBufferAlign, kBufferBytes);
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? kBufferBytes : 0;  // null: CUPTI drops records and counts them
  *max_records = 0;              // as many as fit
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer,
                              size_t /*size*/, size_t valid_size) noexcept {
  try {
    std::vector<KernelRecord> batch;
    std::vector<std::pair<uint32_t, int>> runs;  // (correlation id, run) of our pushed ids
    CUpti_Activity* rec = nullptr;
    // GetNextRecord ends with CUPTI_ERROR_MAX_LIMIT_REACHED; any other error ends the buffer.
    while (buffer && cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS) {
      if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
        if (x->externalKind == kRunKind && x->externalId >= 1)
          runs.emplace_back(x->correlationId, static_cast<int>(x->externalId - 1));
        continue;
      }
      if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
          rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
        continue;  // the runtime and driver API records that correlation needs
      // Newer CUPTI versions append fields; the ones read here keep their offsets.
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      KernelRecord r;
      r.mangled_name = k->name ? k->name : "?";
      r.start_ns = k->start;
      r.end_ns = k->end;
      r.grid = {k->gridX, k->gridY, k->gridZ};
      r.block = {k->blockX, k->blockY, k->blockZ};
      r.registers_per_thread = k->registersPerThread;
      r.static_smem_bytes = k->staticSharedMemory;
      r.dynamic_smem_bytes = k->dynamicSharedMemory;
      r.device_id = k->deviceId;
      r.context_id = k->contextId;
      r.stream_id = k->streamId;
      r.correlation_id = k->correlationId;
      batch.push_back(std::move(r));
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
    Sink& sink = TheSink();
    std::lock_guard<std::mutex> lock(sink.mutex);
    sink.kernels_seen += batch.size();
    sink.dropped += dropped;
    if (sink.records)
      sink.records->insert(sink.records->end(), std::make_move_iterator(batch.begin()),
                           std::make_move_iterator(batch.end()));
    if (sink.run_of_correlation)
      for (const auto& [correlation, run] : runs) (*sink.run_of_correlation)[correlation] = run;
  } catch (...) {
    // Out of memory while copying records: this batch is lost; nothing may reach CUPTI.
  }
  std::free(buffer);
}

engine::Status EnsureCallbacks() {
  static std::mutex mutex;
  static bool registered = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (registered) return engine::Status::Ok();
  STOF_CUPTI_TRY(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted));
  registered = true;
  return engine::Status::Ok();
}

std::string Demangle(const std::string& mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string s = (status == 0 && out) ? out : mangled;
  std::free(out);
  return s;
}

// The activity kinds external correlation needs besides the kernels: its own records, and the
// runtime and driver API records whose correlation ids they carry (as NVIDIA's samples enable).
constexpr CUpti_ActivityKind kCorrelationKinds[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                     CUPTI_ACTIVITY_KIND_RUNTIME,
                                                     CUPTI_ACTIVITY_KIND_DRIVER};

// Enables kernel tracing and points the sink at `records` (null: count only) and, when given,
// `run_of_correlation`; the destructor disables tracing, flushes every buffer and detaches the
// sink, on every path out.
class TracingScope {
 public:
  explicit TracingScope(std::vector<KernelRecord>* records,
                        std::unordered_map<uint32_t, int>* run_of_correlation = nullptr) {
    Sink& sink = TheSink();
    std::lock_guard<std::mutex> lock(sink.mutex);
    sink.records = records;
    sink.run_of_correlation = run_of_correlation;
    sink.kernels_seen = 0;
    sink.dropped = 0;
  }
  // With `correlate`, also the external correlation kinds; when CUPTI refuses one of them the
  // scope traces kernels alone and Correlating() says so (runs then go by timestamps).
  engine::Status Enable(bool correlate = false) {
    STOF_CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    m_enabled = true;
    if (correlate) {
      m_correlating = true;
      for (CUpti_ActivityKind k : kCorrelationKinds) {
        if (cuptiActivityEnable(k) != CUPTI_SUCCESS) {
          m_correlating = false;
          break;
        }
        ++m_correlation_kinds;
      }
      if (!m_correlating) DisableCorrelation();
    }
    return engine::Status::Ok();
  }
  bool Correlating() const { return m_correlating; }
  // Flushes after the caller synchronised, so every record is complete; then disables.
  engine::Status Finish() {
    STOF_CUPTI_TRY(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    m_enabled = false;
    STOF_CUPTI_TRY(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    DisableCorrelation();
    STOF_CUPTI_TRY(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    return engine::Status::Ok();
  }
  uint64_t Dropped() {
    std::lock_guard<std::mutex> lock(TheSink().mutex);
    return TheSink().dropped;
  }
  ~TracingScope() {
    if (m_enabled) {
      (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      DisableCorrelation();
      (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    Sink& sink = TheSink();
    std::lock_guard<std::mutex> lock(sink.mutex);
    sink.records = nullptr;
    sink.run_of_correlation = nullptr;
  }
  TracingScope(const TracingScope&) = delete;
  TracingScope& operator=(const TracingScope&) = delete;

 private:
  void DisableCorrelation() {
    for (int i = 0; i < m_correlation_kinds; ++i) (void)cuptiActivityDisable(kCorrelationKinds[i]);
    m_correlation_kinds = 0;
  }

  bool m_enabled = false;
  bool m_correlating = false;
  int m_correlation_kinds = 0;  // kCorrelationKinds enabled so far
};

// Pushes run `run`'s external correlation id for the API calls of one run; pops it on every
// path out. A failed push leaves the run uncorrelated (the pass then uses timestamps).
class RunCorrelation {
 public:
  RunCorrelation(bool active, int run)
      : m_pushed(active && cuptiActivityPushExternalCorrelationId(kRunKind, static_cast<uint64_t>(run) + 1) ==
                               CUPTI_SUCCESS) {}
  ~RunCorrelation() {
    uint64_t last = 0;
    if (m_pushed) (void)cuptiActivityPopExternalCorrelationId(kRunKind, &last);
  }
  bool Pushed() const { return m_pushed; }
  RunCorrelation(const RunCorrelation&) = delete;
  RunCorrelation& operator=(const RunCorrelation&) = delete;

 private:
  bool m_pushed;
};

}  // namespace

engine::Status RunActivityPass(const WorkFn& work, int runs, cudaStream_t stream,
                               ActivityPassResult* out) {
  *out = ActivityPassResult{};
  STOF_RETURN_IF_ERROR(EnsureCallbacks());
  STOF_PROFILER_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<KernelRecord> records;
  std::unordered_map<uint32_t, int> run_of_correlation;
  {
    TracingScope tracing(&records, &run_of_correlation);
    STOF_RETURN_IF_ERROR(tracing.Enable(/*correlate=*/true));
    bool correlated = tracing.Correlating();
    std::vector<uint64_t> boundaries(1, 0);
    STOF_CUPTI_TRY(cuptiGetTimestamp(&boundaries[0]));
    for (int i = 0; i < runs; ++i) {
      {
        RunCorrelation scope(correlated, i);
        correlated = correlated && scope.Pushed();
        STOF_RETURN_IF_ERROR(work(stream));
      }
      STOF_PROFILER_CUDA_TRY(cudaStreamSynchronize(stream));
      uint64_t t = 0;
      STOF_CUPTI_TRY(cuptiGetTimestamp(&t));
      boundaries.push_back(t);
    }
    STOF_RETURN_IF_ERROR(tracing.Finish());
    out->dropped_records = tracing.Dropped();
    // `records` is complete once Finish has flushed; the scope then detaches the sink.
    out->foreign_records = 0;
    std::vector<KernelRecord> taken;
    std::unordered_map<uint32_t, int> runs_by_id;
    {
      std::lock_guard<std::mutex> lock(TheSink().mutex);
      taken.swap(records);
      runs_by_id.swap(run_of_correlation);
    }
    // Correlation ids when every run pushed its id and CUPTI reported them; else timestamps.
    out->by_correlation = correlated && !runs_by_id.empty();
    out->foreign_records = out->by_correlation ? AssignRunsByCorrelation(&taken, runs_by_id)
                                               : AssignRuns(&taken, boundaries);
    out->kernels = std::move(taken);
  }
  for (KernelRecord& k : out->kernels) k.name = Demangle(k.mangled_name);
  out->run_us = RunSpansUs(out->kernels, runs);
  return engine::Status::Ok();
}

engine::Expected<LatencyStats> RunOverheadPass(const WorkFn& work, int warmup, int runs,
                                               cudaStream_t stream) {
  STOF_RETURN_IF_ERROR(EnsureCallbacks());
  STOF_PROFILER_CUDA_TRY(cudaStreamSynchronize(stream));
  TracingScope tracing(nullptr);
  STOF_RETURN_IF_ERROR(tracing.Enable());
  auto st = TimeOnStream(work, warmup, runs, stream);
  if (!st.IsOk()) return st;
  STOF_RETURN_IF_ERROR(tracing.Finish());
  return st;
}

}  // namespace stof::profiler::detail
