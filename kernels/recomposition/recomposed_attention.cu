// RecomposedMha (recomposed_attention.h): softmax decomposition (SD) and decomposition + fusion
// (SDF). This file holds the host side (validation, workspace, tile list, dispatch; the
// parameters' rules are the engine's, engine/select/recompose_params.h); the SD
// element-wise kernels (LS, GS) and the IR kernel both variants share are in
// recompose_sd_kernels.cuh, the SDF GEMM kernels in recompose_gemm_kernels.cuh (instantiated
// in recompose_gemm_d64.cu / _d128.cu).
//
// Tiles: both variants number the BM x T tiles of one head e = 0 .. tiles - 1 and keep the
// statistics of row r of tile e of head bh at (bh * tiles + e) * BM + r, so IR is one kernel.
// SD: all tiles of the ceil(L/BM) x ceil(L/T) grid, e = qb * NT + kb (NT = ceil(L/T)); SDF:
// the valid tiles of the mask's BlockLayout at BM x T, in its load order (CSR by block row).
// Rows of one tile are consecutive in memory, so a warp of IR threads (32 consecutive query
// rows of one block row) reads and writes 32 consecutive statistics of each tile: coalesced.
//
// SD kernels (256 threads, one block per tile (bh, qb, kb); warp w takes rows w, w + 8, ...;
// lane l takes the T / 32 consecutive columns kb T + l T / 32 ...):
//   LS: mask bits of the row's sub-vector; a sub-vector with nothing attended gets
//       (m', d') = (-inf, 0) and its S is neither read nor written; otherwise x = s * scale2
//       (scale2 = log2(e) / sqrt(d), base-2 units as the native kernel), m' = max over attended
//       (warp shuffles), x' = 2^(x - m') where attended, 0 where masked, written over S (fp16),
//       d' = sum x' (fp32). The tile's BM (m', d') go out as one contiguous store.
//   GS: P = x' * r' over the tile, in place; r' = 0 (a sub-vector or row with nothing
//       attended) writes zeros without reading x' (which then still holds S).
// IR (one thread per query row): (m, d) = merge of the row's (m'_k, d'_k) over its tiles
// (online, fp32), then r'_k = 2^(m'_k - m) / d; a row with nothing attended gets r' = 0.
// cuBLAS calls (SD): as native_attention.cu (derivation of the column-major view there).
#include "kernels/recomposition/recomposed_attention.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "engine/core/text_format.h"
#include "engine/layout/block_layout.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm/cublas_check.h"
#include "kernels/recomposition/recompose_sd_kernels.cuh"
#include "kernels/recomposition/recompose_variant.h"

namespace stof::kernels {

namespace {

// The SD and IR kernels and their parameters (recompose_sd_kernels.cuh).
using recompose_sd::GlobalScaleKernel;
using recompose_sd::InterSubVectorReduceKernel;
using recompose_sd::IrParams;
using recompose_sd::kIrThreads;
using recompose_sd::kSdThreads;
using recompose_sd::LocalSoftmaxKernel;
using recompose_sd::SdParams;

using engine::Str;

std::string GiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp256(int64_t v) { return (v + 255) / 256 * 256; }
bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

engine::Status CheckShape(const engine::Workload& w, const std::string& what) {
  STOF_RETURN_IF_ERROR(w.Validate(what));
  if (w.dtype != engine::DType::kF16)
    return engine::MakeError(what + ".dtype: the recomposed MHA supports f16 only, got " +
                             engine::DTypeName(w.dtype));
  if (w.head_dim != 64 && w.head_dim != 128)
    return engine::MakeError(what + ".head_dim: the recomposed MHA supports 64 or 128, got " +
                             Str(w.head_dim));
  return engine::Status::Ok();
}

// Workspace parts for `heads` heads of `tiles` tiles each: x' (SD: the dense S), (m', d'),
// r', each rounded up to 256 bytes; false on int64 overflow.
struct WorkspaceParts {
  int64_t x = 0, stats = 0, r = 0;
  int64_t Total() const { return x + stats + r; }
};

bool ComputeParts(RecomposeVariant v, int64_t heads, int64_t L, int64_t tiles, int64_t bm,
                  int64_t t, WorkspaceParts& out) {
  constexpr int64_t kMax = INT64_MAX / 4;
  if (heads < 1 || tiles < 0 || heads > kMax / std::max<int64_t>(tiles * bm, 1)) return false;
  const int64_t stat_entries = heads * tiles * bm;  // <= kMax
  if (stat_entries > kMax / 8) return false;
  out.stats = RoundUp256(stat_entries * 8);
  out.r = RoundUp256(stat_entries * 4);
  if (v == RecomposeVariant::kDecomposed) {
    if (L > 2000000000 || heads > kMax / (L * L * 2)) return false;
    out.x = RoundUp256(heads * L * L * 2);
  } else {
    if (stat_entries > kMax / (t * 2)) return false;
    out.x = RoundUp256(stat_entries * t * 2);
  }
  return out.Total() >= 0 && out.Total() < kMax;
}

}  // namespace

struct RecomposedMha::Impl {
  cublasHandle_t handle = nullptr;  // SD only
  void* workspace = nullptr;
  void* index = nullptr;            // mask words, then (SDF) the tile rows
  std::unique_ptr<DeviceBlockLayout> layout;  // SDF
  WorkspaceParts parts;
  int device = 0, smem_optin = 0;
  std::mutex mutex;  // cublasSetStream + the launches, per call
  const uint64_t* Mask() const { return static_cast<const uint64_t*>(index); }
  const int32_t* TileRow(int64_t mask_words) const {
    return reinterpret_cast<const int32_t*>(static_cast<const uint64_t*>(index) + mask_words);
  }
  ~Impl() {
    if (handle) cublasDestroy(handle);
    if (workspace) cudaFree(workspace);
    if (index) cudaFree(index);
  }
};

RecomposedMha::RecomposedMha() = default;
RecomposedMha::~RecomposedMha() = default;

int64_t RecomposedMha::WorkspaceBytesFor(const engine::Workload& w, RecomposeVariant v,
                                         const RecomposeParams& p) {
  if (w.batch < 1 || w.heads < 1 || w.seq_len < 1 || w.seq_len > engine::Mask::kMaxLen ||
      w.batch > INT64_MAX / w.heads)
    return -1;
  if ((p.sub_len != 64 && p.sub_len != 128) || (p.block_m != 64 && p.block_m != 128)) return -1;
  const int64_t tiles = CeilDiv(w.seq_len, p.block_m) * CeilDiv(w.seq_len, p.sub_len);
  WorkspaceParts parts;
  if (!ComputeParts(v, w.batch * w.heads, w.seq_len, tiles, p.block_m, p.sub_len, parts))
    return -1;
  return parts.Total();
}

engine::Expected<std::unique_ptr<RecomposedMha>> RecomposedMha::Create(
    const engine::Mask& mask, const engine::Workload& workload, RecomposeVariant variant,
    const RecomposeParams& params) {
  const std::string what = std::string("recomposed MHA (") + RecomposeVariantName(variant) + "): ";
  STOF_RETURN_IF_ERROR(CheckShape(workload, "workload"));
  if (mask.Rows() != workload.seq_len || mask.Cols() != workload.seq_len)
    return engine::MakeError(what + "mask: size " + Str(mask.Rows()) + " x " + Str(mask.Cols()) +
                             " does not match workload.seq_len " + Str(workload.seq_len));
  int device = 0, smem_optin = 0;
  STOF_CUDA_TRY(cudaGetDevice(&device));
  STOF_CUDA_TRY(
      cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  STOF_RETURN_IF_ERROR(CheckRecomposeParams(params, workload.head_dim, variant, smem_optin));

  std::unique_ptr<RecomposedMha> m(new RecomposedMha());
  m->m_impl = std::make_unique<Impl>();
  Impl& impl = *m->m_impl;
  impl.device = device;
  impl.smem_optin = smem_optin;
  m->m_workload = workload;
  m->m_variant = variant;
  m->m_params = params;
  const int64_t L = workload.seq_len, bm = params.block_m, t = params.sub_len;

  // Tiles: SD every tile of the grid; SDF the valid tiles of the BlockLayout at BM x T.
  engine::BlockLayout layout;
  std::vector<int32_t> tile_row;
  if (variant == RecomposeVariant::kDecomposed) {
    m->m_tiles_per_head = CeilDiv(L, bm) * CeilDiv(L, t);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    auto built = engine::BlockLayout::Build(mask, bm, t);
    if (!built.IsOk()) return built.ToStatus();
    layout = std::move(*built);
    m->m_timing.host_build_ms = std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - t0)
                                    .count();
    const std::vector<int32_t>& row_ptr = layout.LoadRowPtr();
    tile_row.reserve(layout.LoadColIdx().size());
    for (int64_t qb = 0; qb < layout.BlockRows(); ++qb)
      for (int32_t e = row_ptr[qb]; e < row_ptr[qb + 1]; ++e)
        tile_row.push_back(static_cast<int32_t>(qb));
    m->m_tiles_per_head = static_cast<int64_t>(tile_row.size());
    m->m_part_tiles = static_cast<int64_t>(layout.PartColIdx().size());
  }

  const int64_t heads = workload.batch * workload.heads;
  const std::string ws_text =
      std::string("the workspace (") +
      (variant == RecomposeVariant::kDecomposed ? "S/x'/P B*H*L*L fp16" : "x' of the valid tiles") +
      ", m' d' r' per row and tile) for " + Str(workload.batch) + "*" + Str(workload.heads) +
      " heads of L " + Str(L) + ", " + Str(m->m_tiles_per_head) + " tiles of " + Str(bm) + "x" +
      Str(t);
  if (!ComputeParts(variant, heads, L, m->m_tiles_per_head, bm, t, impl.parts))
    return engine::MakeError(what + ws_text + " overflows int64");

  const auto t0 = std::chrono::steady_clock::now();
  const int64_t ws_bytes = std::max<int64_t>(impl.parts.Total(), 256);
  if (cudaError_t e = cudaMalloc(&impl.workspace, static_cast<size_t>(ws_bytes));
      e != cudaSuccess) {
    (void)cudaGetLastError();  // an allocation failure is not sticky: clear it
    impl.workspace = nullptr;
    return engine::MakeError(what + "cannot allocate " + ws_text + " = " + Str(ws_bytes) +
                             " bytes (" + GiB(ws_bytes) + "): cudaMalloc: " +
                             cudaGetErrorString(e) +
                             "; use a smaller batch, fewer heads or another kernel");
  }
  m->m_workspace_bytes = ws_bytes;

  // Index: the mask words, then the tile rows (SDF), in one allocation.
  const std::vector<uint64_t>& words = mask.Words();
  const size_t mask_bytes = words.size() * sizeof(uint64_t);
  const size_t index_bytes = mask_bytes + tile_row.size() * sizeof(int32_t);
  STOF_CUDA_TRY(cudaMalloc(&impl.index, std::max<size_t>(index_bytes, 16)));
  STOF_CUDA_TRY(cudaMemcpy(impl.index, words.data(), mask_bytes, cudaMemcpyHostToDevice));
  if (!tile_row.empty())
    STOF_CUDA_TRY(cudaMemcpy(static_cast<char*>(impl.index) + mask_bytes, tile_row.data(),
                             tile_row.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  m->m_index_bytes = static_cast<int64_t>(index_bytes);
  if (variant == RecomposeVariant::kRecomposed) {
    auto dev = DeviceBlockLayout::Upload(layout);
    if (!dev.IsOk()) return dev.ToStatus();
    impl.layout = std::move(*dev);
    m->m_index_bytes += impl.layout->DeviceBytes();
  } else {
    STOF_CUBLAS_TRY(cublasCreate(&impl.handle));
  }
  m->m_timing.upload_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Spelled out: nvcc's front end does not apply C++20's implicit move into a converting
  // constructor.
  return engine::Expected<std::unique_ptr<RecomposedMha>>(std::move(m));
}

RecomposeWorkspaceView RecomposedMha::Workspace() const {
  RecomposeWorkspaceView v;
  char* base = static_cast<char*>(m_impl->workspace);
  v.x = base;
  v.stats = base + m_impl->parts.x;
  v.r_factors = base + m_impl->parts.x + m_impl->parts.stats;
  v.tiles_per_head = m_tiles_per_head;
  v.x_bytes = m_impl->parts.x;
  v.stats_bytes = m_impl->parts.stats;
  v.r_bytes = m_impl->parts.r;
  return v;
}

struct RecomposedMha::Geometry {
  int64_t L = 0, d = 0, heads = 0, block_rows = 0, tiles = 0, words_per_row = 0;
  int bm = 0, t = 0;
  float scale_log2 = 0;
  RecomposeWorkspaceView ws;
  IrParams ir;
  unsigned ir_blocks = 0;
};

engine::Status RecomposedMha::CheckLaunch(const engine::Workload& w, const void* q,
                                          const void* k, const void* v, const void* o,
                                          const std::string& what) const {
  STOF_RETURN_IF_ERROR(CheckShape(w, what + "workload"));
  if (w.seq_len != m_workload.seq_len || w.head_dim != m_workload.head_dim)
    return engine::MakeError(what + "workload: prepared for L = " + Str(m_workload.seq_len) +
                             ", d = " + Str(m_workload.head_dim) + ", got L = " + Str(w.seq_len) +
                             ", d = " + Str(w.head_dim));
  const int64_t heads = w.batch * w.heads;
  const int64_t capacity = m_workload.batch * m_workload.heads;
  if (heads > capacity)
    return engine::MakeError(what + "workload: batch * heads = " + Str(heads) + " exceeds the " +
                             Str(capacity) +
                             " heads the workspace was allocated for (prepare with the larger "
                             "batch)");
  if (!q || !k || !v || !o) return engine::MakeError(what + "q, k, v, o: null pointer");
  if (!Aligned16(q) || !Aligned16(k) || !Aligned16(v) || !Aligned16(o))
    return engine::MakeError(what + "q, k, v, o: must be 16-byte aligned (cp.async, uint4)");
  // Grids: SD LS/GS heads * tiles, SDF Q K^T heads * tiles and P V heads * block_rows, IR
  // heads * L / 256 <= heads * block_rows (block_m <= 128 < 256).
  const int64_t most_blocks =
      heads * std::max(m_tiles_per_head, CeilDiv(w.seq_len, m_params.block_m));
  if (most_blocks > INT_MAX)
    return engine::MakeError(what + "workload: batch * heads * tiles = " + Str(most_blocks) +
                             " exceeds the grid limit 2^31 - 1");
  return engine::Status::Ok();
}

engine::Status RecomposedMha::Launch(const engine::Workload& w, const void* q, const void* k,
                                     const void* v, void* o, void* stream) const {
  const std::string what =
      std::string("recomposed MHA (") + RecomposeVariantName(m_variant) + "): ";
  STOF_RETURN_IF_ERROR(CheckLaunch(w, q, k, v, o, what));
  Geometry g;
  g.L = w.seq_len, g.d = w.head_dim, g.heads = w.batch * w.heads;
  g.bm = m_params.block_m, g.t = m_params.sub_len;
  g.block_rows = CeilDiv(g.L, g.bm);
  g.tiles = m_tiles_per_head;
  g.words_per_row = CeilDiv(g.L, 64);
  g.scale_log2 =
      static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(g.d)));
  g.ws = Workspace();
  g.ir.stats = static_cast<const float2*>(g.ws.stats);
  g.ir.r = static_cast<float*>(g.ws.r_factors);
  g.ir.seq_len = static_cast<int>(g.L);
  g.ir.block_m = g.bm;
  g.ir.tiles = g.tiles;
  g.ir.rows = g.heads * g.L;
  g.ir_blocks = static_cast<unsigned>(CeilDiv(g.ir.rows, kIrThreads));
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  return m_variant == RecomposeVariant::kDecomposed ? LaunchDecomposed(g, q, k, v, o, stream)
                                                    : LaunchRecomposed(g, q, k, v, o, stream);
}

engine::Status RecomposedMha::LaunchDecomposed(Geometry& g, const void* q, const void* k,
                                               const void* v, void* o, void* stream) const {
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  // Validated bounds: L <= 32768 and heads * tiles < 2^31 fit cuBLAS's int.
  const int iL = static_cast<int>(g.L), id = static_cast<int>(g.d);
  const int batch = static_cast<int>(g.heads);
  const long long stride_x = static_cast<long long>(g.L * g.d);
  const long long stride_s = static_cast<long long>(g.L * g.L);
  const float one = 1.f, zero = 0.f;
  cublasHandle_t h = m_impl->handle;
  __half* s = static_cast<__half*>(g.ws.x);
  SdParams sd;
  sd.s = s;
  sd.stats = static_cast<float2*>(g.ws.stats);
  sd.r = static_cast<const float*>(g.ws.r_factors);
  sd.mask = m_impl->Mask();
  sd.seq_len = iL;
  sd.words_per_row = static_cast<int>(g.words_per_row);
  sd.block_m = g.bm;
  sd.block_rows = static_cast<int>(g.block_rows);
  sd.subs = static_cast<int>(CeilDiv(g.L, g.t));
  sd.scale_log2 = g.scale_log2;
  sd.vec = g.L % (g.t / 32) == 0;
  g.ir.subs = sd.subs;
  const auto sd_blocks = static_cast<unsigned>(g.heads * g.tiles);

  STOF_CUBLAS_TRY(cublasSetStream(h, st));
  // S^T = K Q^T per head (column-major view; native_attention.cu).
  STOF_CUBLAS_TRY(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_T, CUBLAS_OP_N, iL, iL, id, &one, k, CUDA_R_16F, id, stride_x, q, CUDA_R_16F,
      id, stride_x, &zero, s, CUDA_R_16F, iL, stride_s, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  if (g.t == 64)
    LocalSoftmaxKernel<64><<<sd_blocks, kSdThreads, 0, st>>>(sd);
  else
    LocalSoftmaxKernel<128><<<sd_blocks, kSdThreads, 0, st>>>(sd);
  STOF_CUDA_TRY(cudaGetLastError());
  InterSubVectorReduceKernel<<<g.ir_blocks, kIrThreads, 0, st>>>(g.ir);
  STOF_CUDA_TRY(cudaGetLastError());
  if (g.t == 64)
    GlobalScaleKernel<64><<<sd_blocks, kSdThreads, 0, st>>>(sd);
  else
    GlobalScaleKernel<128><<<sd_blocks, kSdThreads, 0, st>>>(sd);
  STOF_CUDA_TRY(cudaGetLastError());
  // O^T = V^T P^T per head.
  STOF_CUBLAS_TRY(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, id, iL, iL, &one, v, CUDA_R_16F, id, stride_x, s, CUDA_R_16F,
      iL, stride_s, &zero, o, CUDA_R_16F, id, stride_x, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  return engine::Status::Ok();
}

engine::Status RecomposedMha::LaunchRecomposed(Geometry& g, const void* q, const void* k,
                                               const void* v, void* o, void* stream) const {
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  const DeviceBlockLayout& layout = *m_impl->layout;
  detail::RecomposeGemmParams p;
  p.q = q;
  p.k = k;
  p.v = v;
  p.o = o;
  p.x = g.ws.x;
  p.stats = g.ws.stats;
  p.r = static_cast<const float*>(g.ws.r_factors);
  p.mask = m_impl->Mask();
  p.tile_row = m_impl->TileRow(static_cast<int64_t>(g.L * g.words_per_row));
  p.load_row_ptr = layout.LoadRowPtr();
  p.load_col_idx = layout.LoadColIdx();
  p.load_part_idx = layout.LoadPartIdx();
  p.seq_len = static_cast<int>(g.L);
  p.words_per_row = static_cast<int>(g.words_per_row);
  p.block_m = g.bm;
  p.block_rows = static_cast<int>(g.block_rows);
  p.tiles = static_cast<int>(g.tiles);
  p.scale_log2 = g.scale_log2;
  p.heads = g.heads;
  g.ir.row_ptr = layout.LoadRowPtr();
  const int dev = m_impl->device, optin = m_impl->smem_optin;
  const int64_t d = g.d;
  const int t = g.t;
  // An all-empty mask has no tile: nothing for Q K^T (a zero grid is a launch error) and IR
  // (every row's range is empty); P V writes the zeros.
  if (g.tiles > 0) {
    engine::Status qk =
        d == 64 ? (t == 64 ? detail::LaunchRecomposeQk<64, 64>(p, dev, optin, st)
                           : detail::LaunchRecomposeQk<64, 128>(p, dev, optin, st))
                : (t == 64 ? detail::LaunchRecomposeQk<128, 64>(p, dev, optin, st)
                           : detail::LaunchRecomposeQk<128, 128>(p, dev, optin, st));
    STOF_RETURN_IF_ERROR(qk);
    InterSubVectorReduceKernel<<<g.ir_blocks, kIrThreads, 0, st>>>(g.ir);
    STOF_CUDA_TRY(cudaGetLastError());
  }
  return d == 64 ? (t == 64 ? detail::LaunchRecomposePv<64, 64>(p, dev, optin, st)
                            : detail::LaunchRecomposePv<64, 128>(p, dev, optin, st))
                 : (t == 64 ? detail::LaunchRecomposePv<128, 64>(p, dev, optin, st)
                            : detail::LaunchRecomposePv<128, 128>(p, dev, optin, st));
}

}  // namespace stof::kernels
