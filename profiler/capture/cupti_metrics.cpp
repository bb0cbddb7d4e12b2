// Pass 3's host side (cupti_range.h): which counters a chip has and how CUPTI's host API
// evaluates them, from the chip name and the context's counter availability image alone: the
// metric properties (units), the configuration image and its pass count (ResolveMetrics). No
// GPU needed, so the CPU tests resolve metrics for a named chip. The target side (the range
// pass on the GPU) is cupti_range.cpp.
#include "profiler/capture/cupti_range.h"

#include <cupti_target.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "profiler/capture/cupti_check.h"

namespace stof::profiler::detail {

std::vector<const char*> CStrings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const std::string& n : names) out.push_back(n.c_str());
  return out;
}

const std::vector<std::string>& TensorPipeCandidates() {
  static const std::vector<std::string> kCandidates = {
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
      "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed"};
  return kCandidates;
}

engine::Expected<std::unique_ptr<HostObject>> HostObject::Create(
    const std::string& chip, const std::vector<uint8_t>& counter_availability) {
  CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = counter_availability.empty() ? nullptr : counter_availability.data();
  STOF_CUPTI_TRY(cuptiProfilerHostInitialize(&p));
  std::unique_ptr<HostObject> h(new HostObject());
  h->m_object = p.pHostObject;
  return h;
}

HostObject::~HostObject() {
  if (!m_object) return;
  CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  p.pHostObject = m_object;
  (void)cuptiProfilerHostDeinitialize(&p);
}

namespace {

struct Properties {
  CUptiResult result = CUPTI_SUCCESS;
  std::string unit, description;
};

Properties MetricProperties(const HostObject& host, const std::string& name) {
  CUpti_Profiler_Host_GetMetricProperties_Params p{
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
  p.pHostObject = host.Get();
  p.pMetricName = name.c_str();
  Properties out;
  out.result = cuptiProfilerHostGetMetricProperties(&p);
  if (out.result == CUPTI_SUCCESS) {
    out.unit = p.pDimUnit ? p.pDimUnit : "";
    out.description = p.pDescription ? p.pDescription : "";
  }
  return out;
}

// A failed add leaves the host object unusable (later calls return CUPTI_ERROR_UNKNOWN), so
// callers add to a fresh object each time they try.
CUptiResult AddMetrics(const HostObject& host, const std::vector<std::string>& names) {
  std::vector<const char*> c = CStrings(names);
  CUpti_Profiler_Host_ConfigAddMetrics_Params p{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  p.pHostObject = host.Get();
  p.ppMetricNames = c.data();
  p.numMetrics = c.size();
  return cuptiProfilerHostConfigAddMetrics(&p);
}

engine::Expected<std::vector<uint8_t>> ConfigImage(const HostObject& host) {
  CUpti_Profiler_Host_GetConfigImageSize_Params s{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  s.pHostObject = host.Get();
  STOF_CUPTI_TRY(cuptiProfilerHostGetConfigImageSize(&s));
  std::vector<uint8_t> image(s.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params g{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  g.pHostObject = host.Get();
  g.configImageSize = image.size();
  g.pConfigImage = image.data();
  STOF_CUPTI_TRY(cuptiProfilerHostGetConfigImage(&g));
  return image;
}

engine::Expected<int> NumPasses(std::vector<uint8_t>& image) {
  CUpti_Profiler_Host_GetNumOfPasses_Params p{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  STOF_CUPTI_TRY(cuptiProfilerHostGetNumOfPasses(&p));
  return static_cast<int>(p.numOfPasses);
}

}  // namespace

engine::Expected<MetricConfig> ResolveMetrics(const std::string& chip,
                                              const std::vector<uint8_t>& counter_availability,
                                              const std::vector<std::string>& requested) {
  auto host = HostObject::Create(chip, counter_availability);
  if (!host.IsOk())
    return engine::Error{"CUPTI has no metric database for chip '" + chip + "': " + host.Message()};
  MetricConfig cfg;
  std::set<std::string> seen;
  for (const std::string& req : requested) {
    MetricInfo info;
    info.name = req;
    if (req == kTensorPipeAlias) {
      info.alias = req;
      std::string tried;
      for (const std::string& cand : TensorPipeCandidates()) {
        Properties p = MetricProperties(**host, cand);
        if (p.result == CUPTI_SUCCESS) {
          info.name = cand;
          info.unit = p.unit;
          info.description = p.description;
          break;
        }
        tried += (tried.empty() ? "" : ", ") + cand;
      }
      if (info.name == req)
        info.why_not = "no tensor-pipe metric known on chip " + chip + " (tried " + tried + ")";
    } else {
      Properties p = MetricProperties(**host, req);
      if (p.result != CUPTI_SUCCESS) {
        info.why_not = "unknown metric on chip " + chip + ": " + CuptiResultText(p.result);
      } else {
        info.unit = p.unit;
        info.description = p.description;
      }
    }
    if (info.why_not.empty() && !seen.insert(info.name).second)
      info.why_not = "listed twice; collected once";
    info.available = info.why_not.empty();
    cfg.infos.push_back(std::move(info));
  }

  auto collected = [&cfg] {
    std::vector<std::string> names;
    for (const MetricInfo& m : cfg.infos)
      if (m.available) names.push_back(m.name);
    return names;
  };
  std::vector<std::string> names = collected();
  if (names.empty()) {
    cfg.host = std::move(*host);
    return cfg;
  }
  // A name can have properties yet be refused in a configuration (a metric without a rollup,
  // "dram__bytes_read"); find such names one by one, each on a fresh host object.
  auto config_host = HostObject::Create(chip, counter_availability);
  if (!config_host.IsOk()) return engine::Error{config_host.Message()};
  if (AddMetrics(**config_host, names) != CUPTI_SUCCESS) {
    for (MetricInfo& m : cfg.infos) {
      if (!m.available) continue;
      STOF_ASSIGN_OR_RETURN(auto probe, HostObject::Create(chip, counter_availability));
      const CUptiResult r = AddMetrics(*probe, {m.name});
      if (r == CUPTI_SUCCESS) continue;
      m.available = false;
      m.why_not = "CUPTI refused it in a counter configuration: " + CuptiResultText(r);
      if (m.name.find('.') == std::string::npos)
        m.why_not += " (a metric needs a rollup such as .sum, .avg, .min or .max)";
    }
    names = collected();
    config_host = HostObject::Create(chip, counter_availability);
    if (!config_host.IsOk()) return engine::Error{config_host.Message()};
    if (!names.empty()) {
      const CUptiResult r = AddMetrics(**config_host, names);
      if (r != CUPTI_SUCCESS)
        return engine::Error{"cuptiProfilerHostConfigAddMetrics refused metrics it accepted one "
                             "by one: " + CuptiResultText(r)};
    }
  }
  if (!names.empty()) {
    STOF_ASSIGN_OR_RETURN(auto image, ConfigImage(**config_host));
    auto passes = NumPasses(image);
    if (!passes.IsOk()) return engine::Error{passes.Message()};
    cfg.config_image = std::move(image);
    cfg.passes = *passes;
  }
  cfg.names = std::move(names);
  cfg.host = std::move(*config_host);
  return cfg;
}

}  // namespace stof::profiler::detail
