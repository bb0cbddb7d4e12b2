// The C API's plans and launches (stof_capi.cpp): the opaque stof_plan and stof_bound, a plan
// built on a device, the device made current around each launch and given back after, a bound
// call's checks (Bind). CUDA-free (the CUDA calls are in capi_launch.cpp). Internal to
// libstof_capi.so.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/capi/capi_inputs.h"

struct stof_plan {
  int device = 0;
  std::unique_ptr<stof::kernels::PreparedMha> mha;
  double select_ms = 0;
};

// A plan bound to one call's batch, heads, strides and scale (stof_bind_views): the workload
// checked once. stof_run_views binds one on the stack per call.
struct stof_bound {
  const stof_plan* plan = nullptr;
  stof::engine::Workload workload;
  stof::engine::MhaStrides q, kv, o;
  float scale = 0;
};

namespace stof::capi {

// Builds a plan for an already converted mask on `device`.
engine::Expected<std::unique_ptr<stof_plan>> BuildPlan(const engine::Mask& mask,
                                                       const engine::Workload& w,
                                                       const kernels::MhaRequest& request,
                                                       int device);
// Builds a plan for masks per batch row / head (the Hopper kernel only) on `device`.
engine::Expected<std::unique_ptr<stof_plan>> BuildPatternsPlan(const engine::MaskSet& set,
                                                               const engine::Workload& w,
                                                               const kernels::MhaRequest& request,
                                                               int device);
// `device`, or the current device when it is negative.
engine::Expected<int> ResolveDevice(int device);
// The device that holds `ptr`, or the current device when CUDA cannot say.
int DeviceOfPointer(const void* ptr);

// A launch of `plan`: its device made current for the launch (and the caller's given back
// after), then `launch`, its failure reported. Shared by stof_run, stof_mha and the strided /
// bound launches.
int LaunchOnPlanDevice(const stof_plan& plan, char* err, size_t err_len,
                       const std::function<engine::Status()>& launch);
// Deletes `plan` with its device current (its layout frees device memory there).
void ReleasePlan(stof_plan* plan);
int RunPlan(const stof_plan& plan, const void* q, const void* k, const void* v, void* o,
            void* stream, char* err, size_t err_len);
// stof_run_views' and stof_bind_views' checks: the plan's workload at batch B and H heads (and
// Lk keys when not 0), the strides (NULL = packed) and the scale, into `out`.
int Bind(const stof_plan* plan, int64_t B, int64_t H, const int64_t* q_strides,
         const int64_t* kv_strides, const int64_t* o_strides, float scale, stof_bound& out,
         char* err, size_t err_len, int64_t Lk = 0);
int RunBound(const stof_bound& b, const void* q, const void* k, const void* v, void* o,
             void* stream, char* err, size_t err_len, const kernels::MhaKeyLimits& keys = {});

}  // namespace stof::capi
