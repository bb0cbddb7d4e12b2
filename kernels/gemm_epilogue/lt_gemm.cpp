// LtGemm (lt_gemm.h): cuBLASLt matmuls with fused epilogues, and strided-batched matmuls.
//
// Row-major through the usual swap: cuBLASLt is column-major, and a row-major [r, c] buffer is
// the column-major [c, r] matrix, its transpose. So out = a w (row-major) is computed as the
// column-major out^T (n x m, ld n) = w^T (n x k, ld n) * a^T (k x m, ld k): cuBLASLt's A is our
// w, its B our a, its D our out. The bias then runs along D's rows (length n), which is what
// CUBLASLT_EPILOGUE_*BIAS broadcasts. CUBLASLT_ORDER_ROW was not used: the column-major path is
// the one every cuBLASLt algorithm supports.
// The residual is cuBLASLt's C with beta = 1 (D = alpha A B + beta C, then bias and
// activation); in place (residual == out) is C == D with identical layouts, which cuBLASLt
// supports. Without a residual beta = 0 and C is D (never read).
// Plans (descriptors, layouts and up to kMaxAlgos heuristic results) are keyed by the shape, the
// epilogue and the pointers' alignments: the heuristic only lists algorithms valid for the
// alignments it is told (default 256 bytes), so an offset pointer must get its own plan.
#include "kernels/gemm_epilogue/lt_gemm.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/gemm/cublas_check.h"

namespace stof::kernels {

namespace {

constexpr uint32_t kMaxAlignment = 256;  // cuBLASLt's default (and largest) assumption

// Largest power of two dividing the address, capped at 256 bytes.
uint32_t PointerAlignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  if (v == 0) return kMaxAlignment;
  const uintptr_t low = v & (~v + 1);
  return low >= kMaxAlignment ? kMaxAlignment : static_cast<uint32_t>(low);
}

// Alignment every batch's matrix keeps: the base's and the byte stride's (fp16 elements).
uint32_t BatchedAlignment(const void* p, int64_t stride_elements) {
  const uint32_t base = PointerAlignment(p);
  if (stride_elements <= 0) return base;
  const uint32_t stride = PointerAlignment(reinterpret_cast<const void*>(
      static_cast<uintptr_t>(stride_elements) * 2u));
  return base < stride ? base : stride;
}

std::string Dims(int64_t m, int64_t n, int64_t k) {
  return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
}

// One cuBLASLt matmul in cuBLASLt's own (column-major) terms; also the cache key.
struct MatmulShape {
  bool trans_a = false;  // op on cuBLASLt's A (B is never transposed)
  uint64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0, d_rows = 0, d_cols = 0;
  int64_t lda = 0, ldb = 0, ldd = 0;
  int32_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;  // elements, only with batch > 1
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool has_c = false;  // beta = 1 (residual)
  uint32_t align_a = kMaxAlignment, align_b = kMaxAlignment, align_c = kMaxAlignment,
           align_d = kMaxAlignment, align_bias = kMaxAlignment;

  using Key = std::array<int64_t, 20>;
  Key ToKey() const {
    return {trans_a, static_cast<int64_t>(a_rows), static_cast<int64_t>(a_cols),
            static_cast<int64_t>(b_rows), static_cast<int64_t>(b_cols),
            static_cast<int64_t>(d_rows), static_cast<int64_t>(d_cols), lda, ldb, ldd, batch,
            stride_a, stride_b, stride_d, epilogue, has_c, align_a, align_b, align_c,
            static_cast<int64_t>(align_d) * 1024 + align_bias};
  }
};

cublasLtEpilogue_t EpilogueFor(bool bias, engine::Activation act) {
  switch (act) {
    case engine::Activation::kGelu: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case engine::Activation::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

MatmulShape LinearShape(const GemmArgs& g) {
  MatmulShape s;
  s.a_rows = static_cast<uint64_t>(g.n);  // w^T: n x k, ld n
  s.a_cols = static_cast<uint64_t>(g.k);
  s.lda = g.n;
  s.b_rows = static_cast<uint64_t>(g.k);  // a^T: k x m, ld k
  s.b_cols = static_cast<uint64_t>(g.m);
  s.ldb = g.k;
  s.d_rows = static_cast<uint64_t>(g.n);  // out^T: n x m, ld n
  s.d_cols = static_cast<uint64_t>(g.m);
  s.ldd = g.n;
  s.epilogue = EpilogueFor(g.bias != nullptr, g.act);
  s.has_c = g.residual != nullptr;
  s.align_a = PointerAlignment(g.w);
  s.align_b = PointerAlignment(g.a);
  s.align_c = PointerAlignment(g.residual ? g.residual : g.out);
  s.align_d = PointerAlignment(g.out);
  s.align_bias = PointerAlignment(g.bias);
  return s;
}

int64_t Packed(int64_t stride, int64_t packed) { return stride < 0 ? packed : stride; }

MatmulShape BatchedShape(const BatchedGemmArgs& g) {
  MatmulShape s;
  // c^T (n x m, ld n) = op(b)^T (n x k) * a^T (k x m, ld k). b row-major [k, n] is the
  // column-major n x k matrix b^T, ld n; b row-major [n, k] (trans_b) is the column-major k x n
  // matrix b^T, ld k, used transposed.
  s.trans_a = g.trans_b;
  s.a_rows = static_cast<uint64_t>(g.trans_b ? g.k : g.n);
  s.a_cols = static_cast<uint64_t>(g.trans_b ? g.n : g.k);
  s.lda = g.trans_b ? g.k : g.n;
  s.b_rows = static_cast<uint64_t>(g.k);
  s.b_cols = static_cast<uint64_t>(g.m);
  s.ldb = g.k;
  s.d_rows = static_cast<uint64_t>(g.n);
  s.d_cols = static_cast<uint64_t>(g.m);
  s.ldd = g.n;
  s.batch = static_cast<int32_t>(g.batch);
  s.stride_a = Packed(g.stride_b, g.k * g.n);
  s.stride_b = Packed(g.stride_a, g.m * g.k);
  s.stride_d = Packed(g.stride_c, g.m * g.n);
  s.align_a = BatchedAlignment(g.b, s.stride_a);
  s.align_b = BatchedAlignment(g.a, s.stride_b);
  s.align_c = s.align_d = BatchedAlignment(g.c, s.stride_d);
  return s;
}

// Descriptors of one matmul and its heuristic list; C and D share `c`.
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

struct Preference {
  cublasLtMatmulPreference_t p = nullptr;
  ~Preference() {
    if (p) cublasLtMatmulPreferenceDestroy(p);
  }
};

engine::Status MakeLayout(cublasLtMatrixLayout_t* layout, uint64_t rows, uint64_t cols,
                          int64_t ld, int32_t batch, int64_t stride) {
  STOF_CUBLAS_TRY(cublasLtMatrixLayoutCreate(layout, CUDA_R_16F, rows, cols, ld));
  if (batch > 1) {
    STOF_CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                     &batch, sizeof(batch)));
    STOF_CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(
        *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return engine::Status::Ok();
}

// Builds the descriptors and asks the heuristic for up to kMaxAlgos algorithms. `bias` is set
// on the descriptor before the query: the heuristic reads its alignment from the pointer.
engine::Expected<std::unique_ptr<Plan>> BuildPlan(cublasLtHandle_t handle, const MatmulShape& s,
                                                  const void* bias) {
  auto plan = std::make_unique<Plan>();
  STOF_CUBLAS_TRY(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t op_a = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  STOF_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a,
                                                 sizeof(op_a)));
  STOF_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b,
                                                 sizeof(op_b)));
  const uint32_t epilogue = s.epilogue;
  STOF_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                 &epilogue, sizeof(epilogue)));
  if (bias) {
    const int32_t bias_type = CUDA_R_16F;
    STOF_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                   &bias_type, sizeof(bias_type)));
    STOF_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                   &bias, sizeof(bias)));
  }
  STOF_RETURN_IF_ERROR(MakeLayout(&plan->a, s.a_rows, s.a_cols, s.lda, s.batch, s.stride_a));
  STOF_RETURN_IF_ERROR(MakeLayout(&plan->b, s.b_rows, s.b_cols, s.ldb, s.batch, s.stride_b));
  STOF_RETURN_IF_ERROR(MakeLayout(&plan->c, s.d_rows, s.d_cols, s.ldd, s.batch, s.stride_d));

  Preference pref;
  STOF_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref.p));
  const uint64_t workspace = LtGemm::kWorkspaceBytes;
  STOF_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(
      pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, s.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, s.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, s.align_c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, s.align_d}};
  for (const auto& [attr, bytes] : alignments)
    STOF_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref.p, attr, &bytes, sizeof(bytes)));

  cublasLtMatmulHeuristicResult_t results[LtGemm::kMaxAlgos] = {};
  int returned = 0;
  STOF_CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(handle, plan->op, plan->a, plan->b, plan->c,
                                                 plan->c, pref.p, LtGemm::kMaxAlgos, results,
                                                 &returned));
  for (int i = 0; i < returned; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) plan->algos.push_back(results[i]);
  if (plan->algos.empty())
    return engine::Error{"cuBLASLt: cublasLtMatmulAlgoGetHeuristic: no algorithm returned"};
  return plan;
}

}  // namespace

struct LtGemm::Impl {
  int device = 0;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  mutable std::mutex mutex;  // guards plans and the bias pointer written into a plan's op
  std::map<MatmulShape::Key, std::unique_ptr<Plan>> plans;

  // The cached plan for `s`, built on first use. Call with `mutex` held.
  engine::Expected<Plan*> GetPlan(const MatmulShape& s, const void* bias, const std::string& what) {
    const MatmulShape::Key key = s.ToKey();
    auto it = plans.find(key);
    if (it != plans.end()) return it->second.get();
    auto plan = BuildPlan(handle, s, bias);
    if (!plan.IsOk()) return engine::Error{"LtGemm: " + what + ": " + plan.Message()};
    Plan* raw = plan->get();
    plans.emplace(key, std::move(*plan));
    return raw;
  }

  engine::Status CheckDevice() const {
    int current = -1;
    STOF_CUDA_TRY(cudaGetDevice(&current));
    if (current != device)
      return engine::Error{"LtGemm: current device is " + std::to_string(current) +
                           ", but this LtGemm was created on device " + std::to_string(device)};
    // cuBLASLt launches through the driver API, which needs a current context; a host thread
    // that has made no runtime call yet has none (cudaGetDevice does not create it), and its
    // first matmul failed with CUBLAS_STATUS_EXECUTION_FAILED on an H100.
    // cudaSetDevice makes the device's primary context current in this thread.
    STOF_CUDA_TRY(cudaSetDevice(device));
    return engine::Status::Ok();
  }
};

engine::Expected<std::unique_ptr<LtGemm>> LtGemm::Create() {
  std::unique_ptr<LtGemm> g(new LtGemm());
  g->m_impl = std::make_unique<Impl>();
  STOF_CUDA_TRY(cudaGetDevice(&g->m_impl->device));
  STOF_CUBLAS_TRY(cublasLtCreate(&g->m_impl->handle));
  STOF_CUDA_TRY(cudaMalloc(&g->m_impl->workspace, kWorkspaceBytes));
  return g;
}

LtGemm::~LtGemm() {
  if (!m_impl) return;
  m_impl->plans.clear();
  if (m_impl->workspace) cudaFree(m_impl->workspace);
  if (m_impl->handle) cublasLtDestroy(m_impl->handle);
}

engine::Status LtGemm::Check(const GemmArgs& g) const {
  const std::pair<const char*, int64_t> dims[] = {{"m", g.m}, {"n", g.n}, {"k", g.k}};
  for (const auto& [name, v] : dims)
    if (v < 1 || v > INT32_MAX)
      return engine::Error{std::string("LtGemm: ") + name + ": expected 1..2^31-1, got " +
                           std::to_string(v)};
  if (!g.a) return engine::Error{"LtGemm: a: null pointer"};
  if (!g.w) return engine::Error{"LtGemm: w: null pointer"};
  if (!g.out) return engine::Error{"LtGemm: out: null pointer"};
  if (g.out == g.a || g.out == g.w)
    return engine::Error{std::string("LtGemm: out: must not alias ") + (g.out == g.a ? "a" : "w") +
                         " (only residual may be updated in place)"};
  if (g.act != engine::Activation::kNone && g.residual)
    return engine::Error{std::string("LtGemm: act: ") + engine::ActivationName(g.act) +
                         " together with residual is not supported (cuBLASLt adds the residual "
                         "before the activation); use act none or no residual"};
  return engine::Status::Ok();
}

engine::Status LtGemm::CheckBatched(const BatchedGemmArgs& g) const {
  const std::pair<const char*, int64_t> dims[] = {
      {"batch", g.batch}, {"m", g.m}, {"n", g.n}, {"k", g.k}};
  for (const auto& [name, v] : dims)
    if (v < 1 || v > INT32_MAX)
      return engine::Error{std::string("LtGemm batched: ") + name + ": expected 1..2^31-1, got " +
                           std::to_string(v)};
  if (!g.a) return engine::Error{"LtGemm batched: a: null pointer"};
  if (!g.b) return engine::Error{"LtGemm batched: b: null pointer"};
  if (!g.c) return engine::Error{"LtGemm batched: c: null pointer"};
  if (g.c == g.a || g.c == g.b)
    return engine::Error{std::string("LtGemm batched: c: must not alias ") +
                         (g.c == g.a ? "a" : "b")};
  const std::pair<const char*, int64_t> strides[] = {
      {"stride_a", g.stride_a}, {"stride_b", g.stride_b}, {"stride_c", g.stride_c}};
  for (const auto& [name, v] : strides)
    if (v < -1)
      return engine::Error{std::string("LtGemm batched: ") + name +
                           ": expected -1 (packed) or >= 0, got " + std::to_string(v)};
  if (g.batch > 1 && g.stride_c != -1 && g.stride_c < g.m * g.n)
    return engine::Error{"LtGemm batched: stride_c: expected -1 or >= m*n = " +
                         std::to_string(g.m * g.n) + " (outputs of different batches overlap), got " +
                         std::to_string(g.stride_c)};
  return engine::Status::Ok();
}

engine::Status LtGemm::Run(const GemmArgs& args, const GemmEpilogueParams& params, void* stream) {
  STOF_RETURN_IF_ERROR(Check(args));
  if (params.algo < 0 || params.algo >= kMaxAlgos)
    return engine::Error{"LtGemm: params.algo: expected 0.." + std::to_string(kMaxAlgos - 1) +
                         ", got " + std::to_string(params.algo)};
  STOF_RETURN_IF_ERROR(m_impl->CheckDevice());
  const MatmulShape shape = LinearShape(args);
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  auto plan = m_impl->GetPlan(shape, args.bias, Dims(args.m, args.n, args.k));
  if (!plan.IsOk()) return plan.ToStatus();
  Plan& p = **plan;
  if (params.algo >= static_cast<int>(p.algos.size()))
    return engine::Error{"LtGemm: params.algo: expected 0.." + std::to_string(p.algos.size() - 1) +
                         " (cuBLASLt lists " + std::to_string(p.algos.size()) +
                         " algorithms for " + Dims(args.m, args.n, args.k) + " and this epilogue), got " +
                         std::to_string(params.algo)};
  if (args.bias)  // a host-side field of the descriptor: no device work
    STOF_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                   &args.bias, sizeof(args.bias)));
  const float alpha = 1.0f, beta = args.residual ? 1.0f : 0.0f;
  const void* c = args.residual ? args.residual : args.out;
  STOF_CUBLAS_TRY(cublasLtMatmul(m_impl->handle, p.op, &alpha, args.w, p.a, args.a, p.b, &beta, c,
                                 p.c, args.out, p.c, &p.algos[static_cast<size_t>(params.algo)].algo,
                                 m_impl->workspace, kWorkspaceBytes,
                                 static_cast<cudaStream_t>(stream)));
  return engine::Status::Ok();
}

engine::Expected<int> LtGemm::AlgoCount(const GemmArgs& args) {
  STOF_RETURN_IF_ERROR(Check(args));
  STOF_RETURN_IF_ERROR(m_impl->CheckDevice());
  const MatmulShape shape = LinearShape(args);
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  auto plan = m_impl->GetPlan(shape, args.bias, Dims(args.m, args.n, args.k));
  if (!plan.IsOk()) return engine::Error{plan.Message()};
  return static_cast<int>((*plan)->algos.size());
}

engine::Status LtGemm::RunBatched(const BatchedGemmArgs& args, void* stream) {
  STOF_RETURN_IF_ERROR(CheckBatched(args));
  STOF_RETURN_IF_ERROR(m_impl->CheckDevice());
  const MatmulShape shape = BatchedShape(args);
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  auto plan = m_impl->GetPlan(shape, nullptr,
                              "batched batch=" + std::to_string(args.batch) + " " +
                                  Dims(args.m, args.n, args.k) +
                                  (args.trans_b ? " trans_b" : ""));
  if (!plan.IsOk()) return plan.ToStatus();
  Plan& p = **plan;
  const float beta = 0.0f;
  STOF_CUBLAS_TRY(cublasLtMatmul(m_impl->handle, p.op, &args.alpha, args.b, p.a, args.a, p.b,
                                 &beta, args.c, p.c, args.c, p.c, &p.algos[0].algo,
                                 m_impl->workspace, kWorkspaceBytes,
                                 static_cast<cudaStream_t>(stream)));
  return engine::Status::Ok();
}

size_t LtGemm::CachedPlans() const {
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  return m_impl->plans.size();
}

double LtGemm::MinBytes(const GemmArgs& g) {
  const double elements = static_cast<double>(g.m) * g.k + static_cast<double>(g.k) * g.n +
                          static_cast<double>(g.m) * g.n + (g.bias ? static_cast<double>(g.n) : 0.0) +
                          (g.residual ? static_cast<double>(g.m) * g.n : 0.0);
  return 2.0 * elements;
}

double LtGemm::MinBytes(const BatchedGemmArgs& g) {
  const double a_copies = g.stride_a == 0 ? 1.0 : static_cast<double>(g.batch);
  const double b_copies = g.stride_b == 0 ? 1.0 : static_cast<double>(g.batch);
  const double elements = a_copies * g.m * g.k + b_copies * g.k * g.n +
                          static_cast<double>(g.batch) * g.m * g.n;
  return 2.0 * elements;
}

}  // namespace stof::kernels
