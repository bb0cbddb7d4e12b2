// The unfused "native" MHA baseline, what PyTorch eager does: (1) cuBLAS strided-batched
// S = Q K^T for all B*H heads into an fp16 workspace [B*H, L, L] (fp32 compute, fp16 out, as
// eager's matmul); (2) one kernel doing scale + mask + softmax over every row of S in place
// (fp32 math, fp16 out; LaunchScaleMaskSoftmax of kernels/norm/elementwise_kernels.h);
// (3) cuBLAS strided-batched O = P V. It is never chosen by Eq. 1, only requested ("native"),
// and is the reference point of the fusion ladder (docs/kernels.md).
// CUDA-free header. Used by PreparedMha (prepared_mha.h, MhaKernelRequest::kNative), hence by
// `stof bench|profile mha --kernel native`, the C API and tests/gpu/mha_native_test.cpp.
// Invariants: a NativeMha owns, on the device current at Create, the device copy of the mask's
// 64-bit words (immutable), the S workspace (sized for the B*H of the prepared workload,
// allocated at Create) and a cuBLAS handle. Launches take a mutex for their host-side work, so
// calls from several threads are safe, but they share the workspace: launches on different
// streams must not overlap on the device.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "kernels/attention_common/device_layout.h"

namespace stof::kernels {

class NativeMha {
 public:
  // Bytes of the S workspace for `w`: B * H * L * L fp16 (6.4 GB at B 16, H 12, L 4096);
  // -1 when that does not fit in int64.
  static int64_t WorkspaceBytesFor(const engine::Workload& w);

  // Checks the workload (f16, head_dim 64 or 128) and the mask (seq_len x seq_len), uploads the
  // mask and allocates the workspace; fails with the workspace size when it cannot be had.
  static engine::Expected<std::unique_ptr<NativeMha>> Create(const engine::Mask& mask,
                                                             const engine::Workload& workload);
  ~NativeMha();
  NativeMha(const NativeMha&) = delete;
  NativeMha& operator=(const NativeMha&) = delete;

  // O = softmax(mask(Q K^T / sqrt(d))) V for fp16 q, k, v, o [B, H, L, d] (device pointers)
  // on `stream` (opaque cudaStream_t): two cuBLAS calls and one kernel, asynchronous. `w` may
  // differ from the prepared workload in batch and heads, with B * H at most the prepared
  // B * H (the workspace's capacity). Rows with nothing attended give zeros.
  engine::Status Launch(const engine::Workload& w, const void* q, const void* k, const void* v,
                        void* o, void* stream) const;

  const engine::Workload& PreparedWorkload() const { return m_workload; }
  int64_t WorkspaceBytes() const { return m_workspace_bytes; }
  int64_t MaskBytes() const { return m_mask_bytes; }
  int64_t DeviceBytes() const { return m_workspace_bytes + m_mask_bytes; }
  // host_build_ms is 0 (the mask's words are uploaded as they are); upload_ms covers the
  // workspace allocation and the mask upload.
  const LayoutPrepTiming& Timing() const { return m_timing; }

 private:
  NativeMha();
  struct Impl;  // CUDA side: cuBLAS handle, device pointers, launch mutex
  std::unique_ptr<Impl> m_impl;
  engine::Workload m_workload;
  int64_t m_workspace_bytes = 0, m_mask_bytes = 0;
  LayoutPrepTiming m_timing;
};

}  // namespace stof::kernels
