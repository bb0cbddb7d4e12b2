// engine::Backend: the interface every compute backend implements, with no CUDA types, so the
// engine, the CLI and the GUI can drive CPU and GPU alike. CpuBackend (engine/cpu/) runs the
// fp32 reference; CudaBackend (kernels/) runs our CUDA kernels. Buffers are opaque pointers in
// the backend's memory space; streams are opaque handles.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/layer_ops.h"
#include "engine/mask/mask.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

// num_warps of the block-wise kernel's Hopper form (sm_90, docs/kernels-hopper.md): 12 at
// BLOCK_M 128 (a producer warpgroup and two consumer warpgroups), 5 at BLOCK_M 64 (one consumer
// warpgroup and one producer warp). The portable mma.sync form takes 1, 2, 4, 8, so num_warps
// alone says which form a configuration is.
constexpr int64_t kHopperMhaWarps = 12;
constexpr int64_t kHopperMhaWarps64 = 5;
constexpr bool IsHopperMhaWarps(int64_t num_warps) {
  return num_warps == kHopperMhaWarps || num_warps == kHopperMhaWarps64;
}

// What kernel to run for MHA and with which parameters (Eq. 1 / Eq. 2 or an override).
struct MhaConfig {
  MhaKernel kernel = MhaKernel::kBlockWise;
  int64_t block_m = 64, block_n = 64, num_warps = 4;
  bool operator==(const MhaConfig&) const = default;
};
// "64x128 warps 5": a block-wise configuration in the choice's notes and messages.
std::string MhaConfigText(int64_t block_m, int64_t block_n, int64_t num_warps);

// The attention block's four exact variants, the "fusion ladder" (docs/fusion.md): F the fused
// sparse kernel (row-wise or block-wise per MhaConfig), U unfused (GEMM, scale+mask+softmax,
// GEMM), SD decomposed softmax (GEMM, LS, IR, GS, GEMM), SDF decomposed + fused (LS in the
// QK^T GEMM's epilogue, GS in the PV GEMM's prologue).
enum class MhaVariant { kFused, kUnfused, kDecomposed, kRecomposed };
const char* MhaVariantName(MhaVariant v);  // "fused", "unfused", "sd", "sdf"
Expected<MhaVariant> ParseMhaVariant(const std::string& s, const std::string& what);

// Element strides of one attention operand: between batches, between heads and between rows
// (a row's head_dim values are contiguous). All zero = packed [B, H, L, d]. A layer passes
// views into its projections ([B, L, 3 H d]: batch L*3Hd, head d, row 3Hd) so no head split
// or merge is needed; the CUDA backend takes them for the fused block-wise kernel only.
struct MhaStrides {
  int64_t batch = 0, head = 0, row = 0;
  bool Packed() const { return batch == 0 && head == 0 && row == 0; }
};

// One MHA call: q, k, v, o are [B, H, L, d] in the backend's memory, of workload.dtype
// (or strided views, below).
struct MhaCall {
  Workload workload;
  const Mask* mask = nullptr;  // L x L, shared by all (batch, head)
  MhaConfig config;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  void* stream = nullptr;  // opaque; nullptr = the backend's default
  MhaVariant variant = MhaVariant::kFused;
  int64_t sub_len = 64;    // SD, SDF: the softmax sub-vector length T
  float scale = 0.0f;      // score scale; 0 = 1/sqrt(head_dim) (T5 attention passes 1)
  MhaStrides q_strides, kv_strides, o_strides;  // k and v share theirs
};

// How Backend::Measure times a piece of work.
struct MeasureOptions {
  int warmup = 2;
  int repeats = 10;          // at least 1; stops early once max_seconds is spent (>= 1 run)
  double max_seconds = 2.0;
  bool graph = false;        // CUDA: capture the work once into a CUDA graph and time replays
};
struct Measurement {
  double median_us = 0, min_us = 0;
  int repeats = 0;
  std::string method;        // "cuda events", "cuda graph + events", "host clock"
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;       // "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"
  virtual DeviceSpec Device() const = 0;      // what the models should assume
  virtual bool Supports(DType dtype) const = 0;

  virtual Expected<void*> Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  virtual Status CopyToDevice(void* dst, const void* host_src, size_t bytes) = 0;
  virtual Status CopyToHost(void* host_dst, const void* src, size_t bytes) = 0;
  virtual Status Synchronize() = 0;

  // Runs masked MHA; validates the call (shapes, mask size, dtype, config) first.
  virtual Status RunMha(const MhaCall& call) = 0;

  // The layer ops (engine/layer_ops.h). The defaults fail with "<backend>: <op> is not
  // supported", so a backend implements what it can.
  virtual Status RunGemm(const GemmCall& call);
  virtual Status RunBatchedGemm(const BatchedGemmCall& call);
  virtual Status RunEpilogue(const EpilogueCall& call);
  virtual Status RunNorm(const NormCall& call);
  virtual Status RunGemmNorm(const GemmNormCall& call);
  virtual Status RunGemmChain(const GemmChainCall& call);
  virtual Status RunScores(const ScoresCall& call);
  virtual Status RunHeads(const HeadsCall& call);

  // The tuner's parameter space for one call: every setting this backend can run for it,
  // its own default first. The defaults return one empty ParamMap (only the default), which
  // is all a backend without tunable kernels (the CPU reference) has.
  virtual Expected<std::vector<ParamMap>> GemmParamChoices(const GemmCall& call);
  virtual Expected<std::vector<ParamMap>> NormParamChoices(const NormCall& call);
  virtual Expected<std::vector<ParamMap>> GemmNormParamChoices(const GemmNormCall& call);
  virtual Expected<std::vector<ParamMap>> GemmChainParamChoices(const GemmChainCall& call);
  // The fused-MHA configurations this backend runs for `workload` and `mask`, its own pick
  // first (the tuner ranks the rest by Eq. 2). Default: one block-wise 64 x 64, 4 warps.
  virtual Expected<std::vector<MhaConfig>> MhaConfigChoices(const Workload& workload,
                                                            const Mask& mask);

  // Times `work` (which enqueues on the stream it is given): warm-up runs, then up to
  // `repeats` timed runs. The default uses the host clock around work + Synchronize.
  virtual Expected<Measurement> Measure(const std::function<Status(void* stream)>& work,
                                        const MeasureOptions& options);
};

// Buffers allocated on a backend and freed with this object (on every return path): what a
// measurement that allocates its inputs needs (`stof bench`, profiler::MeasureLadder).
class BackendBuffers {
 public:
  explicit BackendBuffers(Backend& backend) : m_backend(backend) {}
  ~BackendBuffers() {
    for (void* p : m_ptrs) m_backend.Free(p);
  }
  BackendBuffers(const BackendBuffers&) = delete;
  BackendBuffers& operator=(const BackendBuffers&) = delete;
  Expected<void*> Add(size_t bytes) {
    auto p = m_backend.Allocate(bytes);
    if (p.IsOk()) m_ptrs.push_back(*p);
    return p;
  }

 private:
  Backend& m_backend;
  std::vector<void*> m_ptrs;
};

// Checks what every backend needs of an MhaCall: workload valid, mask present and L x L,
// pointers set. Backends call it first.
Status ValidateMhaCall(const MhaCall& call);

}  // namespace stof::engine
