// Preparing one sparse MHA configuration (ChooseMhaConfig's choice, mha_choice.h) for repeated
// launches: PreparedMha builds and uploads the device layout of that choice once and then launches without touching the mask
// (no hashing, no cache lookup), which is what timed loops need. A request for the unfused
// "native" baseline (native_attention.h; never chosen by Eq. 1) prepares a NativeMha instead
// of a layout: its mask copy and S workspace; a request for softmax decomposition "sd" or
// decomposition + fusion "sdf" (kernels/recomposition/recomposed_attention.h; never chosen by Eq. 1
// either) prepares a RecomposedMha. CUDA-free header.
// Used by `stof bench mha` (app/cli/cmd_bench.cpp) and the C API (kernels/capi/stof_capi.h).
// Invariants: a PreparedMha owns its layout (immutable after Create); Launch accepts any batch
// and head count but the sequence length and head size of the workload it was prepared for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "kernels/attention_common/device_layout.h"
#include "kernels/attention_common/mha_operands.h"
#include "kernels/attention/mha_choice.h"
#include "kernels/attention/native_attention.h"
#include "kernels/recomposition/recomposed_attention.h"

namespace stof::kernels {

// One choice with its device layout (or, native, its NativeMha; sd/sdf, its RecomposedMha), on
// the device that was current at Create.
class PreparedMha {
 public:
  static engine::Expected<std::unique_ptr<PreparedMha>> Create(const engine::Mask& mask,
                                                               const engine::Workload& workload,
                                                               const MhaChoice& choice);
  // Masks per batch row / head (engine/mask/mask_set.h) for a ChooseMhaConfigForPatterns
  // choice: one layout per pattern (DeviceBlockLayout::CreatePatterns); launches take the
  // prepared batch and heads only.
  static engine::Expected<std::unique_ptr<PreparedMha>> Create(const engine::MaskSet& set,
                                                               const engine::Workload& workload,
                                                               const MhaChoice& choice);
  PreparedMha(const PreparedMha&) = delete;
  PreparedMha& operator=(const PreparedMha&) = delete;

  // Launches on `stream` (opaque cudaStream_t) for q, o [B, H, L_q, d] and k, v [B, H_kv, L_k,
  // d] buffers; `workload` may differ from the prepared one in batch and heads only (with the
  // same query heads per key/value head), and, for a Hopper plan with L_q below its keys (a KV
  // cache prepared for its capacity), in a smaller seq_len >= L_q: the mask's first seq_len
  // columns, the keys past them not attended (native, sd, sdf: B * H at most the
  // prepared B * H, the capacity of their workspace). Asynchronous.
  engine::Status Launch(const engine::Workload& workload, const void* q, const void* k,
                        const void* v, void* o, void* stream) const;
  // Launch with the prepared workload.
  engine::Status Launch(const void* q, const void* k, const void* v, void* o, void* stream) const {
    return Launch(m_workload, q, k, v, o, stream);
  }
  // Launch with strided views of q, k / v (sharing theirs) and o (engine::MhaStrides; all zero
  // = packed) and a score scale (0 = 1/sqrt(head_dim)): the block-wise kernel takes both
  // itself; the other choices refuse strides that are not packed and a scale other than
  // 1/sqrt(head_dim), with a message naming the kernel. Used by the C API's stof_run_views.
  // `keys`: per batch row key ranges and / or kept keys (MhaKeyLimits, mha_operands.h): the
  // block-wise Hopper kernel only (LaunchHopperAttention).
  engine::Status LaunchViews(const engine::Workload& workload, const void* q, const void* k,
                             const void* v, void* o, void* stream,
                             const engine::MhaStrides& q_strides,
                             const engine::MhaStrides& kv_strides,
                             const engine::MhaStrides& o_strides, float scale,
                             const MhaKeyLimits& keys = {}) const;

  // The checks Launch makes of `workload` before it looks at a pointer (the prepared shape, or
  // the differences the comment of Launch allows).
  engine::Status CheckLaunchWorkload(const engine::Workload& workload) const {
    return CheckWorkload(workload);
  }

  const MhaChoice& Choice() const { return m_choice; }
  const engine::Workload& PreparedWorkload() const { return m_workload; }
  const LayoutPrepTiming& Timing() const;  // host build and upload of the device layout
  int64_t DeviceBytes() const;             // bytes of the device layout (native: mask + S;
                                           // sd/sdf: mask, tiles and workspace)
  const NativeMha* Native() const { return m_native.get(); }  // null unless Choice().native
  // Null unless Choice().recompose.
  const RecomposedMha* Recomposed() const { return m_recomposed.get(); }
  int64_t Nnz() const { return m_nnz; }    // attended elements of the mask (patterns:
                                           // summed over every (batch row, head))
  int64_t Patterns() const { return m_patterns; }  // 0: one mask for every (batch, head)
  // Block-wise: valid (full + part) and part blocks at BLOCK_M x BLOCK_N; sdf: valid and part
  // tiles at BM x T (per head); row-wise, native, sd: 0.
  int64_t ValidBlocks() const;
  int64_t PartBlocks() const;
  // FLOPs the launch must do: 4 * B * H * d * nnz (QK^T and PV on attended elements only),
  // and what the kernel computes: 4 * B * H * d * valid_blocks * BM * BN (block-wise; equal to
  // the first for row-wise; 4 * B * H * d * L * L, dense, for native and sd; sdf: valid tiles
  // * BM * T in place of valid blocks).
  double UsefulFlops(const engine::Workload& w) const;
  double KernelFlops(const engine::Workload& w) const;
  // Bytes a launch must move at the least: Q and O ([B, H, L_q, d]) and K and V ([B, H_kv,
  // L_k, d]) once each (the memory floor of a decode step).
  double MinimumBytes(const engine::Workload& w) const;

 private:
  PreparedMha() = default;
  // The prepared L, d and dtype (batch and heads may differ).
  engine::Status CheckWorkload(const engine::Workload& w) const;
  engine::Workload m_workload;
  MhaChoice m_choice;
  int64_t m_nnz = 0;
  int64_t m_patterns = 0;
  std::shared_ptr<const DeviceBlockLayout> m_block;
  std::shared_ptr<const DeviceRowLayout> m_row;
  std::shared_ptr<const NativeMha> m_native;
  std::shared_ptr<const RecomposedMha> m_recomposed;
};

}  // namespace stof::kernels
