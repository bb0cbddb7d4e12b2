// CpuBackend (see cpu_backend.h): host memory, memcpy "transfers", and MHA by the fp32
// reference. Used by the CLI without a GPU and by tests as the baseline backend.
// Invariants: buffers come from aligned operator new (64 bytes: one cache line, enough for any
// vector load) and must be released with Free; nothing is asynchronous, so Synchronize is a
// no-op.
#include "engine/cpu/cpu_backend.h"

#include <cstring>
#include <new>
#include <vector>

#include "engine/cpu/reference.h"

namespace stof::engine {

namespace {
constexpr std::align_val_t kAlign{64};
// Far above any real workload's tensors; refusing bigger sizes turns a corrupted or overflowed
// size into a clear error instead of an attempt to reserve terabytes.
constexpr size_t kMaxAllocBytes = size_t{64} << 30;  // 64 GiB
}  // namespace

DeviceSpec CpuBackend::Device() const {
  auto d = FindBuiltinDevice("H100-SXM-80GB");
  // The built-in table is compiled in; the fallback only guards a renamed entry.
  return d.IsOk() ? *d : BuiltinDevices().front();
}

Expected<void*> CpuBackend::Allocate(size_t bytes) {
  if (bytes == 0) return MakeError("cpu backend: allocate: bytes: must be at least 1, got 0");
  if (bytes > kMaxAllocBytes) {
    return MakeError("cpu backend: allocate: bytes: " + std::to_string(bytes) +
                     " exceeds the 64 GiB limit");
  }
  void* p = ::operator new(bytes, kAlign, std::nothrow);
  if (p == nullptr) {
    return MakeError("cpu backend: allocate: out of host memory for " + std::to_string(bytes) +
                     " bytes");
  }
  return p;
}

void CpuBackend::Free(void* ptr) {
  if (ptr != nullptr) ::operator delete(ptr, kAlign);
}

Status CpuBackend::CopyToDevice(void* dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  if (dst == nullptr) return MakeError("cpu backend: copy to device: dst: must not be null");
  if (host_src == nullptr)
    return MakeError("cpu backend: copy to device: host_src: must not be null");
  std::memcpy(dst, host_src, bytes);
  return Status::Ok();
}

Status CpuBackend::CopyToHost(void* host_dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  if (host_dst == nullptr)
    return MakeError("cpu backend: copy to host: host_dst: must not be null");
  if (src == nullptr) return MakeError("cpu backend: copy to host: src: must not be null");
  std::memcpy(host_dst, src, bytes);
  return Status::Ok();
}

Status CpuBackend::RunMha(const MhaCall& call) {
  STOF_RETURN_IF_ERROR(ValidateMhaCall(call));
  if (!Supports(call.workload.dtype)) {
    return MakeError(std::string("mha call: workload.dtype: the cpu backend supports f32 only, "
                                 "got ") +
                     DTypeName(call.workload.dtype));
  }
  // Row-wise or block-wise and their parameters change how a GPU computes, not what: the
  // reference ignores config beyond the validation above.
  const Workload& w = call.workload;
  const bool packed =
      call.q_strides.Packed() && call.kv_strides.Packed() && call.o_strides.Packed();
  if (packed)
    return cpu::MaskedAttention(static_cast<const float*>(call.q),
                                static_cast<const float*>(call.k),
                                static_cast<const float*>(call.v), static_cast<float*>(call.o),
                                w, *call.mask, call.scale);
  // Strided views: gather into packed [B, H, L, d], compute, scatter the output.
  const int64_t n = w.batch * w.heads * w.seq_len * w.head_dim;
  std::vector<float> q(static_cast<size_t>(n)), k(q.size()), v(q.size()), o(q.size());
  const auto walk = [&](const MhaStrides& st, auto&& fn) {
    const MhaStrides s = st.Packed() ? MhaStrides{w.heads * w.seq_len * w.head_dim,
                                                  w.seq_len * w.head_dim, w.head_dim}
                                     : st;
    int64_t i = 0;
    for (int64_t b = 0; b < w.batch; ++b)
      for (int64_t h = 0; h < w.heads; ++h)
        for (int64_t l = 0; l < w.seq_len; ++l)
          for (int64_t t = 0; t < w.head_dim; ++t, ++i) fn(i, b * s.batch + h * s.head + l * s.row + t);
  };
  const auto* qf = static_cast<const float*>(call.q);
  const auto* kf = static_cast<const float*>(call.k);
  const auto* vf = static_cast<const float*>(call.v);
  walk(call.q_strides, [&](int64_t i, int64_t j) { q[static_cast<size_t>(i)] = qf[j]; });
  walk(call.kv_strides, [&](int64_t i, int64_t j) {
    k[static_cast<size_t>(i)] = kf[j];
    v[static_cast<size_t>(i)] = vf[j];
  });
  STOF_RETURN_IF_ERROR(
      cpu::MaskedAttention(q.data(), k.data(), v.data(), o.data(), w, *call.mask, call.scale));
  auto* of = static_cast<float*>(call.o);
  walk(call.o_strides, [&](int64_t i, int64_t j) { of[j] = o[static_cast<size_t>(i)]; });
  return Status::Ok();
}

}  // namespace stof::engine
