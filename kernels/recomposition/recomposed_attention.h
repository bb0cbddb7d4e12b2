// Softmax recomposition (Choi et al.; docs/references.md) for the attention block
// O = softmax(mask(Q K^T / sqrt(d))) V: the two middle rungs of the fusion ladder between the
// unfused baseline (U, native_attention.h) and the fused sparse kernel (F, block_sparse_*):
//   SD  (kDecomposed): cuBLAS S = Q K^T -> LS kernel (per row and sub-vector of length T:
//       m' = max, d' = sum exp(x - m'), x' = exp(x - m') in place over S) -> IR kernel (per row:
//       m = max m'_k, d = sum exp(m'_k - m) d'_k, r'_k = exp(m'_k - m) / d) -> GS kernel
//       (P = x' r'_k in place) -> cuBLAS O = P V.
//   SDF (kRecomposed): a tensor-core Q K^T kernel whose epilogue does scale + mask + LS per
//       BM x T tile (writes x' fp16 and m', d' fp32) -> IR -> a tensor-core P V kernel whose
//       prologue scales each x' tile by r'_k as it is loaded (GS). Tiles of the mask's block
//       layout at BM x T that are empty are skipped by both GEMMs and by IR (no x', no stats).
// Math, kernels and DRAM traffic per variant: docs/kernels-softmax-recomposition.md.
// CUDA-free header. Used by PreparedMha (prepared_mha.h, MhaKernelRequest::kDecomposed /
// kRecomposed), hence `stof bench|profile mha --kernel sd|sdf`, the C API (kernel 4, 5) and
// tests/gpu/recomposed_attention_test.cpp.
// Invariants: a RecomposedMha owns, on the device current at Create, the mask's 64-bit words,
// (SDF) the block layout at BM x T and the tile list, the workspace (x' / S, m' d', r'; sized
// for the B*H of the prepared workload) and (SD) a cuBLAS handle; all immutable after Create
// except the workspace, which every launch overwrites. Launches take a mutex for their host
// side, so calls from several threads are safe, but they share the workspace: launches on
// different streams must not overlap on the device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "engine/select/recompose_params.h"
#include "kernels/attention_common/device_layout.h"

namespace stof::kernels {

// The variant (SD, SDF), its parameters (T, BM) and their rules (which settings run, the SDF
// kernels' shared memory): engine/select/recompose_params.h, the one copy for the kernels and
// the engine's model of them.
using engine::CheckRecomposeParams;
using engine::kRecomposeDefaultSmemLimit;
using engine::RecomposeParams;
using engine::RecomposeSmemBytes;
using engine::RecomposeVariant;
using engine::RecomposeVariantName;
using engine::SupportedRecomposeParams;

// Where the workspace goes, for tests that check the intermediates (device pointers; host
// code must not dereference them). Tiles are numbered per head: e in [0, tiles_per_head);
// SD: every tile of the ceil(L/BM) x ceil(L/T) grid, e = qb * ceil(L/T) + kb; SDF: the valid
// (non-empty) tiles of the mask's BlockLayout at BM x T in its load order (block row, then
// column). m' and d' of row r of tile e of head bh: float2 stats[(bh * tiles_per_head + e) *
// BM + r] = (m', d'), m' in base-2 units (log2(e) * max of s / sqrt(d); -inf when the row's
// sub-vector is fully masked, then d' = 0); r'_k at float r_factors[same index] (0 for
// masked sub-vectors and rows that attend nothing). Rows at or past L are not meaningful.
// x' (SDF): fp16, tile e of head bh is BM x T row-major at x + (bh * tiles_per_head + e) *
// BM * T; SD: x' / S / P is the dense [B*H, L, L] fp16 buffer.
struct RecomposeWorkspaceView {
  void* x = nullptr;
  void* stats = nullptr;
  void* r_factors = nullptr;
  int64_t tiles_per_head = 0;
  int64_t x_bytes = 0, stats_bytes = 0, r_bytes = 0;
};

class RecomposedMha {
 public:
  // Workspace bytes for `w` when every tile is valid (a dense mask): the exact size for SD,
  // the upper bound for SDF (whose x' and statistics cover only the mask's valid tiles; the
  // instance's WorkspaceBytes() is exact). -1 when it does not fit in int64 or the shape or
  // parameters are out of range.
  static int64_t WorkspaceBytesFor(const engine::Workload& w, RecomposeVariant v,
                                   const RecomposeParams& p);

  // Checks the workload (f16, head_dim 64 or 128), the mask (seq_len x seq_len) and the
  // parameters against the current device's shared memory, builds the tile list (SDF),
  // uploads the mask and allocates the workspace; fails with the workspace size when it cannot
  // be had.
  static engine::Expected<std::unique_ptr<RecomposedMha>> Create(const engine::Mask& mask,
                                                                 const engine::Workload& workload,
                                                                 RecomposeVariant variant,
                                                                 const RecomposeParams& params);
  ~RecomposedMha();
  RecomposedMha(const RecomposedMha&) = delete;
  RecomposedMha& operator=(const RecomposedMha&) = delete;

  // O = softmax(mask(Q K^T / sqrt(d))) V for fp16 q, k, v, o [B, H, L, d] (device pointers,
  // 16-byte aligned) on `stream` (opaque cudaStream_t); asynchronous. As NativeMha::Launch:
  // `w` may differ from the prepared workload in batch and heads, with B * H at most the
  // prepared B * H. Rows with nothing attended give zeros.
  engine::Status Launch(const engine::Workload& w, const void* q, const void* k, const void* v,
                        void* o, void* stream) const;

  RecomposeVariant Variant() const { return m_variant; }
  const RecomposeParams& Params() const { return m_params; }
  const engine::Workload& PreparedWorkload() const { return m_workload; }
  int64_t WorkspaceBytes() const { return m_workspace_bytes; }
  // Mask words, tile list and (SDF) the device block layout.
  int64_t IndexBytes() const { return m_index_bytes; }
  int64_t DeviceBytes() const { return m_workspace_bytes + m_index_bytes; }
  // Tiles per head that the kernels process (SD: all of the BM x T grid) and, SDF, how many
  // of them are part tiles (masked element-wise) rather than full.
  int64_t TilesPerHead() const { return m_tiles_per_head; }
  int64_t PartTilesPerHead() const { return m_part_tiles; }
  RecomposeWorkspaceView Workspace() const;
  // host_build_ms: the BlockLayout (SDF); upload_ms: workspace allocation and uploads.
  const LayoutPrepTiming& Timing() const { return m_timing; }

 private:
  RecomposedMha();
  struct Impl;  // CUDA side: device pointers, cuBLAS handle (SD), launch mutex
  struct Geometry;  // one launch's sizes and IR parameters (recomposed_attention.cu)
  // Launch's parts: the checks of a launch's workload and pointers, then SD's sequence (cuBLAS
  // Q K^T, LS, IR, GS, cuBLAS P V) or SDF's (Q K^T + LS, IR, GS + P V), with the launch mutex
  // held.
  engine::Status CheckLaunch(const engine::Workload& w, const void* q, const void* k,
                             const void* v, const void* o, const std::string& what) const;
  engine::Status LaunchDecomposed(Geometry& g, const void* q, const void* k, const void* v,
                                  void* o, void* stream) const;
  engine::Status LaunchRecomposed(Geometry& g, const void* q, const void* k, const void* v,
                                  void* o, void* stream) const;
  std::unique_ptr<Impl> m_impl;
  engine::Workload m_workload;
  RecomposeVariant m_variant = RecomposeVariant::kDecomposed;
  RecomposeParams m_params;
  int64_t m_workspace_bytes = 0, m_index_bytes = 0;
  int64_t m_tiles_per_head = 0, m_part_tiles = 0;
  LayoutPrepTiming m_timing;
};

}  // namespace stof::kernels
