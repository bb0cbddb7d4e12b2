// The C API (stof_capi.h) over ChooseMhaConfig / PreparedMha (kernels/attention/prepared_mha.h).
// Built into libstof_capi.so with hidden visibility; only the stof_* functions are exported.
// Called from Python through ctypes (tests/compare/mha_compare.py, python/stof/_capi.py).
// Invariants: no exception leaves an extern "C" function (each body is wrapped); every error
// is a code plus a message in the caller's buffer; a plan remembers its device and makes it
// current for each launch, giving the caller's current device back after (DeviceScope).
#include "kernels/capi/stof_capi.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "engine/mask/mask.h"
#include "engine/select/hopper_select.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/device_query.h"

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

namespace {

namespace engine = stof::engine;
namespace kernels = stof::kernels;

// A failure: the C code and the message.
struct Failure {
  int code = STOF_ERR_INVALID;
  std::string message;
};

void WriteText(char* buf, size_t len, const std::string& text) {
  if (buf == nullptr || len == 0) return;
  const size_t n = std::min(len - 1, text.size());
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
}

int Report(const Failure& f, char* err, size_t err_len) {
  WriteText(err, err_len, "stof_capi: " + f.message);
  return f.code;
}

// Runs `body` (returning an int code), turning any escaping exception into STOF_ERR_INTERNAL.
template <class Body>
int Guard(char* err, size_t err_len, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Report({STOF_ERR_INTERNAL, std::string("internal error: ") + e.what()}, err, err_len);
  } catch (...) {
    return Report({STOF_ERR_INTERNAL, "internal error: unknown exception"}, err, err_len);
  }
}

// CUDA-side failures (allocation, upload, launch) carry the CUDA call text from STOF_CUDA_TRY;
// the runtime's own texts say "CUDA" ("CUDA driver version is insufficient ..."), so the
// match ignores case.
int CodeOf(const std::string& message) {
  std::string lower = message;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("cuda") != std::string::npos || lower.find("gpu") != std::string::npos
             ? STOF_ERR_CUDA
             : STOF_ERR_INVALID;
}

engine::Expected<kernels::MhaRequest> MakeRequest(int kernel, int64_t block_m, int64_t block_n,
                                                  int64_t num_warps) {
  kernels::MhaRequest r;
  switch (kernel) {
    case STOF_KERNEL_AUTO: r.kernel = kernels::MhaKernelRequest::kAuto; break;
    case STOF_KERNEL_ROW_WISE: r.kernel = kernels::MhaKernelRequest::kRowWise; break;
    case STOF_KERNEL_BLOCK_WISE: r.kernel = kernels::MhaKernelRequest::kBlockWise; break;
    case STOF_KERNEL_NATIVE: r.kernel = kernels::MhaKernelRequest::kNative; break;
    case STOF_KERNEL_SD: r.kernel = kernels::MhaKernelRequest::kDecomposed; break;
    case STOF_KERNEL_SDF: r.kernel = kernels::MhaKernelRequest::kRecomposed; break;
    default:
      return engine::MakeError("kernel: expected 0 (auto), 1 (row_wise), 2 (block_wise), 3 "
                               "(native), 4 (sd) or 5 (sdf), got " + std::to_string(kernel));
  }
  if (block_m < 0 || block_n < 0 || num_warps < 0)
    return engine::MakeError("block_m, block_n, num_warps: expected 0 (auto) or a positive value");
  r.block_m = block_m;
  r.block_n = block_n;
  r.num_warps = num_warps;
  return r;
}

// rows*cols bytes (nonzero = attend) -> bit-packed Mask, 64 columns per word.
engine::Expected<engine::Mask> MaskFromBytes(const uint8_t* bytes, int64_t rows, int64_t cols) {
  if (bytes == nullptr) return engine::MakeError("mask_host: must not be null");
  auto m = engine::Mask::Create(rows, cols, "mask_host");
  if (!m.IsOk()) return m.ToStatus();
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = bytes + r * cols;
    uint64_t* words = m->RowWords(r);
    for (int64_t c0 = 0; c0 < cols; c0 += 64) {
      const int64_t n = std::min<int64_t>(64, cols - c0);
      uint64_t w = 0;
      for (int64_t j = 0; j < n; ++j) w |= static_cast<uint64_t>(row[c0 + j] != 0) << j;
      words[c0 >> 6] = w;
    }
  }
  return m;
}

// The call's shape: B, H query heads over Hkv key/value heads, Lq query rows over Lk keys, d.
struct CallShape {
  int64_t B = 0, H = 0, Hkv = 0, Lq = 0, Lk = 0, d = 0;
};

engine::Expected<engine::Workload> MakeWorkload(const CallShape& shape, int dtype) {
  if (dtype != STOF_DTYPE_F16 && dtype != STOF_DTYPE_BF16)
    return engine::MakeError("dtype: expected STOF_DTYPE_F16 (0) or STOF_DTYPE_BF16 (1), got " +
                             std::to_string(dtype));
  if (shape.Hkv < 1 || shape.Lq < 1)
    return engine::MakeError("shape: Hkv and Lq must be positive, got Hkv " +
                             std::to_string(shape.Hkv) + ", Lq " + std::to_string(shape.Lq));
  engine::Workload w;
  w.batch = shape.B;
  w.heads = shape.H;
  w.kv_heads = shape.Hkv;
  w.seq_len = shape.Lk;
  w.q_len = shape.Lq;
  const int64_t d = shape.d;
  w.head_dim = d;
  w.dtype = dtype == STOF_DTYPE_BF16 ? engine::DType::kBF16 : engine::DType::kF16;
  STOF_RETURN_IF_ERROR(w.Validate("workload"));
  // Checked here too (ChooseMhaConfig does) so a bad shape is refused before any CUDA call.
  if (engine::HopperKernelHeadDim(d) == 0)
    return engine::MakeError("workload.head_dim: the sparse MHA kernels support multiples of 8 "
                             "from 8 to 256 (64 and 128 on every kernel, the others on the "
                             "Hopper kernel), got " + std::to_string(d));
  return w;
}

// The checked inputs of stof_mha and stof_prepare (request, workload, mask), in that order, so
// both entry points reject bad arguments with the same messages.
struct CallInputs {
  kernels::MhaRequest request;
  engine::Workload workload;
  engine::Mask mask;
};

engine::Expected<CallInputs> ParseCallInputs(const uint8_t* mask_host, const CallShape& shape,
                                             int kernel, int64_t block_m, int64_t block_n,
                                             int64_t num_warps, int dtype = STOF_DTYPE_F16) {
  auto request = MakeRequest(kernel, block_m, block_n, num_warps);
  if (!request.IsOk()) return engine::Error{request.Message()};
  auto w = MakeWorkload(shape, dtype);
  if (!w.IsOk()) return engine::Error{w.Message()};
  auto mask = MaskFromBytes(mask_host, shape.Lq, shape.Lk);
  if (!mask.IsOk()) return engine::Error{mask.Message()};
  return CallInputs{*request, *w, std::move(*mask)};
}

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

// Builds a plan for an already converted mask on `device`.
engine::Expected<std::unique_ptr<stof_plan>> BuildPlan(const engine::Mask& mask,
                                                       const engine::Workload& w,
                                                       const kernels::MhaRequest& request,
                                                       int device) {
  const DeviceScope scope(device);
  if (cudaError_t e = scope.Error(); e != cudaSuccess)
    return engine::MakeError("making device " + std::to_string(device) +
                             " current: cudaSetDevice: " + cudaGetErrorString(e));
  auto spec = kernels::QueryDeviceSpec(device);
  if (!spec.IsOk()) return spec.ToStatus();
  const auto t0 = std::chrono::steady_clock::now();
  auto choice = kernels::ChooseMhaConfig(mask, w, *spec, request);
  if (!choice.IsOk()) return choice.ToStatus();
  const double select_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto prepared = kernels::PreparedMha::Create(mask, w, *choice);
  if (!prepared.IsOk()) return prepared.ToStatus();
  auto plan = std::make_unique<stof_plan>();
  plan->device = device;
  plan->mha = std::move(*prepared);
  plan->select_ms = select_ms;
  return plan;
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

// A launch of `plan`: its device made current for the launch, then `launch` (returning
// engine::Status), its failure reported. Shared by stof_run, stof_mha and the strided / bound
// launches.
template <class Launch>
int LaunchOnPlanDevice(const stof_plan& plan, char* err, size_t err_len, Launch&& launch) {
  const DeviceScope scope(plan.device);
  if (cudaError_t e = scope.Error(); e != cudaSuccess)
    return Report({STOF_ERR_CUDA, "making the plan's device " + std::to_string(plan.device) +
                                      " current: " + std::string(cudaGetErrorString(e))},
                  err, err_len);
  engine::Status s = launch();
  if (!s.IsOk()) return Report({CodeOf(s.Message()), s.Message()}, err, err_len);
  return STOF_OK;
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
         char* err, size_t err_len, int64_t Lk = 0) {
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
             void* stream, char* err, size_t err_len, const void* key_ranges = nullptr) {
  return LaunchOnPlanDevice(*b.plan, err, err_len, [&] {
    return b.plan->mha->LaunchViews(b.workload, q, k, v, o, stream, b.q, b.kv, b.o, b.scale,
                                    key_ranges);
  });
}

// stof_mha's plans, keyed by device, mask hash and the request, least recently used first out.
using CacheKey = std::tuple<int, uint64_t, int64_t, int64_t, int64_t, int64_t, int, int64_t,
                            int64_t, int64_t>;
constexpr size_t kMaxCachedPlans = 16;
std::mutex g_cache_mutex;
std::list<std::pair<CacheKey, std::shared_ptr<stof_plan>>> g_cache;  // front = most recent

}  // namespace

extern "C" {

int stof_capi_version(void) { return STOF_CAPI_VERSION; }

int stof_mha(const void* q, const void* k, const void* v, void* o, int64_t B, int64_t H,
             int64_t L, int64_t d, const uint8_t* mask_host, int kernel, int64_t block_m,
             int64_t block_n, int64_t num_warps, void* stream, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    auto in = ParseCallInputs(mask_host, CallShape{B, H, H, L, L, d}, kernel, block_m, block_n,
                              num_warps);
    if (!in.IsOk()) return Report({STOF_ERR_INVALID, in.Message()}, err, err_len);
    const int device = DeviceOfPointer(q);
    const CacheKey key{device, in->mask.Hash(), B, H, L, d, kernel, block_m, block_n, num_warps};
    std::shared_ptr<stof_plan> plan;
    {
      std::lock_guard<std::mutex> lock(g_cache_mutex);
      for (auto it = g_cache.begin(); it != g_cache.end(); ++it) {
        if (it->first == key) {
          plan = it->second;
          g_cache.splice(g_cache.begin(), g_cache, it);
          break;
        }
      }
    }
    if (!plan) {
      auto built = BuildPlan(in->mask, in->workload, in->request, device);
      if (!built.IsOk())
        return Report({CodeOf(built.Message()), built.Message()}, err, err_len);
      plan = std::shared_ptr<stof_plan>(std::move(*built));
      std::lock_guard<std::mutex> lock(g_cache_mutex);
      g_cache.emplace_front(key, plan);
      while (g_cache.size() > kMaxCachedPlans) g_cache.pop_back();
    }
    return RunPlan(*plan, q, k, v, o, stream, err, err_len);
  });
}

int stof_prepare(const uint8_t* mask_host, int64_t B, int64_t H, int64_t L, int64_t d,
                 int kernel, int64_t block_m, int64_t block_n, int64_t num_warps, int device,
                 stof_plan** plan, char* err, size_t err_len) {
  return stof_prepare_dtype(mask_host, B, H, L, d, STOF_DTYPE_F16, kernel, block_m, block_n,
                            num_warps, device, plan, err, err_len);
}

int stof_prepare_dtype(const uint8_t* mask_host, int64_t B, int64_t H, int64_t L, int64_t d,
                       int dtype, int kernel, int64_t block_m, int64_t block_n,
                       int64_t num_warps, int device, stof_plan** plan, char* err,
                       size_t err_len) {
  return stof_prepare_shape(mask_host, B, H, H, L, L, d, dtype, kernel, block_m, block_n,
                            num_warps, device, plan, err, err_len);
}

int stof_prepare_shape(const uint8_t* mask_host, int64_t B, int64_t H, int64_t Hkv, int64_t Lq,
                       int64_t Lk, int64_t d, int dtype, int kernel, int64_t block_m,
                       int64_t block_n, int64_t num_warps, int device, stof_plan** plan,
                       char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (plan == nullptr) return Report({STOF_ERR_INVALID, "plan: must not be null"}, err, err_len);
    *plan = nullptr;
    auto in = ParseCallInputs(mask_host, CallShape{B, H, Hkv, Lq, Lk, d}, kernel, block_m,
                              block_n, num_warps, dtype);
    if (!in.IsOk()) return Report({STOF_ERR_INVALID, in.Message()}, err, err_len);
    auto dev = ResolveDevice(device);
    if (!dev.IsOk()) return Report({STOF_ERR_CUDA, dev.Message()}, err, err_len);
    auto built = BuildPlan(in->mask, in->workload, in->request, *dev);
    if (!built.IsOk()) return Report({CodeOf(built.Message()), built.Message()}, err, err_len);
    *plan = built->release();
    return STOF_OK;
  });
}

int stof_run(const stof_plan* plan, const void* q, const void* k, const void* v, void* o,
             void* stream, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (plan == nullptr) return Report({STOF_ERR_INVALID, "plan: must not be null"}, err, err_len);
    return RunPlan(*plan, q, k, v, o, stream, err, err_len);
  });
}

int stof_run_views(const stof_plan* plan, const void* q, const void* k, const void* v, void* o,
                   int64_t B, int64_t H, const int64_t* q_strides, const int64_t* kv_strides,
                   const int64_t* o_strides, float scale, void* stream, char* err,
                   size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    stof_bound bound;
    if (int code = Bind(plan, B, H, q_strides, kv_strides, o_strides, scale, bound, err, err_len))
      return code;
    return RunBound(bound, q, k, v, o, stream, err, err_len);
  });
}

int stof_bind_views(const stof_plan* plan, int64_t B, int64_t H, const int64_t* q_strides,
                    const int64_t* kv_strides, const int64_t* o_strides, float scale,
                    stof_bound** bound, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (bound == nullptr)
      return Report({STOF_ERR_INVALID, "bound: must not be null"}, err, err_len);
    *bound = nullptr;
    auto made = std::make_unique<stof_bound>();
    if (int code = Bind(plan, B, H, q_strides, kv_strides, o_strides, scale, *made, err, err_len))
      return code;
    *bound = made.release();
    return STOF_OK;
  });
}

int stof_bind_views_keys(const stof_plan* plan, int64_t B, int64_t H, int64_t Lk,
                         const int64_t* q_strides, const int64_t* kv_strides,
                         const int64_t* o_strides, float scale, stof_bound** bound, char* err,
                         size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (bound == nullptr)
      return Report({STOF_ERR_INVALID, "bound: must not be null"}, err, err_len);
    *bound = nullptr;
    auto made = std::make_unique<stof_bound>();
    if (int code = Bind(plan, B, H, q_strides, kv_strides, o_strides, scale, *made, err, err_len,
                        Lk))
      return code;
    // The workload's checks of a launch, now, so a refused key length fails here.
    if (engine::Status s = plan->mha->CheckLaunchWorkload(made->workload); !s.IsOk())
      return Report({STOF_ERR_INVALID, s.Message()}, err, err_len);
    *bound = made.release();
    return STOF_OK;
  });
}

int stof_run_bound(const stof_bound* bound, const void* q, const void* k, const void* v,
                   void* o, void* stream, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (bound == nullptr)
      return Report({STOF_ERR_INVALID, "bound: must not be null"}, err, err_len);
    return RunBound(*bound, q, k, v, o, stream, err, err_len);
  });
}

int stof_run_bound_ranges(const stof_bound* bound, const void* q, const void* k, const void* v,
                          void* o, const void* key_ranges, void* stream, char* err,
                          size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (bound == nullptr)
      return Report({STOF_ERR_INVALID, "bound: must not be null"}, err, err_len);
    return RunBound(*bound, q, k, v, o, stream, err, err_len, key_ranges);
  });
}

void stof_bound_release(stof_bound* bound) { delete bound; }

int stof_choice(const stof_plan* plan, int* kernel, int64_t* block_m, int64_t* block_n,
                int64_t* num_warps, int* fell_back, char* text, size_t text_len) {
  return Guard(text, text_len, [&]() -> int {
    if (plan == nullptr)
      return Report({STOF_ERR_INVALID, "plan: must not be null"}, text, text_len);
    const kernels::MhaChoice& c = plan->mha->Choice();
    const bool row = c.config.kernel == engine::MhaKernel::kRowWise;
    const bool sd = c.recompose && c.recompose_variant == kernels::RecomposeVariant::kDecomposed;
    if (kernel)
      *kernel = c.recompose ? (sd ? STOF_KERNEL_SD : STOF_KERNEL_SDF)
                : c.native  ? STOF_KERNEL_NATIVE
                : row       ? STOF_KERNEL_ROW_WISE
                            : STOF_KERNEL_BLOCK_WISE;
    if (block_m) *block_m = c.recompose ? c.recompose_params.block_m : c.config.block_m;
    if (block_n) *block_n = c.recompose ? c.recompose_params.sub_len : c.config.block_n;
    if (num_warps) *num_warps = c.config.num_warps;
    if (fell_back) *fell_back = c.fell_back ? 1 : 0;
    std::string line = kernels::MhaChoiceKernelName(c);
    // append() rather than "literal" + string: GCC 12 warns (-Wrestrict, a false positive) on
    // operator+(const char*, std::string&&) once inlined here.
    if (const kernels::RecomposedMha* rec = plan->mha->Recomposed()) {
      line.append(sd ? " (softmax decomposed: cuBLAS QK^T, LS, IR, GS, cuBLAS PV"
                     : " (softmax decomposed + fused: QK^T+LS, IR, GS+PV");
      line.append("; BMxT ").append(std::to_string(c.recompose_params.block_m)).append("x");
      line.append(std::to_string(c.recompose_params.sub_len)).append(", workspace ");
      line.append(std::to_string(rec->WorkspaceBytes())).append(" bytes)");
    } else if (c.native) {
      line.append(" (unfused: cuBLAS QK^T, softmax kernel, cuBLAS PV; S workspace ");
      line.append(std::to_string(plan->mha->Native()->WorkspaceBytes())).append(" bytes)");
    } else if (!row) {
      line.append(" ").append(std::to_string(c.config.block_m)).append("x");
      line.append(std::to_string(c.config.block_n)).append(" warps ");
      line.append(std::to_string(c.config.num_warps));
    }
    line.append(" (kernel: ").append(c.kernel_source).append(", params: ");
    line.append(c.params_source).append(")");
    if (!c.note.empty()) line.append("; ").append(c.note);
    WriteText(text, text_len, line);
    return STOF_OK;
  });
}

int stof_plan_info(const stof_plan* plan, int64_t* nnz, int64_t* valid_blocks,
                   int64_t* layout_bytes, double* select_ms, double* build_ms,
                   double* upload_ms) {
  return Guard(nullptr, 0, [&]() -> int {
    if (plan == nullptr) return STOF_ERR_INVALID;
    if (nnz) *nnz = plan->mha->Nnz();
    if (valid_blocks) *valid_blocks = plan->mha->ValidBlocks();
    if (layout_bytes) *layout_bytes = plan->mha->DeviceBytes();
    if (select_ms) *select_ms = plan->select_ms;
    if (build_ms) *build_ms = plan->mha->Timing().host_build_ms;
    if (upload_ms) *upload_ms = plan->mha->Timing().upload_ms;
    return STOF_OK;
  });
}

void stof_release(stof_plan* plan) {
  if (plan == nullptr) return;
  try {
    const DeviceScope scope(plan->device);  // the layout frees its memory there
    delete plan;
  } catch (...) {
    // Nothing can be reported from here; the memory is lost at worst.
  }
}

}  // extern "C"
