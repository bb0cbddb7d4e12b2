// GPU: LtGemm (kernels/gemm_epilogue/lt_gemm.h) against the CPU reference. Linear layers: every
// epilogue (none, bias, bias+gelu, bias+relu, gelu, relu, bias+residual, residual) at the BERT
// shapes vs cpu::LinearEpilogue, ragged and odd shapes, offset (unaligned) pointers, every
// heuristic algorithm of one shape, residual in place, the plan cache, CUDA graph capture and
// concurrent host threads. Batched: Q K^T and P V (plus broadcast and padded strides) vs
// cpu::Gemm. Bad input: errors that name the field.
//
// Method: fresh seeded inputs rounded to fp16 on the host (the reference sees exactly the
// values the GPU reads), the output poisoned with 0xFF bytes (NaN) before every run, no
// non-finite value anywhere in the output afterwards (CountNonFinite over the whole buffer, so
// unsampled rows count too), and the per-row error below kTolerance.
//
// Error metric (the MHA tests' form, kernels/util/mha_check.h): per output row,
// max_c |out - ref| / max(max_c |ref|, 1e-3). Inputs: a, bias, residual uniform in [-1, 1);
// w uniform in [-1, 1) * 2/sqrt(k) (so a w has std ~0.67 whatever k, like trained weights, and
// GELU/ReLU see both signs), rows' max |ref| ~ 2..4. Expected error, relative to that row
// scale: fp16 rounding of the output <= 2^-11 = 4.9e-4; fp32 accumulation over k <= 3072 terms
// ~1e-4; cuBLASLt's GELU may use a fast tanh (relative error ~2^-11 of tanh, times 0.5 |x|)
// <= ~5e-4. Sum ~1.1e-3, so kTolerance = 3e-3 leaves margin while still catching a dropped
// bias or residual (~0.3 of the row scale), a wrong activation, a transposed operand, a missing
// k term (~0.02 / 3 = 6e-3) or a wrong row.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device_buffer.h"
#include "engine/core/activation.h"
#include "engine/cpu/reference.h"
#include "gpu_test_util.h"
#include "kernels/gemm_epilogue/lt_gemm.h"
#include "kernels/util/finite_check.h"
#include "kernels/util/mha_check.h"

namespace {

namespace se = stof::engine;
namespace sk = stof::kernels;
namespace st = stof::testing;
using se::Activation;

constexpr double kTolerance = 3e-3;
constexpr double kRowFloor = 1e-3;

// fp16 values uniform in [lo, hi) * scale (seeded) and their exact fp32 copies.
st::HalfVec Random(int64_t count, uint64_t seed, float scale = 1.0f, float lo = -1.0f,
                   float hi = 1.0f) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 7;
  return st::RandomHalves(count, state, [=](double u) { return (lo + (hi - lo) * u) * scale; });
}

// Bytes of `count` fp16 elements (plus `pad` spare elements for offset-pointer tests).
size_t HalfBytes(int64_t count, int64_t pad = 0) { return static_cast<size_t>(count + pad) * 2; }

// The shared LtGemm of this binary (null when no GPU): its plan cache is exercised across tests.
sk::LtGemm* Shared() {
  static std::unique_ptr<sk::LtGemm> gemm = [] {
    auto g = sk::LtGemm::Create();
    return g.IsOk() ? std::move(*g) : nullptr;
  }();
  return gemm.get();
}

// Rows checked against the reference: all when m <= 256, else the first 8, the last 8 and 48
// seeded ones in between (the CPU reference costs n k per row; 4096 x 3072 x 768 in full
// would take minutes).
std::vector<int64_t> SampleRows(int64_t m) {
  std::vector<int64_t> rows;
  if (m <= 256) {
    for (int64_t r = 0; r < m; ++r) rows.push_back(r);
    return rows;
  }
  for (int64_t r = 0; r < 8; ++r) rows.push_back(r);
  for (int64_t r = m - 8; r < m; ++r) rows.push_back(r);
  uint64_t state = static_cast<uint64_t>(m) * 31 + 5;
  for (int i = 0; i < 48; ++i) rows.push_back(8 + static_cast<int64_t>(sk::SplitMix64(state) % static_cast<uint64_t>(m - 16)));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// Runs `fn(i)` for i < count on all host cores.
template <class Fn>
void ParallelFor(size_t count, Fn fn) {
  const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < std::min(hw, count); ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < count; i += hw) fn(i);
    });
  for (auto& th : threads) th.join();
}

struct RowError {
  double err = 0;
  int64_t row = -1, col = -1;
  float out = 0, ref = 0;
};

// Folds one row (out fp16 bits vs ref) into `e` with the metric of the file comment.
void CompareRow(const uint16_t* out, const float* ref, int64_t n, int64_t row, RowError& e) {
  double row_max = 0, row_err = 0;
  int64_t col = 0;
  for (int64_t c = 0; c < n; ++c) {
    const double diff = std::fabs(static_cast<double>(sk::HalfToFloat(out[c])) - ref[c]);
    row_max = std::max(row_max, std::fabs(static_cast<double>(ref[c])));
    if (!(diff <= row_err)) {  // also catches NaN
      row_err = diff;
      col = c;
    }
  }
  const double rel = row_err / std::max(row_max, kRowFloor);
  if (!(rel <= e.err)) {
    e.err = rel;
    e.row = row;
    e.col = col;
    e.out = sk::HalfToFloat(out[col]);
    e.ref = ref[col];
  }
}

std::string Describe(const RowError& e) {
  return "row error " + std::to_string(e.err) + " at row " + std::to_string(e.row) + " col " +
         std::to_string(e.col) + ": out " + std::to_string(e.out) + " ref " +
         std::to_string(e.ref);
}

// One Linear problem's host data and device buffers.
struct LinearProblem {
  int64_t m, n, k;
  st::HalfVec a, w, bias, residual;
  st::DeviceBuffer da, dw, dbias, dres, dout;
  LinearProblem(int64_t m_, int64_t n_, int64_t k_, uint64_t seed, int64_t pad = 0)
      : m(m_), n(n_), k(k_),
        a(Random(m_ * k_, seed * 4 + 1)),
        w(Random(k_ * n_, seed * 4 + 2, 2.0f / std::sqrt(static_cast<float>(k_)))),
        bias(Random(n_, seed * 4 + 3)),
        residual(Random(m_ * n_, seed * 4 + 4)),
        da(HalfBytes(m_ * k_, pad)), dw(HalfBytes(k_ * n_, pad)), dbias(HalfBytes(n_, pad)),
        dres(HalfBytes(m_ * n_, pad)), dout(HalfBytes(m_ * n_, pad)) {}
  bool Ok() const { return da.Ok() && dw.Ok() && dbias.Ok() && dres.Ok() && dout.Ok(); }
  // Uploads every input at element offset `off` of its buffer (off > 0: unaligned pointers).
  bool UploadAll(int64_t off = 0) {
    const size_t at = static_cast<size_t>(off) * 2;
    return da.Upload(a, at).IsOk() && dw.Upload(w, at).IsOk() && dbias.Upload(bias, at).IsOk() &&
           dres.Upload(residual, at).IsOk();
  }
};

struct Epilogue {
  const char* name;
  bool bias;
  Activation act;
  bool residual;
};

constexpr Epilogue kEpilogues[] = {
    {"none", false, Activation::kNone, false},       {"bias", true, Activation::kNone, false},
    {"bias+gelu", true, Activation::kGelu, false},   {"bias+relu", true, Activation::kRelu, false},
    {"gelu", false, Activation::kGelu, false},       {"relu", false, Activation::kRelu, false},
    {"bias+residual", true, Activation::kNone, true}, {"residual", false, Activation::kNone, true}};

// out poisoned, Run, synchronise; no non-finite element in the whole output; the sampled rows
// within kTolerance of cpu::LinearEpilogue (on `res_host`: the residual's values before the
// run, which matters when out == residual). `off`: element offset of every pointer.
void CheckLinear(sk::LtGemm& gemm, LinearProblem& p, const Epilogue& e, int algo = 0,
                 int64_t off = 0, bool in_place = false, void* stream = nullptr) {
  SCOPED_TRACE(std::string("m=") + std::to_string(p.m) + " n=" + std::to_string(p.n) +
               " k=" + std::to_string(p.k) + " epilogue " + e.name + " algo " +
               std::to_string(algo) + (off ? " offset pointers" : "") +
               (in_place ? " in place" : ""));
  const size_t at = static_cast<size_t>(off) * 2;  // the byte offset of every pointer
  void* out = p.dout.At(at);
  if (in_place) {
    ASSERT_TRUE(p.dout.Upload(p.residual, at).IsOk());
  } else {
    ASSERT_TRUE(p.dout.Poison().IsOk());
  }
  sk::GemmArgs args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.a = p.da.At(at);
  args.w = p.dw.At(at);
  args.bias = e.bias ? p.dbias.At(at) : nullptr;
  args.act = e.act;
  args.residual = e.residual ? (in_place ? out : p.dres.At(at)) : nullptr;
  args.out = out;
  auto run = gemm.Run(args, sk::GemmEpilogueParams{algo}, stream);
  ASSERT_TRUE(run.IsOk()) << run.Message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto bad = sk::CountNonFinite(out, p.m * p.n, se::DType::kF16);
  ASSERT_TRUE(bad.IsOk()) << bad.Message();
  EXPECT_EQ(*bad, 0) << "non-finite or unwritten outputs";
  const auto got = p.dout.Download(p.m * p.n, at);
  ASSERT_TRUE(got.IsOk()) << got.Message();

  const std::vector<int64_t> rows = SampleRows(p.m);
  std::vector<float> ref(rows.size() * static_cast<size_t>(p.n));
  ParallelFor(rows.size(), [&](size_t i) {
    const int64_t r = rows[i];
    se::cpu::LinearEpilogue(p.a.f.data() + r * p.k, p.w.f.data(), e.bias ? p.bias.f.data() : nullptr,
                            e.act, e.residual ? p.residual.f.data() + r * p.n : nullptr,
                            ref.data() + i * static_cast<size_t>(p.n), 1, p.n, p.k);
  });
  RowError err;
  for (size_t i = 0; i < rows.size(); ++i)
    CompareRow(got->data() + rows[i] * p.n, ref.data() + i * static_cast<size_t>(p.n), p.n,
               rows[i], err);
  EXPECT_LT(err.err, kTolerance) << Describe(err);
}

struct Shape {
  int64_t m, n, k;
};

std::string ShapeName(const ::testing::TestParamInfo<Shape>& info) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "lit" + string&&.
  std::string name = "m";
  name += std::to_string(info.param.m);
  name += "_n";
  name += std::to_string(info.param.n);
  name += "_k";
  name += std::to_string(info.param.k);
  return name;
}

class LtGemmBert : public ::testing::TestWithParam<Shape> {};

// Every epilogue at one BERT-base Linear shape: (n, k) = QKV (2304, 768), attention output
// (768, 768), FFN1 (3072, 768), FFN2 (768, 3072), at m = 128 (one sequence) and 4096 (B 32).
TEST_P(LtGemmBert, EveryEpilogue) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  const Shape s = GetParam();
  LinearProblem p(s.m, s.n, s.k, static_cast<uint64_t>(s.m * 7 + s.n * 3 + s.k));
  ASSERT_TRUE(p.Ok());
  ASSERT_TRUE(p.UploadAll());
  for (const Epilogue& e : kEpilogues) CheckLinear(*gemm, p, e);
}

INSTANTIATE_TEST_SUITE_P(Shapes, LtGemmBert,
                         ::testing::Values(Shape{128, 2304, 768}, Shape{128, 768, 768},
                                           Shape{128, 3072, 768}, Shape{128, 768, 3072},
                                           Shape{4096, 2304, 768}, Shape{4096, 768, 768},
                                           Shape{4096, 3072, 768}, Shape{4096, 768, 3072}),
                         ShapeName);

// Ragged m (1 row, 77, 1000) at BERT widths, and odd n and k (rows of a, w and out not 16-byte
// aligned: cuBLASLt must pick an algorithm that handles that).
TEST(LtGemm, RaggedShapes) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  for (const Shape s : {Shape{1, 768, 768}, Shape{77, 3072, 768}, Shape{1000, 768, 3072},
                        Shape{77, 99, 65}, Shape{1, 3, 1}}) {
    LinearProblem p(s.m, s.n, s.k, static_cast<uint64_t>(s.m + s.n + s.k));
    ASSERT_TRUE(p.Ok());
    ASSERT_TRUE(p.UploadAll());
    for (const Epilogue& e : kEpilogues) CheckLinear(*gemm, p, e);
  }
}

// Pointers 2 bytes past a 256-byte boundary: the plan for them must ask the heuristic for
// 2-byte-aligned algorithms (a plan for aligned buffers could fault or misread). Distinct plans.
TEST(LtGemm, UnalignedPointers) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  LinearProblem p(200, 768, 768, 91, /*pad=*/1);
  ASSERT_TRUE(p.Ok());
  ASSERT_TRUE(p.UploadAll(1));
  CheckLinear(*gemm, p, kEpilogues[2], 0, /*off=*/1);
  CheckLinear(*gemm, p, kEpilogues[6], 0, /*off=*/1);
  const size_t plans = gemm->CachedPlans();
  ASSERT_TRUE(p.UploadAll(0));
  CheckLinear(*gemm, p, kEpilogues[2], 0, /*off=*/0);
  EXPECT_EQ(gemm->CachedPlans(), plans + 1) << "aligned pointers must get their own plan";
}

// Every algorithm the heuristic lists for one shape computes the same result; the index one
// past the list is an error naming params.algo.
TEST(LtGemm, EveryAlgorithm) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  LinearProblem p(512, 3072, 768, 17);
  ASSERT_TRUE(p.Ok());
  ASSERT_TRUE(p.UploadAll());
  for (const Epilogue& e : {kEpilogues[2], kEpilogues[6]}) {
    sk::GemmArgs args;
    args.m = p.m;
    args.n = p.n;
    args.k = p.k;
    args.a = p.da.Ptr();
    args.w = p.dw.Ptr();
    args.bias = e.bias ? p.dbias.Ptr() : nullptr;
    args.act = e.act;
    args.residual = e.residual ? p.dres.Ptr() : nullptr;
    args.out = p.dout.Ptr();
    auto count = gemm->AlgoCount(args);
    ASSERT_TRUE(count.IsOk()) << count.Message();
    EXPECT_GE(*count, 1);
    EXPECT_LE(*count, sk::LtGemm::kMaxAlgos);
    for (int algo = 0; algo < *count; ++algo) CheckLinear(*gemm, p, e, algo);
    auto past = gemm->Run(args, sk::GemmEpilogueParams{*count}, nullptr);
    ASSERT_FALSE(past.IsOk()) << "algo " << *count << " of " << *count;
    EXPECT_NE(past.Message().find("params.algo"), std::string::npos) << past.Message();
    auto negative = gemm->Run(args, sk::GemmEpilogueParams{-1}, nullptr);
    ASSERT_FALSE(negative.IsOk());
    EXPECT_NE(negative.Message().find("params.algo"), std::string::npos) << negative.Message();
  }
}

// out == residual: C == D in cuBLASLt, each element read before it is written.
TEST(LtGemm, ResidualInPlace) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  for (const Shape s : {Shape{128, 768, 768}, Shape{4096, 768, 3072}, Shape{77, 99, 65}}) {
    LinearProblem p(s.m, s.n, s.k, static_cast<uint64_t>(s.m * 5 + s.k));
    ASSERT_TRUE(p.Ok());
    ASSERT_TRUE(p.UploadAll());
    CheckLinear(*gemm, p, kEpilogues[6], 0, 0, /*in_place=*/true);  // bias + residual
    CheckLinear(*gemm, p, kEpilogues[7], 0, 0, /*in_place=*/true);  // residual only
  }
}

// Repeated runs reuse the cached plan; a run captured into a CUDA graph (after a warm-up run
// built the plan) replays correctly on another stream.
TEST(LtGemm, PlanCacheAndGraphCapture) {
  STOF_REQUIRE_GPU();
  auto created = sk::LtGemm::Create();  // a fresh object: known plan count
  ASSERT_TRUE(created.IsOk()) << created.Message();
  sk::LtGemm& gemm = **created;
  LinearProblem p(384, 2304, 768, 23);
  ASSERT_TRUE(p.Ok());
  ASSERT_TRUE(p.UploadAll());
  EXPECT_EQ(gemm.CachedPlans(), 0u);
  CheckLinear(gemm, p, kEpilogues[1]);
  EXPECT_EQ(gemm.CachedPlans(), 1u);
  for (int i = 0; i < 5; ++i) CheckLinear(gemm, p, kEpilogues[1]);
  EXPECT_EQ(gemm.CachedPlans(), 1u) << "the same shape and epilogue must reuse its plan";
  CheckLinear(gemm, p, kEpilogues[2]);
  EXPECT_EQ(gemm.CachedPlans(), 2u) << "another epilogue is another plan";

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  sk::GemmArgs args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.a = p.da.Ptr();
  args.w = p.dw.Ptr();
  args.bias = p.dbias.Ptr();
  args.act = Activation::kGelu;
  args.out = p.dout.Ptr();
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  auto run = gemm.Run(args, {}, stream);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_TRUE(run.IsOk()) << run.Message();
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_TRUE(p.dout.Poison().IsOk());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(gemm.CachedPlans(), 2u);
  auto bad = sk::CountNonFinite(p.dout.Ptr(), p.m * p.n, se::DType::kF16);
  ASSERT_TRUE(bad.IsOk()) << bad.Message();
  EXPECT_EQ(*bad, 0) << "the graph replay left outputs unwritten";
  const auto got = p.dout.Download(p.m * p.n);
  ASSERT_TRUE(got.IsOk()) << got.Message();
  RowError err;
  std::vector<float> ref(static_cast<size_t>(p.n));
  for (int64_t r : SampleRows(p.m)) {
    se::cpu::LinearEpilogue(p.a.f.data() + r * p.k, p.w.f.data(), p.bias.f.data(),
                            Activation::kGelu, nullptr, ref.data(), 1, p.n, p.k);
    CompareRow(got->data() + r * p.n, ref.data(), p.n, r, err);
  }
  EXPECT_LT(err.err, kTolerance) << Describe(err);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// Four host threads run different shapes through one LtGemm at once (the legacy default stream
// orders their matmuls, so the shared workspace is never used by two at a time): the plan cache
// stays consistent and every result is right.
TEST(LtGemm, ConcurrentHostThreads) {
  STOF_REQUIRE_GPU();
  auto created = sk::LtGemm::Create();
  ASSERT_TRUE(created.IsOk()) << created.Message();
  sk::LtGemm& gemm = **created;
  std::vector<std::unique_ptr<LinearProblem>> problems;
  for (int i = 0; i < 4; ++i) {
    problems.push_back(std::make_unique<LinearProblem>(64 + 32 * i, 768, 768, 100 + i));
    ASSERT_TRUE(problems.back()->Ok());
    ASSERT_TRUE(problems.back()->UploadAll());
  }
  std::vector<std::string> errors(problems.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < problems.size(); ++i)
    threads.emplace_back([&, i] {
      LinearProblem& p = *problems[i];
      sk::GemmArgs args;
      args.m = p.m;
      args.n = p.n;
      args.k = p.k;
      args.a = p.da.Ptr();
      args.w = p.dw.Ptr();
      args.bias = p.dbias.Ptr();
      args.residual = p.dres.Ptr();
      args.out = p.dout.Ptr();
      for (int rep = 0; rep < 20 && errors[i].empty(); ++rep) {
        auto count = gemm.AlgoCount(args);
        if (!count.IsOk()) errors[i] = count.Message();
        auto run = gemm.Run(args, {}, nullptr);
        if (!run.IsOk()) errors[i] = run.Message();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_TRUE(e.empty()) << e;
  EXPECT_EQ(gemm.CachedPlans(), problems.size());
  for (auto& p : problems) CheckLinear(gemm, *p, kEpilogues[6]);  // bias + residual
}

// --- Batched attention GEMMs ---

struct BatchedCase {
  int64_t bh, seq, d;
};

// S = alpha Q K^T and O = P V for each of bh slices, vs cpu::Gemm on each slice.
TEST(LtGemm, BatchedQkAndPv) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  for (const BatchedCase c : {BatchedCase{6, 128, 64}, BatchedCase{4, 77, 64},
                              BatchedCase{3, 200, 128}, BatchedCase{1, 1, 64}}) {
    SCOPED_TRACE("bh=" + std::to_string(c.bh) + " L=" + std::to_string(c.seq) +
                 " d=" + std::to_string(c.d));
    const int64_t L = c.seq, d = c.d, bh = c.bh;
    const st::HalfVec q = Random(bh * L * d, 1), k = Random(bh * L * d, 2),
                      v = Random(bh * L * d, 3);
    const st::HalfVec prob = Random(bh * L * L, 4, 1.0f, 0.0f, 1.0f);  // P-like: in [0, 1)
    st::DeviceBuffer dq(q.Bytes()), dk(k.Bytes()), dv(v.Bytes()), dp(prob.Bytes()),
        ds(HalfBytes(bh * L * L)), dout(HalfBytes(bh * L * d));
    ASSERT_TRUE(dq.Ok() && dk.Ok() && dv.Ok() && dp.Ok() && ds.Ok() && dout.Ok());
    ASSERT_TRUE(dq.Upload(q).IsOk() && dk.Upload(k).IsOk() && dv.Upload(v).IsOk() &&
                dp.Upload(prob).IsOk());

    // Q K^T, scaled by 1/sqrt(d).
    sk::BatchedGemmArgs qk;
    qk.batch = bh;
    qk.m = L;
    qk.n = L;
    qk.k = d;
    qk.a = dq.Ptr();
    qk.b = dk.Ptr();
    qk.c = ds.Ptr();
    qk.trans_b = true;
    qk.alpha = 1.0f / std::sqrt(static_cast<float>(d));
    ASSERT_TRUE(ds.Poison().IsOk());
    auto run = gemm->RunBatched(qk, nullptr);
    ASSERT_TRUE(run.IsOk()) << run.Message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto bad = sk::CountNonFinite(ds.Ptr(), bh * L * L, se::DType::kF16);
    ASSERT_TRUE(bad.IsOk() && *bad == 0) << "QK^T: non-finite or unwritten scores";
    auto got = ds.Download(bh * L * L);
    ASSERT_TRUE(got.IsOk()) << got.Message();
    std::vector<float> ref(static_cast<size_t>(L * L));
    RowError err;
    for (int64_t b = 0; b < bh; ++b) {
      se::cpu::Gemm(q.f.data() + b * L * d, k.f.data() + b * L * d, ref.data(), L, L, d, false,
                    true, qk.alpha);
      for (int64_t i = 0; i < L; ++i)
        CompareRow(got->data() + (b * L + i) * L, ref.data() + i * L, L, b * L + i, err);
    }
    EXPECT_LT(err.err, kTolerance) << "QK^T " << Describe(err);

    // P V.
    sk::BatchedGemmArgs pv;
    pv.batch = bh;
    pv.m = L;
    pv.n = d;
    pv.k = L;
    pv.a = dp.Ptr();
    pv.b = dv.Ptr();
    pv.c = dout.Ptr();
    ASSERT_TRUE(dout.Poison().IsOk());
    run = gemm->RunBatched(pv, nullptr);
    ASSERT_TRUE(run.IsOk()) << run.Message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    bad = sk::CountNonFinite(dout.Ptr(), bh * L * d, se::DType::kF16);
    ASSERT_TRUE(bad.IsOk() && *bad == 0) << "PV: non-finite or unwritten outputs";
    got = dout.Download(bh * L * d);
    ASSERT_TRUE(got.IsOk()) << got.Message();
    ref.assign(static_cast<size_t>(L * d), 0.f);
    err = RowError{};
    for (int64_t b = 0; b < bh; ++b) {
      se::cpu::Gemm(prob.f.data() + b * L * L, v.f.data() + b * L * d, ref.data(), L, d, L);
      for (int64_t i = 0; i < L; ++i)
        CompareRow(got->data() + (b * L + i) * d, ref.data() + i * d, d, b * L + i, err);
    }
    EXPECT_LT(err.err, kTolerance) << "PV " << Describe(err);
  }
}

// Explicit strides: b broadcast to every batch (stride_b = 0) and c written with a gap of 16
// elements between batches (the gap must stay poisoned: nothing written outside the matrices).
TEST(LtGemm, BatchedStrides) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  const int64_t bh = 5, m = 96, n = 64, k = 80, gap = 16;
  const st::HalfVec a = Random(bh * m * k, 7), b = Random(k * n, 8);
  st::DeviceBuffer da(a.Bytes()), db(b.Bytes()), dc(HalfBytes(bh * (m * n + gap)));
  ASSERT_TRUE(da.Ok() && db.Ok() && dc.Ok());
  ASSERT_TRUE(da.Upload(a).IsOk() && db.Upload(b).IsOk());
  ASSERT_TRUE(dc.Poison().IsOk());
  sk::BatchedGemmArgs args;
  args.batch = bh;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = da.Ptr();
  args.b = db.Ptr();
  args.c = dc.Ptr();
  args.stride_b = 0;
  args.stride_c = m * n + gap;
  auto run = gemm->RunBatched(args, nullptr);
  ASSERT_TRUE(run.IsOk()) << run.Message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = dc.Download(bh * (m * n + gap));
  ASSERT_TRUE(got.IsOk()) << got.Message();
  std::vector<float> ref(static_cast<size_t>(m * n));
  RowError err;
  for (int64_t i = 0; i < bh; ++i) {
    se::cpu::Gemm(a.f.data() + i * m * k, b.f.data(), ref.data(), m, n, k);
    const uint16_t* slice = got->data() + i * (m * n + gap);
    for (int64_t r = 0; r < m; ++r) CompareRow(slice + r * n, ref.data() + r * n, n, i * m + r, err);
    for (int64_t g = 0; g < gap; ++g)
      EXPECT_EQ(slice[m * n + g], 0xFFFFu) << "batch " << i << " wrote into the gap at " << g;
  }
  EXPECT_LT(err.err, kTolerance) << Describe(err);
}

// --- Bad input ---

void ExpectError(const se::Status& s, const std::string& field, const std::string& what) {
  ASSERT_FALSE(s.IsOk()) << what << ": accepted";
  EXPECT_NE(s.Message().find(field), std::string::npos)
      << what << ": the message should name '" << field << "': " << s.Message();
}

// One change that makes valid arguments invalid, the field the error must name, and a label.
template <class Args>
struct BadEdit {
  std::function<void(Args&)> edit;
  std::string field, what;
};

// Each edit applied to a copy of `good`, then `expect_bad(args, field, what)`.
template <class Args, class ExpectBad>
void ForEachBadEdit(const Args& good, const std::vector<BadEdit<Args>>& edits,
                    ExpectBad expect_bad) {
  for (const BadEdit<Args>& e : edits) {
    Args g = good;
    e.edit(g);
    expect_bad(g, e.field, e.what);
  }
}

TEST(LtGemm, BadLinearInput) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  st::DeviceBuffer a(HalfBytes(64 * 64)), w(HalfBytes(64 * 64)), out(HalfBytes(64 * 64)),
      res(HalfBytes(64 * 64));
  ASSERT_TRUE(a.Ok() && w.Ok() && out.Ok() && res.Ok());
  sk::GemmArgs good;
  good.m = good.n = good.k = 64;
  good.a = a.Ptr();
  good.w = w.Ptr();
  good.out = out.Ptr();
  ASSERT_TRUE(gemm->Check(good).IsOk());

  using G = sk::GemmArgs;
  ForEachBadEdit<G>(
      good,
      {{[](G& g) { g.m = 0; }, "m:", "m = 0"},
       {[](G& g) { g.n = -3; }, "n:", "n = -3"},
       {[](G& g) { g.k = 0; }, "k:", "k = 0"},
       {[](G& g) { g.a = nullptr; }, "a:", "null a"},
       {[](G& g) { g.w = nullptr; }, "w:", "null w"},
       {[](G& g) { g.out = nullptr; }, "out:", "null out"},
       {[&](G& g) { g.out = a.Ptr(); }, "out:", "out aliasing a"},
       {[&](G& g) { g.residual = res.Ptr(), g.act = Activation::kGelu; }, "act:",
        "gelu with residual"},
       {[&](G& g) { g.residual = res.Ptr(), g.act = Activation::kRelu; }, "act:",
        "relu with residual"}},
      [&](const G& g, const std::string& field, const std::string& what) {
        ExpectError(gemm->Check(g), field, what + " (Check)");
        ExpectError(gemm->Run(g, {}, nullptr), field, what + " (Run)");
        ExpectError(gemm->AlgoCount(g).ToStatus(), field, what + " (AlgoCount)");
      });
  ExpectError(gemm->Run(good, sk::GemmEpilogueParams{sk::LtGemm::kMaxAlgos}, nullptr),
              "params.algo", "algo = kMaxAlgos");
  ExpectError(gemm->Run(good, sk::GemmEpilogueParams{-1}, nullptr), "params.algo", "algo = -1");
  auto count = gemm->AlgoCount(good);
  ASSERT_TRUE(count.IsOk()) << count.Message();
  ExpectError(gemm->Run(good, sk::GemmEpilogueParams{*count}, nullptr), "params.algo",
              "algo = AlgoCount");
}

TEST(LtGemm, BadBatchedInput) {
  STOF_REQUIRE_GPU();
  sk::LtGemm* gemm = Shared();
  ASSERT_NE(gemm, nullptr);
  st::DeviceBuffer a(HalfBytes(4 * 32 * 32)), b(HalfBytes(4 * 32 * 32)),
      c(HalfBytes(4 * 32 * 32));
  ASSERT_TRUE(a.Ok() && b.Ok() && c.Ok());
  sk::BatchedGemmArgs good;
  good.batch = 4;
  good.m = good.n = good.k = 32;
  good.a = a.Ptr();
  good.b = b.Ptr();
  good.c = c.Ptr();
  ASSERT_TRUE(gemm->CheckBatched(good).IsOk());
  using G = sk::BatchedGemmArgs;
  ForEachBadEdit<G>(
      good,
      {{[](G& g) { g.batch = 0; }, "batch:", "batch = 0"},
       {[](G& g) { g.m = 0; }, "m:", "m = 0"},
       {[](G& g) { g.k = -1; }, "k:", "k = -1"},
       {[](G& g) { g.b = nullptr; }, "b:", "null b"},
       {[](G& g) { g.c = nullptr; }, "c:", "null c"},
       {[&](G& g) { g.c = b.Ptr(); }, "c:", "c aliasing b"},
       {[](G& g) { g.stride_a = -2; }, "stride_a:", "stride_a = -2"},
       {[](G& g) { g.stride_c = 32 * 32 - 1; }, "stride_c:", "overlapping outputs"}},
      [&](const G& g, const std::string& field, const std::string& what) {
        ExpectError(gemm->CheckBatched(g), field, what + " (CheckBatched)");
        ExpectError(gemm->RunBatched(g, nullptr), field, what + " (RunBatched)");
      });
}

}  // namespace
