// LtGemm: the Linear layers of a transformer layer (QKV projection, attention output, FFN1,
// FFN2) through cuBLASLt with the epilogue fused into the GEMM (bias, GELU(tanh)/ReLU, residual
// add), and the batched attention GEMMs (Q K^T and P V) as strided-batched cuBLASLt matmuls.
// Used by the fusion templates, the tuner (GemmEpilogueParams::algo is its knob) and the GPU
// tests (tests/gpu/lt_gemm_test.cpp). CUDA-free header: device buffers are void*, streams are
// opaque cudaStream_t passed as void*.
//
// Invariants: every matrix is row-major and contiguous, fp16 in and out (device buffers hold
// __half), fp32 accumulation (CUBLAS_COMPUTE_32F, fp32 alpha/beta). Validation happens on the
// host (Check / CheckBatched) before anything is enqueued; the messages name the field.
// Descriptors, layouts and the heuristic's algorithm list are built once per (shape, epilogue,
// pointer alignment) and cached, so a repeated Run on the same shape only sets the bias pointer
// and enqueues the matmul (cheap enough for timed loops; capturable in CUDA graphs once the
// shape has been run or AlgoCount'ed outside the capture).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/core/activation.h"
#include "engine/core/status.h"

namespace stof::kernels {

// out[m, n] = act(a[m, k] w[k, n] + bias[n]) + residual[m, n]. act is applied before the
// residual is added; act != kNone together with residual is refused (cuBLASLt adds C before its
// activation, and no fusion template needs act-then-add in one GEMM).
struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;         // [m, k] row-major fp16 (activations)
  const void* w = nullptr;         // [k, n] row-major fp16 (weight)
  const void* bias = nullptr;      // [n] fp16, optional
  engine::Activation act = engine::Activation::kNone;
  const void* residual = nullptr;  // [m, n] fp16, optional; out = act(a w + bias) + residual
  void* out = nullptr;             // [m, n] fp16; may equal residual (in place)
};

// The tuner's knob: an index into cuBLASLt's heuristic list for the shape (0 = its first
// choice), valid below AlgoCount().
struct GemmEpilogueParams {
  int algo = 0;
};

// c[i] = alpha * a[i] (m x k) * (trans_b ? b[i]^T : b[i]) for i < batch; b[i] is [n, k] when
// trans_b, else [k, n]; every matrix row-major, fp16; beta = 0 (c is only written).
// QK^T: a = Q [BH, L, d], b = K [BH, L, d], trans_b, c = S [BH, L, L] (alpha = 1/sqrt(d) folds
// the softmax scale in). PV: a = P [BH, L, L], b = V [BH, L, d], c = O [BH, L, d].
struct BatchedGemmArgs {
  int64_t batch = 0, m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  bool trans_b = false;
  float alpha = 1.0f;
  // Elements between consecutive batches; -1 = packed (m*k, k*n, m*n). 0 broadcasts one a or b
  // to every batch; stride_c must keep the outputs apart (>= m*n when batch > 1).
  int64_t stride_a = -1, stride_b = -1, stride_c = -1;
};

class LtGemm {
 public:
  // Workspace handed to every cuBLASLt matmul: 32 MiB, NVIDIA's recommended cuBLAS/cuBLASLt
  // workspace for Hopper (4 MiB suffices before it). Algorithms needing more are not listed.
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;
  // At most this many heuristic algorithms are requested per shape (AlgoCount's cap).
  static constexpr int kMaxAlgos = 8;

  // Creates the cuBLASLt handle and allocates the workspace on the current device. Run,
  // AlgoCount and RunBatched must be called with that device current (checked). The mutex
  // makes the plan cache safe to use from several host threads, but the one workspace is
  // shared by every matmul this object enqueues: matmuls on different streams must not run
  // concurrently on the GPU (give each concurrent stream its own LtGemm).
  static engine::Expected<std::unique_ptr<LtGemm>> Create();
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // m, n, k >= 1; a, w, out non-null; out must not alias a or w; act + residual refused.
  engine::Status Check(const GemmArgs& args) const;
  // batch, m, n, k >= 1; a, b, c non-null; strides -1 or >= 0, stride_c >= m*n if batch > 1.
  engine::Status CheckBatched(const BatchedGemmArgs& args) const;

  // Enqueues out = act(a w + bias) + residual on `stream` with cuBLASLt's algorithm number
  // params.algo (0 <= algo < AlgoCount(args)). Asynchronous; faults surface at synchronise.
  engine::Status Run(const GemmArgs& args, const GemmEpilogueParams& params, void* stream);

  // How many heuristic algorithms cuBLASLt offers for this shape and epilogue (1..kMaxAlgos).
  // Depends on the alignment of the pointers too (256 bytes for cudaMalloc'ed buffers): ask
  // with the buffers (or equally aligned ones) that Run will get. Builds the cached plan.
  engine::Expected<int> AlgoCount(const GemmArgs& args);

  // Enqueues the strided-batched product on `stream` with cuBLASLt's first heuristic choice.
  engine::Status RunBatched(const BatchedGemmArgs& args, void* stream);

  // Cached plans (one per distinct shape/epilogue/alignment seen); for tests and diagnostics.
  size_t CachedPlans() const;

  // Floor inputs (docs/kernels-gemm-epilogue.md): 2 m n k flops, and the bytes that must move
  // at least: a, w, bias and residual read once, out written once (fp16).
  static double Flops(const GemmArgs& args) { return 2.0 * args.m * args.n * args.k; }
  static double MinBytes(const GemmArgs& args);
  static double Flops(const BatchedGemmArgs& args) {
    return 2.0 * args.batch * args.m * args.n * args.k;
  }
  // A broadcast operand (stride 0) counts once.
  static double MinBytes(const BatchedGemmArgs& args);

 private:
  LtGemm() = default;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace stof::kernels
