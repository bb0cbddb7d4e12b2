// CudaBackend's layer ops (engine/layer_ops.h) and Measure: each call is validated by the
// engine's shared check, its ParamMap mapped onto the kernel family's parameter struct (an
// unknown name is an error that lists the known ones), then launched:
//   GemmCall, BatchedGemmCall -> cuBLASLt (kernels/gemm_epilogue/lt_gemm.h)
//   EpilogueCall, NormCall, ScoresCall, HeadsCall -> kernels/norm/ (one kernel each)
//   GemmNormCall -> kernels/gemm_norm/, GemmChainCall -> kernels/gemm_chain/ (tiles) or
//   kernels/gemm_chain_hopper/ (params "cluster")
// Device copies of masks (for the score ops) are uploaded once per mask hash and kept.
// Measure: CUDA events around the work, or a CUDA graph of it replayed between the events.
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "kernels/cuda_backend.h"
#include "kernels/cuda_backend_state.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_chain/gemm_chain.h"
#include "kernels/gemm_chain_hopper/hopper_chain.h"
#include "kernels/gemm_epilogue/lt_gemm.h"
#include "kernels/gemm_norm/gemm_norm.h"
#include "kernels/norm/elementwise_kernels.h"
#include "kernels/norm/norm_kernels.h"

namespace stof::kernels {

using engine::MakeError;
using engine::ParamMap;
using engine::Status;

namespace {

// Sets `field` from params[name] when present; counts what was used.
void Take(const ParamMap& p, const char* name, int& field, size_t& used) {
  auto it = p.find(name);
  if (it == p.end()) return;
  field = static_cast<int>(it->second);
  ++used;
}

Status UnknownNames(const ParamMap& p, size_t used, const std::string& what,
                    const std::string& known) {
  if (used == p.size()) return Status::Ok();
  for (const auto& [name, value] : p)
    if (known.find(name) == std::string::npos || name.empty())
      return MakeError(what + ": params: unknown name '" + name + "' (expected " + known + ")");
  return MakeError(what + ": params: unknown names (expected " + known + ")");
}

}  // namespace

engine::Expected<CudaBackend::LayerState*> CudaBackend::Layer() {
  STOF_RETURN_IF_ERROR(MakeCurrent());
  if (!m_layer) m_layer = std::make_unique<LayerState>();
  std::lock_guard<std::mutex> lock(m_layer->mu);
  if (!m_layer->lt) {
    auto lt = LtGemm::Create();
    if (!lt.IsOk()) return lt.ToStatus();
    m_layer->lt = std::move(*lt);
  }
  return m_layer.get();
}

engine::Expected<const void*> CudaBackend::MaskWords(const engine::Mask& mask) {
  auto st = Layer();
  if (!st.IsOk()) return st.ToStatus();
  std::lock_guard<std::mutex> lock((*st)->mu);
  const uint64_t h = mask.Hash();
  auto it = (*st)->mask_words.find(h);
  if (it != (*st)->mask_words.end()) return static_cast<const void*>(it->second);
  const size_t bytes = mask.Words().size() * sizeof(uint64_t);
  void* p = nullptr;
  STOF_CUDA_TRY(cudaMalloc(&p, std::max<size_t>(bytes, 8)));
  if (bytes) STOF_CUDA_TRY(cudaMemcpy(p, mask.Words().data(), bytes, cudaMemcpyHostToDevice));
  (*st)->mask_words[h] = p;
  return static_cast<const void*>(p);
}

Status CudaBackend::RunGemm(const engine::GemmCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateGemmCall(c));
  auto st = Layer();
  if (!st.IsOk()) return st.ToStatus();
  GemmEpilogueParams params;
  size_t used = 0;
  Take(c.params, "algo", params.algo, used);
  STOF_RETURN_IF_ERROR(UnknownNames(c.params, used, "gemm call", "algo"));
  GemmArgs a;
  a.m = c.m, a.n = c.n, a.k = c.k, a.a = c.a, a.w = c.w, a.bias = c.bias, a.act = c.act;
  a.residual = c.residual, a.out = c.out;
  return (*st)->lt->Run(a, params, c.stream);
}

Status CudaBackend::RunBatchedGemm(const engine::BatchedGemmCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateBatchedGemmCall(c));
  auto st = Layer();
  if (!st.IsOk()) return st.ToStatus();
  BatchedGemmArgs a;
  a.batch = c.batch, a.m = c.m, a.n = c.n, a.k = c.k, a.a = c.a, a.b = c.b, a.c = c.c;
  a.trans_b = c.trans_b, a.alpha = c.alpha;
  return (*st)->lt->RunBatched(a, c.stream);
}

Status CudaBackend::RunEpilogue(const engine::EpilogueCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateEpilogueCall(c));
  STOF_RETURN_IF_ERROR(MakeCurrent());
  return LaunchBiasActAdd(c.rows, c.cols, c.x, c.bias, c.act, c.residual, c.out, c.stream);
}

Status CudaBackend::RunNorm(const engine::NormCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateNormCall(c));
  STOF_RETURN_IF_ERROR(MakeCurrent());
  NormArgs a;
  a.rows = c.rows, a.cols = c.cols, a.x = c.x, a.bias = c.bias, a.residual = c.residual;
  a.gamma = c.gamma, a.beta = c.beta, a.eps = c.eps, a.out = c.out, a.sum_out = c.sum_out;
  NormParams params = DefaultNormParams(c.cols);
  size_t used = 0;
  Take(c.params, "rows_per_block", params.rows_per_block, used);
  Take(c.params, "threads_per_row", params.threads_per_row, used);
  STOF_RETURN_IF_ERROR(
      UnknownNames(c.params, used, "norm call", "rows_per_block, threads_per_row"));
  return LaunchBiasAddNorm(a, params, c.stream);
}

Status CudaBackend::RunGemmNorm(const engine::GemmNormCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateGemmNormCall(c));
  STOF_RETURN_IF_ERROR(MakeCurrent());
  GemmNormArgs a;
  a.m = c.m, a.n = c.n, a.k = c.k, a.a = c.a, a.w = c.w, a.bias = c.bias;
  a.residual = c.residual, a.gamma = c.gamma, a.beta = c.beta, a.eps = c.eps, a.out = c.out;
  STOF_RETURN_IF_ERROR(CheckGemmNormArgs(a));
  const auto supported = SupportedGemmNormParams(c.n, c.k, m_spec.smem_per_block_bytes);
  if (supported.empty())
    return MakeError("gemm_norm call: no supported parameters for n " + std::to_string(c.n) +
                     ", k " + std::to_string(c.k));
  GemmNormParams params = supported.front();
  size_t used = 0;
  Take(c.params, "bm", params.bm, used);
  Take(c.params, "bk", params.bk, used);
  Take(c.params, "warps", params.warps, used);
  Take(c.params, "stages", params.stages, used);
  STOF_RETURN_IF_ERROR(UnknownNames(c.params, used, "gemm_norm call", "bm, bk, warps, stages"));
  return LaunchGemmNorm(a, params, c.stream);
}

// The Hopper chain's zero-filled split workspace of at least `bytes`; growing it allocates,
// which a stream being captured into a CUDA graph does not allow: run the shape once before
// the capture (as every benchmark's warm-up does).
engine::Expected<void*> CudaBackend::ChainWorkspace(size_t bytes, void* stream) {
  STOF_ASSIGN_OR_RETURN(LayerState* st, Layer());
  std::lock_guard<std::mutex> lock(st->mu);
  if (st->chain_workspace_bytes >= bytes) return st->chain_workspace;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  STOF_CUDA_TRY(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return MakeError("gemm_chain call (Hopper kernel): its split workspace (" +
                     std::to_string(bytes) + " bytes) must be allocated before a CUDA graph "
                     "capture: run the call once outside the capture first");
  if (st->chain_workspace) STOF_CUDA_TRY(cudaFree(st->chain_workspace));
  st->chain_workspace = nullptr;
  st->chain_workspace_bytes = 0;
  STOF_CUDA_TRY(cudaMalloc(&st->chain_workspace, bytes));
  STOF_CUDA_TRY(cudaMemset(st->chain_workspace, 0, bytes));
  st->chain_workspace_bytes = bytes;
  return st->chain_workspace;
}

Status CudaBackend::RunGemmChain(const engine::GemmChainCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateGemmChainCall(c));
  STOF_RETURN_IF_ERROR(MakeCurrent());
  GemmChainArgs a;
  a.batch = c.batch, a.m = c.m, a.n = c.n, a.k = c.k, a.h = c.h;
  a.a = c.a, a.b = c.b, a.d = c.d;
  a.stride_a = c.stride_a, a.stride_b = c.stride_b, a.stride_d = c.stride_d;
  a.stride_e = c.stride_e;
  a.bias1 = c.bias1, a.act = c.act, a.bias2 = c.bias2, a.e = c.e;
  STOF_RETURN_IF_ERROR(CheckGemmChainArgs(a));
  // "cluster" names the Hopper kernel (0 = its default cluster; "reduce" 0 push, 1 pull); the
  // tiles name the mhnk one.
  if (c.params.count("cluster") != 0) {
    HopperChainParams hp;
    size_t used = 0;
    int reduce = static_cast<int>(hp.reduce);
    Take(c.params, "cluster", hp.cluster, used);
    Take(c.params, "reduce", reduce, used);
    Take(c.params, "splits", hp.splits, used);
    hp.reduce = static_cast<HopperChainReduce>(reduce);
    STOF_RETURN_IF_ERROR(UnknownNames(c.params, used, "gemm_chain call (Hopper kernel)",
                                      "cluster, reduce, splits"));
    STOF_ASSIGN_OR_RETURN(const HopperChainLaunch l, ResolveHopperChain(a, hp, m_spec.sm_count));
    if (l.workspace_bytes > 0) {
      STOF_ASSIGN_OR_RETURN(void* ws, ChainWorkspace(static_cast<size_t>(l.workspace_bytes),
                                                     c.stream));
      hp.workspace = ws;
      hp.workspace_bytes = l.workspace_bytes;
    }
    return LaunchHopperGemmChain(a, hp, c.stream);
  }
  const auto supported = SupportedGemmChainParams(a, m_spec.smem_per_block_bytes);
  if (supported.empty())
    return MakeError("gemm_chain call: no supported parameters for this shape");
  GemmChainParams params = supported.front();
  size_t used = 0;
  Take(c.params, "bm", params.bm, used);
  Take(c.params, "bn", params.bn, used);
  Take(c.params, "bk", params.bk, used);
  Take(c.params, "bh", params.bh, used);
  Take(c.params, "warps", params.warps, used);
  STOF_RETURN_IF_ERROR(
      UnknownNames(c.params, used, "gemm_chain call", "bm, bn, bk, bh, warps"));
  return LaunchGemmChain(a, params, c.stream);
}

Status CudaBackend::RunScores(const engine::ScoresCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateScoresCall(c));
  STOF_RETURN_IF_ERROR(MakeCurrent());
  const int64_t L = c.seq_len;
  switch (c.op) {
    case engine::ScoreOp::kScale: return LaunchScale(c.bh * L * L, c.x, c.scale, c.out, c.stream);
    case engine::ScoreOp::kSoftmax: return LaunchSoftmaxRows(c.bh * L, L, c.x, c.out, c.stream);
    default: break;
  }
  auto words = MaskWords(*c.mask);
  if (!words.IsOk()) return words.ToStatus();
  if (c.op == engine::ScoreOp::kMask)
    return LaunchApplyMask(c.bh, L, c.x, *words, c.out, c.stream);
  return LaunchScaleMaskSoftmax(c.bh, L, c.x, c.scale, *words, c.out, c.stream);
}

Status CudaBackend::RunHeads(const engine::HeadsCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateHeadsCall(c));
  STOF_RETURN_IF_ERROR(MakeCurrent());
  if (c.split)
    return LaunchSplitHeads(c.batch, c.seq_len, c.heads, c.head_dim, c.src, c.src_row_stride,
                            c.col_offset, c.dst, c.stream);
  return LaunchMergeHeads(c.batch, c.seq_len, c.heads, c.head_dim, c.src, c.dst, c.stream);
}

engine::Expected<engine::Measurement> CudaBackend::Measure(
    const std::function<Status(void* stream)>& work, const engine::MeasureOptions& o) {
  if (o.repeats < 1)
    return MakeError("measure: repeats: must be at least 1, got " + std::to_string(o.repeats));
  STOF_RETURN_IF_ERROR(MakeCurrent());
  cudaStream_t stream = nullptr;
  STOF_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const auto cleanup = [&] {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  };
  const auto run = [&]() -> Status {
    if (exec) {
      STOF_CUDA_TRY(cudaGraphLaunch(exec, stream));
      return Status::Ok();
    }
    return work(stream);
  };
  Status st = [&]() -> Status {
    STOF_CUDA_TRY(cudaEventCreate(&start));
    STOF_CUDA_TRY(cudaEventCreate(&stop));
    // One plain run first: lazy setup (plans, layouts, kernel attributes) happens outside
    // any capture, and errors surface with their own message.
    STOF_RETURN_IF_ERROR(work(stream));
    STOF_CUDA_TRY(cudaStreamSynchronize(stream));
    if (o.graph) {
      STOF_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      Status captured = work(stream);
      cudaGraph_t g = nullptr;
      const cudaError_t end = cudaStreamEndCapture(stream, &g);
      graph = g;
      STOF_RETURN_IF_ERROR(captured);
      STOF_CUDA_TRY(end);
      STOF_CUDA_TRY(cudaGraphInstantiate(&exec, graph, 0));
    }
    for (int i = 0; i < o.warmup; ++i) STOF_RETURN_IF_ERROR(run());
    STOF_CUDA_TRY(cudaStreamSynchronize(stream));
    return Status::Ok();
  }();
  if (!st.IsOk()) {
    cleanup();
    return st;
  }
  std::vector<double> us;
  double spent = 0;
  for (int i = 0; i < o.repeats; ++i) {
    Status s = [&]() -> Status {
      STOF_CUDA_TRY(cudaEventRecord(start, stream));
      STOF_RETURN_IF_ERROR(run());
      STOF_CUDA_TRY(cudaEventRecord(stop, stream));
      STOF_CUDA_TRY(cudaEventSynchronize(stop));
      float ms = 0;
      STOF_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
      us.push_back(1000.0 * ms);
      spent += ms / 1000.0;
      return Status::Ok();
    }();
    if (!s.IsOk()) {
      cleanup();
      return s;
    }
    if (spent > o.max_seconds) break;
  }
  cleanup();
  std::sort(us.begin(), us.end());
  engine::Measurement m;
  m.median_us = us[us.size() / 2];
  m.min_us = us.front();
  m.repeats = static_cast<int>(us.size());
  m.method = o.graph ? "cuda graph + events" : "cuda events";
  return m;
}

}  // namespace stof::kernels
