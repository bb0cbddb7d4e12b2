// Passes 2 and 2b (cupti_activity.h): kernel records through the CUPTI Activity API.
// CUPTI hands records over in buffers we allocate (BufferRequested) and return to us, possibly
// on its own thread (BufferCompleted); the records go to a sink guarded by a mutex. The
// callbacks are registered once per process (CUPTI keeps them for its lifetime) and are
// noexcept: an exception inside them is caught and the batch dropped, never propagated.
#include "profiler/capture/cupti_activity.h"

#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "profiler/capture/cuda_timing.h"
#include "profiler/capture/cupti_check.h"
#include "profiler/measure_internal.h"

namespace stof::profiler::detail {

namespace {

// 8 MiB holds ~40k kernel records; CUPTI asks for another when one fills. Records must be
// 8-byte aligned (CUPTI's requirement for activity buffers).
constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kBufferAlign = 8;

struct Sink {
  std::mutex mutex;
  std::vector<KernelRecord>* records = nullptr;  // null: count only (overhead pass)
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
    CUpti_Activity* rec = nullptr;
    // GetNextRecord ends with CUPTI_ERROR_MAX_LIMIT_REACHED; any other error ends the buffer.
    while (buffer && cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS) {
      if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
          rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
        continue;
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

// Enables kernel tracing and points the sink at `records` (null: count only); the destructor
// disables tracing, flushes every buffer and detaches the sink, on every path out.
class TracingScope {
 public:
  explicit TracingScope(std::vector<KernelRecord>* records) {
    Sink& sink = TheSink();
    std::lock_guard<std::mutex> lock(sink.mutex);
    sink.records = records;
    sink.kernels_seen = 0;
    sink.dropped = 0;
  }
  engine::Status Enable() {
    STOF_CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    m_enabled = true;
    return engine::Status::Ok();
  }
  // Flushes after the caller synchronised, so every record is complete; then disables.
  engine::Status Finish() {
    STOF_CUPTI_TRY(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    m_enabled = false;
    STOF_CUPTI_TRY(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
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
      (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    Sink& sink = TheSink();
    std::lock_guard<std::mutex> lock(sink.mutex);
    sink.records = nullptr;
  }
  TracingScope(const TracingScope&) = delete;
  TracingScope& operator=(const TracingScope&) = delete;

 private:
  bool m_enabled = false;
};

}  // namespace

engine::Status RunActivityPass(const WorkFn& work, int runs, cudaStream_t stream,
                               ActivityPassResult* out) {
  *out = ActivityPassResult{};
  STOF_RETURN_IF_ERROR(EnsureCallbacks());
  STOF_PROFILER_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<KernelRecord> records;
  {
    TracingScope tracing(&records);
    STOF_RETURN_IF_ERROR(tracing.Enable());
    std::vector<uint64_t> boundaries(1, 0);
    STOF_CUPTI_TRY(cuptiGetTimestamp(&boundaries[0]));
    for (int i = 0; i < runs; ++i) {
      STOF_RETURN_IF_ERROR(work(stream));
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
    {
      std::lock_guard<std::mutex> lock(TheSink().mutex);
      taken.swap(records);
    }
    out->foreign_records = AssignRuns(&taken, boundaries);
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
