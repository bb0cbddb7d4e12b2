// The C API (stof_capi.h) over ChooseMhaConfig / PreparedMha (kernels/attention/prepared_mha.h).
// Built into libstof_capi.so with hidden visibility; only the stof_* functions are exported.
// Called from Python through ctypes (tests/compare/mha_compare.py, python/stof/_capi.py).
// Invariants: no exception leaves an extern "C" function (each body is wrapped); every error
// is a code plus a message in the caller's buffer (capi_inputs.h); a plan remembers its device
// and makes it current for each launch, giving the caller's current device back after
// (capi_launch.h). This file holds the entry points and stof_mha's plan cache.
#include "kernels/capi/stof_capi.h"

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
#include "kernels/capi/capi_inputs.h"
#include "kernels/capi/capi_launch.h"
#include "kernels/device_query.h"

namespace {

namespace engine = stof::engine;
namespace kernels = stof::kernels;
using namespace stof::capi;  // NOLINT: the entry points are written in its terms

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

int stof_prepare_patterns(const uint8_t* masks_host, int64_t P, const int32_t* pattern_of,
                          int64_t B, int64_t H, int64_t Hkv, int64_t Lq, int64_t Lk, int64_t d,
                          int dtype, int kernel, int64_t block_m, int64_t block_n,
                          int64_t num_warps, int device, stof_plan** plan, char* err,
                          size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (plan == nullptr) return Report({STOF_ERR_INVALID, "plan: must not be null"}, err, err_len);
    *plan = nullptr;
    auto in = ParsePatternInputs(masks_host, P, pattern_of, CallShape{B, H, Hkv, Lq, Lk, d},
                                 kernel, block_m, block_n, num_warps, dtype);
    if (!in.IsOk()) return Report({STOF_ERR_INVALID, in.Message()}, err, err_len);
    auto dev = ResolveDevice(device);
    if (!dev.IsOk()) return Report({STOF_ERR_CUDA, dev.Message()}, err, err_len);
    auto built = BuildPatternsPlan(in->set, in->workload, in->request, *dev);
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
    return RunBound(*bound, q, k, v, o, stream, err, err_len,
                    kernels::MhaKeyLimits{key_ranges, nullptr, 0});
  });
}

int stof_run_bound_keys(const stof_bound* bound, const void* q, const void* k, const void* v,
                        void* o, const void* key_ranges, const uint64_t* key_bits,
                        int64_t key_words, void* stream, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (bound == nullptr)
      return Report({STOF_ERR_INVALID, "bound: must not be null"}, err, err_len);
    return RunBound(*bound, q, k, v, o, stream, err, err_len,
                    kernels::MhaKeyLimits{key_ranges, key_bits, key_words});
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
    ReleasePlan(plan);
  } catch (...) {
    // Nothing can be reported from here; the memory is lost at worst.
  }
}

}  // extern "C"
