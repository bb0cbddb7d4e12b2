// Pass 3 (cupti_range.h): counters through the CUPTI Range Profiler (CUDA 12.6+ API), the
// target side (the host side, metric resolution without a GPU, is cupti_metrics.cpp).
// Sequence: cuptiProfilerInitialize (once per process) -> device support check -> chip name
// -> counter availability image of the context -> host object: metric properties (units),
// config image, pass count -> cuptiRangeProfilerEnable -> counter data image -> SetConfig ->
// Start [Push] work [Pop] Stop, repeated until CUPTI says every pass was submitted -> Decode
// -> per range: name, EvaluateToGpuValues -> Disable.
// Replay: auto range goes with kernel replay (one range per kernel; CUPTI saves and restores
// the memory a kernel writes and replays it once per pass, so `work` runs once); a user range
// (one range around all of `work`) goes with user replay, where we call `work` once per pass
// ourselves and nothing is restored: `work` must be re-runnable (docs/profiler.md). User range
// with kernel replay is reported to fail in SetConfig (CUPTI_ERROR_INVALID_OPERATION).
// The CUcontext comes from the driver through cudaGetDriverEntryPointByVersion, so nothing
// here links libcuda (a CUDA build without a driver still starts and reports "no GPU").
#include "profiler/capture/cupti_range.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "profiler/capture/cupti_check.h"

namespace stof::profiler::detail {

namespace {

// ResolveMetrics builds two or more host objects (about 60 ms each with CUPTI 13.0, timed on
// the build machine); a tuner measures many candidates with the same metrics, so the result is
// kept per chip, counter availability image and metric list, for the life of the process.
engine::Expected<std::shared_ptr<const MetricConfig>> CachedMetricConfig(
    const std::string& chip, const std::vector<uint8_t>& availability,
    const std::vector<std::string>& metrics) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const MetricConfig>> cache;
  std::string key = chip + '\n';
  for (const std::string& m : metrics) key += m + '\n';
  key.append(availability.begin(), availability.end());
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  STOF_ASSIGN_OR_RETURN(auto cfg, ResolveMetrics(chip, availability, metrics));
  if (cache.size() >= 16) cache.clear();  // bounded: metric lists rarely change in a process
  auto shared = std::make_shared<const MetricConfig>(std::move(cfg));
  cache.emplace(std::move(key), shared);
  return shared;
}

engine::Status EnsureProfilerInitialized() {
  static std::mutex mutex;
  static bool initialized = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (initialized) return engine::Status::Ok();
  CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  STOF_CUPTI_TRY(cuptiProfilerInitialize(&p));
  initialized = true;
  return engine::Status::Ok();
}

const char* SupportLevel(CUpti_Profiler_Support_Level l) {
  switch (l) {
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    default: return "unknown";
  }
}

engine::Status CheckDeviceSupported(int device) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  STOF_CUPTI_TRY(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return engine::Status::Ok();
  // Name each part that is known to be off; "unknown" alone is not a reason to give up.
  std::string why;
  auto check = [&why](const char* what, CUpti_Profiler_Support_Level l) {
    if (l == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED || l == CUPTI_PROFILER_CONFIGURATION_DISABLED)
      why += (why.empty() ? "" : ", ") + std::string(what) + " " + SupportLevel(l);
  };
  check("architecture", p.architecture);
  check("SLI", p.sli);
  check("vGPU profiling", p.vGpu);
  check("confidential compute", p.confidentialCompute);
  check("CMP (crypto mining processor)", p.cmp);
  check("WSL", p.wsl);
  if (why.empty()) return engine::Status::Ok();
  return engine::Error{"cuptiProfilerDeviceSupported: device " + std::to_string(device) +
                       " cannot be range-profiled: " + why};
}

engine::Expected<std::string> ChipName(int device) {
  CUpti_Device_GetChipName_Params p{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  p.deviceIndex = static_cast<size_t>(device);
  STOF_CUPTI_TRY(cuptiDeviceGetChipName(&p));
  if (!p.pChipName || !*p.pChipName) return engine::Error{"cuptiDeviceGetChipName: empty name"};
  return std::string(p.pChipName);
}

engine::Expected<CUcontext> CurrentContext() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  STOF_PROFILER_CUDA_TRY(
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !fn)
    return engine::Error{"cudaGetDriverEntryPointByVersion: cuCtxGetCurrent not found"};
  CUcontext ctx = nullptr;
  const CUresult r = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(fn)(&ctx);
  if (r != CUDA_SUCCESS || !ctx)
    return engine::Error{"cuCtxGetCurrent: no current CUDA context (driver error " +
                         std::to_string(static_cast<int>(r)) + ")"};
  return ctx;
}

engine::Expected<std::vector<uint8_t>> CounterAvailability(CUcontext ctx) {
  CUpti_Profiler_GetCounterAvailability_Params p{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  p.ctx = ctx;
  STOF_CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p));
  std::vector<uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  STOF_CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p));
  image.resize(p.counterAvailabilityImageSize);
  return image;
}

// The range profiler object of one context; stopped and disabled on every path out.
class RangeProfilerSession {
 public:
  ~RangeProfilerSession() {
    if (m_started) {
      CUpti_RangeProfiler_Stop_Params p{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      p.pRangeProfilerObject = m_object;
      (void)cuptiRangeProfilerStop(&p);
    }
    if (m_object) {
      CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      p.pRangeProfilerObject = m_object;
      (void)cuptiRangeProfilerDisable(&p);
    }
  }
  engine::Status Enable(CUcontext ctx) {
    CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.ctx = ctx;
    STOF_CUPTI_TRY(cuptiRangeProfilerEnable(&p));
    m_object = p.pRangeProfilerObject;
    return engine::Status::Ok();
  }
  CUpti_RangeProfiler_Object* Get() const { return m_object; }
  engine::Status Start() {
    CUpti_RangeProfiler_Start_Params p{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = m_object;
    STOF_CUPTI_TRY(cuptiRangeProfilerStart(&p));
    m_started = true;
    return engine::Status::Ok();
  }
  engine::Expected<bool> Stop() {  // true when every pass has been submitted
    CUpti_RangeProfiler_Stop_Params p{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = m_object;
    m_started = false;
    STOF_CUPTI_TRY(cuptiRangeProfilerStop(&p));
    return p.isAllPassSubmitted != 0;
  }
  engine::Status Push(const std::string& name) {
    CUpti_RangeProfiler_PushRange_Params p{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = m_object;
    p.pRangeName = name.c_str();
    STOF_CUPTI_TRY(cuptiRangeProfilerPushRange(&p));
    return engine::Status::Ok();
  }
  engine::Status Pop() {
    CUpti_RangeProfiler_PopRange_Params p{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = m_object;
    STOF_CUPTI_TRY(cuptiRangeProfilerPopRange(&p));
    return engine::Status::Ok();
  }
  engine::Expected<uint64_t> Decode() {
    CUpti_RangeProfiler_DecodeData_Params p{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = m_object;
    STOF_CUPTI_TRY(cuptiRangeProfilerDecodeData(&p));
    return static_cast<uint64_t>(p.numOfRangeDropped);
  }

 private:
  CUpti_RangeProfiler_Object* m_object = nullptr;
  bool m_started = false;
};

// Values of `names` for one range; a metric CUPTI cannot evaluate alone becomes NaN.
std::vector<double> Evaluate(const HostObject& host, const std::vector<uint8_t>& data,
                             size_t range, const std::vector<std::string>& names,
                             std::vector<std::string>* notes) {
  auto eval = [&](const std::vector<const char*>& c, double* values) {
    CUpti_Profiler_Host_EvaluateToGpuValues_Params p{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    p.pHostObject = host.Get();
    p.pCounterDataImage = data.data();
    p.counterDataImageSize = data.size();
    p.rangeIndex = range;
    p.ppMetricNames = const_cast<const char**>(c.data());
    p.numMetrics = c.size();
    p.pMetricValues = values;
    return cuptiProfilerHostEvaluateToGpuValues(&p);
  };
  std::vector<double> values(names.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<const char*> c = CStrings(names);
  if (eval(c, values.data()) == CUPTI_SUCCESS) return values;
  for (size_t i = 0; i < names.size(); ++i) {
    double v = 0;
    const CUptiResult r = eval({c[i]}, &v);
    if (r == CUPTI_SUCCESS) {
      values[i] = v;
    } else {
      values[i] = std::numeric_limits<double>::quiet_NaN();
      notes->push_back("range " + std::to_string(range) + ": " + names[i] +
                       " could not be evaluated: " + CuptiResultText(r));
    }
  }
  return values;
}

}  // namespace

engine::Status RunRangePass(const WorkFn& work, const MeasureOptions& options, int device,
                            cudaStream_t stream, RangePassResult* out) {
  *out = RangePassResult{};
  STOF_RETURN_IF_ERROR(EnsureProfilerInitialized());
  STOF_RETURN_IF_ERROR(CheckDeviceSupported(device));
  auto chip = ChipName(device);
  if (!chip.IsOk()) return chip.ToStatus();
  out->chip = *chip;
  STOF_ASSIGN_OR_RETURN(auto ctx, CurrentContext());
  STOF_ASSIGN_OR_RETURN(auto availability, CounterAvailability(ctx));
  STOF_ASSIGN_OR_RETURN(auto cached, CachedMetricConfig(*chip, availability, options.metrics));
  const MetricConfig& cfg = *cached;
  out->metrics = cfg.infos;
  if (cfg.names.empty())
    return engine::Error{"none of the requested metrics can be collected on chip " + *chip};

  const bool user = options.range_mode == RangeMode::kUser;
  const size_t max_ranges = user ? 1 : static_cast<size_t>(options.max_ranges);
  RangeProfilerSession session;
  STOF_RETURN_IF_ERROR(session.Enable(ctx));

  std::vector<const char*> cnames = CStrings(cfg.names);
  CUpti_RangeProfiler_GetCounterDataSize_Params sz{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  sz.pRangeProfilerObject = session.Get();
  sz.pMetricNames = cnames.data();
  sz.numMetrics = cnames.size();
  sz.maxNumOfRanges = max_ranges;
  sz.maxNumRangeTreeNodes = static_cast<uint32_t>(max_ranges);
  STOF_CUPTI_TRY(cuptiRangeProfilerGetCounterDataSize(&sz));
  std::vector<uint8_t> data(sz.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = session.Get();
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  STOF_CUPTI_TRY(cuptiRangeProfilerCounterDataImageInitialize(&init));

  CUpti_RangeProfiler_SetConfig_Params sc{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = session.Get();
  sc.configSize = cfg.config_image.size();
  sc.pConfig = cfg.config_image.data();
  sc.counterDataImageSize = data.size();
  sc.pCounterDataImage = data.data();
  sc.range = user ? CUPTI_UserRange : CUPTI_AutoRange;
  sc.replayMode = user ? CUPTI_UserReplay : CUPTI_KernelReplay;
  sc.maxRangesPerPass = max_ranges;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  STOF_CUPTI_TRY(cuptiRangeProfilerSetConfig(&sc));

  STOF_PROFILER_CUDA_TRY(cudaStreamSynchronize(stream));
  const std::string range_name = options.label.empty() ? "work" : options.label;
  bool all_submitted = false;
  int passes = 0;
  while (!all_submitted) {
    if (passes >= options.max_passes)
      return engine::Error{"counter pass: CUPTI still wanted passes after " +
                           std::to_string(passes) + " (max_passes; the metrics need " +
                           std::to_string(cfg.passes) + ")"};
    STOF_RETURN_IF_ERROR(session.Start());
    if (user) STOF_RETURN_IF_ERROR(session.Push(range_name));
    engine::Status ws = work(stream);
    const cudaError_t se = cudaStreamSynchronize(stream);
    // Close the range and the pass even after a failure, so CUPTI is left consistent.
    engine::Status pop = user ? session.Pop() : engine::Status::Ok();
    auto stop = session.Stop();
    if (!ws.IsOk()) return ws;
    if (se != cudaSuccess)
      return ProfilerCudaError(se, "cudaStreamSynchronize(stream)", __FILE__, __LINE__);
    STOF_RETURN_IF_ERROR(pop);
    if (!stop.IsOk()) return stop.ToStatus();
    all_submitted = *stop;
    ++passes;
  }
  out->passes = passes;
  STOF_ASSIGN_OR_RETURN(auto dropped, session.Decode());
  out->ranges_dropped = dropped;

  CUpti_RangeProfiler_GetCounterDataInfo_Params info{
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  STOF_CUPTI_TRY(cuptiRangeProfilerGetCounterDataInfo(&info));

  for (size_t i = 0; i < info.numTotalRanges; ++i) {
    RangeRecord rr;
    rr.index = static_cast<int>(i);
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri{
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    ri.pCounterDataImage = data.data();
    ri.counterDataImageSize = data.size();
    ri.rangeIndex = i;
    ri.rangeDelimiter = "/";
    // The name's storage belongs to CUPTI (its ownership is not documented for this call):
    // copied, never freed here.
    if (cuptiRangeProfilerCounterDataGetRangeInfo(&ri) == CUPTI_SUCCESS && ri.rangeName)
      rr.name = ri.rangeName;
    else
      rr.name = std::to_string(i);
    const std::vector<double> values = Evaluate(*cfg.host, data, i, cfg.names, &out->notes);
    for (size_t m = 0; m < cfg.names.size(); ++m) {
      std::string unit;
      for (const MetricInfo& mi : cfg.infos)
        if (mi.available && mi.name == cfg.names[m]) unit = mi.unit;
      rr.metrics.push_back({cfg.names[m], values[m], unit});
    }
    out->ranges.push_back(std::move(rr));
  }
  return engine::Status::Ok();
}

}  // namespace stof::profiler::detail
