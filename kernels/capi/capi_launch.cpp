// The C API's plans and launches (capi_launch.h).
#include "kernels/capi/capi_launch.h"

#include <cuda_runtime.h>

#include <chrono>
#include <utility>

#include "kernels/device_query.h"

namespace stof::capi {

namespace {
// Makes `device` current for a scope and gives the caller's current device back at its end:
// the C API must not move its caller's thread to another GPU (torch, for one, reads the
// current device from the CUDA runtime, so a call on cuda:1 under cuda:0 would leave later
// torch work on cuda:1). cudaSetDevice is called only where the device differs.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaError_t e = cudaGetDevice(&m_caller); e != cudaSuccess) {
      m_error = e;
      return;
    }
    if (m_caller != device) {
      m_error = cudaSetDevice(device);
      m_switched = m_error == cudaSuccess;
    }
  }
  ~DeviceScope() {
    if (m_switched) (void)cudaSetDevice(m_caller);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t Error() const { return m_error; }

 private:
  int m_caller = 0;
  bool m_switched = false;
  cudaError_t m_error = cudaSuccess;
};

}  // namespace

// A launch of `plan`: its device made current for the launch, then `launch` (returning
// engine::Status), its failure reported. Shared by stof_run, stof_mha and the strided / bound
// launches.
int LaunchOnPlanDevice(const stof_plan& plan, char* err, size_t err_len,
                       const std::function<engine::Status()>& launch) {
  const DeviceScope scope(plan.device);
  if (cudaError_t e = scope.Error(); e != cudaSuccess)
    return Report({STOF_ERR_CUDA, "making the plan's device " + std::to_string(plan.device) +
                                      " current: " + std::string(cudaGetErrorString(e))},
                  err, err_len);
  engine::Status s = launch();
  if (!s.IsOk()) return Report({CodeOf(s.Message()), s.Message()}, err, err_len);
  return STOF_OK;
}

namespace {

// A plan on `device`: the choice (timed as the selection) and the prepared layout, with the
// device current while they run. Shared by the one-mask and the per batch row / head plans.
template <class Choose, class Create>
engine::Expected<std::unique_ptr<stof_plan>> BuildPlanWith(int device, Choose&& choose,
                                                           Create&& create) {
  const DeviceScope scope(device);
  if (cudaError_t e = scope.Error(); e != cudaSuccess)
    return engine::MakeError("making device " + std::to_string(device) +
                             " current: cudaSetDevice: " + cudaGetErrorString(e));
  auto spec = kernels::QueryDeviceSpec(device);
  if (!spec.IsOk()) return spec.ToStatus();
  const auto t0 = std::chrono::steady_clock::now();
  engine::Expected<kernels::MhaChoice> choice = choose(*spec);
  if (!choice.IsOk()) return choice.ToStatus();
  const double select_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  engine::Expected<std::unique_ptr<kernels::PreparedMha>> prepared = create(*choice);
  if (!prepared.IsOk()) return prepared.ToStatus();
  auto plan = std::make_unique<stof_plan>();
  plan->device = device;
  plan->mha = std::move(*prepared);
  plan->select_ms = select_ms;
  return plan;
}

}  // namespace

// Builds a plan for an already converted mask on `device`.
engine::Expected<std::unique_ptr<stof_plan>> BuildPlan(const engine::Mask& mask,
                                                       const engine::Workload& w,
                                                       const kernels::MhaRequest& request,
                                                       int device) {
  return BuildPlanWith(
      device,
      [&](const engine::DeviceSpec& spec) {
        return kernels::ChooseMhaConfig(mask, w, spec, request);
      },
      [&](const kernels::MhaChoice& c) { return kernels::PreparedMha::Create(mask, w, c); });
}

engine::Expected<std::unique_ptr<stof_plan>> BuildPatternsPlan(const engine::MaskSet& set,
                                                               const engine::Workload& w,
                                                               const kernels::MhaRequest& request,
                                                               int device) {
  return BuildPlanWith(
      device,
      [&](const engine::DeviceSpec& spec) {
        return kernels::ChooseMhaConfigForPatterns(set, w, spec, request);
      },
      [&](const kernels::MhaChoice& c) { return kernels::PreparedMha::Create(set, w, c); });
}

engine::Expected<int> ResolveDevice(int device) {
  if (device >= 0) return device;
  int current = 0;
  if (cudaError_t e = cudaGetDevice(&current); e != cudaSuccess)
    return engine::MakeError(std::string("cudaGetDevice: ") + cudaGetErrorString(e));
  return current;
}

// The device that holds `ptr`, or the current device when CUDA cannot say.
int DeviceOfPointer(const void* ptr) {
  cudaPointerAttributes a{};
  if (ptr != nullptr && cudaPointerGetAttributes(&a, ptr) == cudaSuccess &&
      a.type == cudaMemoryTypeDevice)
    return a.device;
  (void)cudaGetLastError();
  int current = 0;
  (void)cudaGetDevice(&current);
  return current;
}

void ReleasePlan(stof_plan* plan) {
  const DeviceScope scope(plan->device);
  delete plan;
}

int RunPlan(const stof_plan& plan, const void* q, const void* k, const void* v, void* o,
            void* stream, char* err, size_t err_len) {
  return LaunchOnPlanDevice(plan, err, err_len,
                            [&] { return plan.mha->Launch(q, k, v, o, stream); });
}

// stof_run_views' and stof_bind_views' checks: the plan's workload at batch B and H heads, the
// strides (NULL = packed) and the scale, into `out`.
int Bind(const stof_plan* plan, int64_t B, int64_t H, const int64_t* q_strides,
         const int64_t* kv_strides, const int64_t* o_strides, float scale, stof_bound& out,
         char* err, size_t err_len, int64_t Lk) {
  if (plan == nullptr) return Report({STOF_ERR_INVALID, "plan: must not be null"}, err, err_len);
  out.plan = plan;
  out.workload = plan->mha->PreparedWorkload();
  if (Lk != 0) {
    if (Lk < 1 || Lk > out.workload.seq_len)
      return Report({STOF_ERR_INVALID, "Lk: expected 1.." + std::to_string(out.workload.seq_len) +
                                           " (the plan's keys), got " + std::to_string(Lk)},
                    err, err_len);
    out.workload.q_len = out.workload.QLen();
    out.workload.seq_len = Lk;
  }
  const int64_t group = out.workload.GroupSize();
  if (H < 1 || H % group != 0)
    return Report({STOF_ERR_INVALID, "H: the plan serves " + std::to_string(group) +
                                         " query heads per key/value head: H must be a positive "
                                         "multiple of it, got " + std::to_string(H)},
                  err, err_len);
  out.workload.batch = B;
  out.workload.heads = H;
  out.workload.kv_heads = group > 1 ? H / group : 0;
  if (engine::Status s = out.workload.Validate("workload"); !s.IsOk())
    return Report({STOF_ERR_INVALID, s.Message()}, err, err_len);
  const auto strides = [](const int64_t* s) {
    return s == nullptr ? engine::MhaStrides{} : engine::MhaStrides{s[0], s[1], s[2]};
  };
  out.q = strides(q_strides), out.kv = strides(kv_strides), out.o = strides(o_strides);
  out.scale = scale;
  return STOF_OK;
}

int RunBound(const stof_bound& b, const void* q, const void* k, const void* v, void* o,
             void* stream, char* err, size_t err_len, const kernels::MhaKeyLimits& keys) {
  return LaunchOnPlanDevice(*b.plan, err, err_len, [&] {
    return b.plan->mha->LaunchViews(b.workload, q, k, v, o, stream, b.q, b.kv, b.o, b.scale,
                                    keys);
  });
}

}  // namespace stof::capi
