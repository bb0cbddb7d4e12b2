// GPU: softmax recomposition (kernels/recomposition/recomposed_attention.h), the SD
// (decomposed) and SDF (decomposed + fused) rungs of the fusion ladder, against the fp32 CPU
// reference (engine::cpu::MaskedAttention through st::ThreadedReference), by the rule of
// mha_native_test.cpp (st::CheckMhaRun: output poisoned, no non-finite element, per-row error
// < 2e-3, rows with nothing attended exactly 0).
// Matrix: 7 masks (full = dense, sliding window, BigBird, Longformer, causal, holes = rows with
// nothing attended, random elements) x L in {64, 100 (ragged), 512, 1024} x d in {64, 128},
// B = 2, H = 3; in each case both variants with every supported (T, BM) in {64, 128}^2, the
// reference computed once. Edges: ragged L (1, 17, 130: T = 128 spans a word past the row's
// last, 1001: unvectorised SD path), all-empty masks (SDF then has no tile at all), fewer heads
// than prepared, PreparedMha / ChooseMhaConfig with --kernel sd|sdf. Intermediates on one
// case (holes, L 512, d 64): m' and d' of every computed (row, sub-vector) against the CPU's
// scores, (-inf, 0) exactly where the sub-vector is fully masked, r' = 0 there and on empty
// rows, sum_k r'_k d'_k = 1 on every other row; SDF's x' tiles against 2^(x - m'); SD's P
// (its x' after GS, in place) against the softmax. Bad input comes back as errors naming the
// field. The RecomposeParams / ParseMhaKernelRequest tests are host-only (no GPU needed).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/device/device_spec.h"
#include "engine/layout/block_layout.h"
#include "gpu_test_util.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/recomposition/recomposed_attention.h"
#include "mha_test_util.h"

namespace {

namespace se = stof::engine;
namespace sk = stof::kernels;
namespace st = stof::testing;

constexpr sk::RecomposeVariant kVariants[] = {sk::RecomposeVariant::kDecomposed,
                                              sk::RecomposeVariant::kRecomposed};

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// B x H heads of L x d, fp16.
se::Workload Shape(int64_t B, int64_t H, int64_t L, int64_t d) {
  return st::MhaWorkload(B, H, L, d);
}

std::string ParamText(sk::RecomposeVariant v, const sk::RecomposeParams& p) {
  return std::string(stof::kernels::RecomposeVariantName(v)) + " T" + std::to_string(p.sub_len) +
         " BM" + std::to_string(p.block_m);
}

// Every (T, BM) the current device supports for the variant at head_dim d.
std::vector<sk::RecomposeParams> DeviceParams(int64_t d, sk::RecomposeVariant v) {
  return stof::kernels::SupportedRecomposeParams(
      d, v, st::SharedBackend()->Device().smem_per_block_bytes);
}

// Inputs, reference and device buffers of one (mask, workload), shared by every variant run.
struct Problem {
  se::Workload w;
  st::MhaInputs in;
  std::vector<float> ref;
  std::vector<uint8_t> empty_row;
};

void MakeProblem(const se::Mask& mask, const se::Workload& w, uint64_t seed, Problem& p) {
  p.w = w;
  p.in = st::RandomInputs(w.batch * w.heads * w.seq_len * w.head_dim, seed);
  auto rs = st::ThreadedReference(p.in, w, mask, p.ref);
  ASSERT_TRUE(rs.IsOk()) << rs.Message();
  p.empty_row = st::EmptyRows(mask);
}

// One checked run of `v` with `params` on `prob` (plan prepared for `prepared_for`, default
// the problem's workload).
void CheckVariant(const se::Mask& mask, const Problem& prob, sk::RecomposeVariant v,
                  const sk::RecomposeParams& params, const std::string& label,
                  const se::Workload* prepared_for = nullptr) {
  stof::kernels::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr) << "CudaBackend::Create failed";
  const std::string what = label + " " + ParamText(v, params);
  SCOPED_TRACE(what);
  auto r = sk::RecomposedMha::Create(mask, prepared_for ? *prepared_for : prob.w, v, params);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const sk::RecomposedMha& mha = **r;
  const int64_t elements = prob.w.batch * prob.w.heads * prob.w.seq_len * prob.w.head_dim;
  st::DeviceMhaBuffers buf(*backend, elements);
  ASSERT_TRUE(buf.Ok()) << "device allocation failed";
  ASSERT_TRUE(buf.Upload(prob.in).IsOk());
  st::MhaError e;
  st::CheckMhaRun(
      *backend, buf,
      [&] { return mha.Launch(prob.w, buf.Q(), buf.K(), buf.V(), buf.O(), nullptr); }, prob.ref,
      prob.w, prob.empty_row, &e);
  std::printf("[ recompose ] %s: %lld tiles per head (%lld part), workspace %lld bytes, worst "
              "row error %.2e, global %.2e\n",
              what.c_str(), static_cast<long long>(mha.TilesPerHead()),
              static_cast<long long>(mha.PartTilesPerHead()),
              static_cast<long long>(mha.WorkspaceBytes()), e.row_err, e.global_err);
}

// Both variants with every supported (T, BM) on one (mask, workload).
void CheckAllVariants(const se::Mask& mask, const se::Workload& w, uint64_t seed,
                      const std::string& label) {
  Problem prob;
  MakeProblem(mask, w, seed, prob);
  if (::testing::Test::HasFatalFailure()) return;
  for (sk::RecomposeVariant v : kVariants) {
    const std::vector<sk::RecomposeParams> params = DeviceParams(w.head_dim, v);
    ASSERT_FALSE(params.empty());
    for (const sk::RecomposeParams& p : params) CheckVariant(mask, prob, v, p, label);
  }
}

std::vector<st::MhaCase> AllCases() {
  std::vector<st::MhaCase> v;
  for (const char* m : {"full", "sliding_window", "bigbird", "longformer", "causal", "holes",
                        "random_elements"})
    for (int64_t L : {64, 100, 512, 1024})
      for (int64_t d : {64, 128}) v.push_back({m, L, d});
  return v;
}

class GpuRecomposedMha : public ::testing::TestWithParam<st::MhaCase> {};

TEST_P(GpuRecomposedMha, MatchesReference) {
  STOF_REQUIRE_GPU();
  ASSERT_NE(st::SharedBackend(), nullptr);
  const st::MhaCase& c = GetParam();
  auto mask = st::MakeMask(c.mask, c.seq_len);
  ASSERT_TRUE(mask.IsOk()) << mask.Message();
  const std::string name = st::MhaCaseName(c);
  CheckAllVariants(*mask, Shape(2, 3, c.seq_len, c.head_dim),
                   std::hash<std::string>{}("recompose " + name), name);
}

INSTANTIATE_TEST_SUITE_P(Masks, GpuRecomposedMha, ::testing::ValuesIn(AllCases()),
                         st::MhaCaseParamName);

// Ragged lengths: 1 and 17 (one partial tile), 130 (T = 128: the second sub-vector's second
// mask word lies past the row's 3 words; L % 4 != 0: SD's unvectorised path at T = 128) and
// 1001 (odd: unvectorised at every T).
TEST(GpuRecomposedMhaEdge, RaggedSequences) {
  STOF_REQUIRE_GPU();
  ASSERT_NE(st::SharedBackend(), nullptr);
  for (int64_t L : {1, 17, 130, 1001}) {
    for (int64_t d : {64, 128}) {
      for (const char* m : {"causal", "random_elements"}) {
        auto mask = st::MakeMask(m, L);
        ASSERT_TRUE(mask.IsOk()) << mask.Message();
        const std::string label =
            std::string(m) + "_L" + std::to_string(L) + "_d" + std::to_string(d);
        CheckAllVariants(*mask, Shape(2, 3, L, d), static_cast<uint64_t>(L * 1000 + d), label);
      }
    }
  }
}

// An all-empty mask gives zeros everywhere (SDF: no valid tile, so only the P V kernel runs,
// writing zeros; SD: every sub-vector skipped, r' = 0, P = 0).
TEST(GpuRecomposedMhaEdge, EmptyMaskGivesZeros) {
  STOF_REQUIRE_GPU();
  ASSERT_NE(st::SharedBackend(), nullptr);
  for (int64_t L : {200, 256}) {
    for (int64_t d : {64, 128}) {
      auto mask = se::Mask::Create(L, L);
      ASSERT_TRUE(mask.IsOk());
      const std::string label = "empty_L" + std::to_string(L) + "_d" + std::to_string(d);
      CheckAllVariants(*mask, Shape(2, 3, L, d), 5, label);
      auto sdf = sk::RecomposedMha::Create(
          *mask, Shape(2, 3, L, d), sk::RecomposeVariant::kRecomposed, sk::RecomposeParams{});
      ASSERT_TRUE(sdf.IsOk()) << sdf.Message();
      EXPECT_EQ((*sdf)->TilesPerHead(), 0);
    }
  }
}

// A plan runs any batch and head count up to the prepared B * H, and refuses more.
TEST(GpuRecomposedMhaEdge, FewerHeadsThanPrepared) {
  STOF_REQUIRE_GPU();
  ASSERT_NE(st::SharedBackend(), nullptr);
  auto mask = st::MakeMask("longformer", 1024);
  ASSERT_TRUE(mask.IsOk());
  const se::Workload prepared_for = Shape(4, 6, 1024, 128);
  Problem prob;
  MakeProblem(*mask, Shape(1, 5, 1024, 128), 31, prob);
  for (sk::RecomposeVariant v : kVariants) {
    CheckVariant(*mask, prob, v, sk::RecomposeParams{}, "longformer_L1024_d128_B1_H5_of_B4_H6",
                 &prepared_for);
    auto r = sk::RecomposedMha::Create(*mask, prepared_for, v, sk::RecomposeParams{});
    ASSERT_TRUE(r.IsOk()) << r.Message();
    st::ExpectRefusesMoreHeads(**r, Shape(5, 6, 1024, 128));
  }
}

// Through ChooseMhaConfig / PreparedMha, as `stof bench mha --kernel sd|sdf --block BMxT` and
// the C API (kernels 4, 5) run it.
TEST(GpuRecomposedMhaEdge, ThroughPreparedMha) {
  STOF_REQUIRE_GPU();
  stof::kernels::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  auto mask = st::MakeMask("bigbird", 1024);
  ASSERT_TRUE(mask.IsOk());
  const se::Workload w = Shape(2, 3, 1024, 64);
  Problem prob;
  MakeProblem(*mask, w, 77, prob);
  const int64_t elements = w.batch * w.heads * w.seq_len * w.head_dim;
  st::DeviceMhaBuffers buf(*backend, elements);
  ASSERT_TRUE(buf.Ok());
  ASSERT_TRUE(buf.Upload(prob.in).IsOk());
  for (sk::MhaKernelRequest k :
       {sk::MhaKernelRequest::kDecomposed, sk::MhaKernelRequest::kRecomposed}) {
    SCOPED_TRACE(stof::kernels::MhaKernelRequestName(k));
    auto c = sk::ChooseMhaConfig(*mask, w, backend->Device(), sk::MhaRequest{k, 64, 128, 0});
    ASSERT_TRUE(c.IsOk()) << c.Message();
    ASSERT_TRUE(c->recompose);
    EXPECT_EQ(c->recompose_params.block_m, 64);
    EXPECT_EQ(c->recompose_params.sub_len, 128);
    auto p = sk::PreparedMha::Create(*mask, w, *c);
    ASSERT_TRUE(p.IsOk()) << p.Message();
    ASSERT_NE((*p)->Recomposed(), nullptr);
    EXPECT_EQ((*p)->DeviceBytes(), (*p)->Recomposed()->DeviceBytes());
    if (k == sk::MhaKernelRequest::kRecomposed) {
      EXPECT_EQ((*p)->ValidBlocks(), (*p)->Recomposed()->TilesPerHead());
      EXPECT_LE((*p)->KernelFlops(w), 4.0 * 6 * 64 * 1024.0 * 1024.0);
    }
    const sk::PreparedMha& mha = **p;
    st::CheckMhaRun(
        *backend, buf, [&] { return mha.Launch(w, buf.Q(), buf.K(), buf.V(), buf.O(), nullptr); },
        prob.ref, w, prob.empty_row, nullptr);
  }
}

// ---- The intermediate statistics --------------------------------------------------------------

template <class T>
std::vector<T> CopyBack(stof::kernels::CudaBackend& backend, const void* src, int64_t bytes) {
  std::vector<T> out(static_cast<size_t>(bytes) / sizeof(T));
  auto s = backend.CopyToHost(out.data(), src, out.size() * sizeof(T));
  EXPECT_TRUE(s.IsOk()) << s.Message();
  return out;
}

// x = (q_i . k_j) / sqrt(d) * log2(e) of head bh, in double, [L][L].
std::vector<double> ScoresBase2(const st::MhaInputs& in, const se::Workload& w, int64_t bh) {
  const int64_t L = w.seq_len, d = w.head_dim;
  const float* q = in.qf.data() + bh * L * d;
  const float* k = in.kf.data() + bh * L * d;
  const double scale = 1.4426950408889634 / std::sqrt(static_cast<double>(d));
  std::vector<double> x(static_cast<size_t>(L * L));
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j) {
      double s = 0;
      for (int64_t t = 0; t < d; ++t) s += static_cast<double>(q[i * d + t]) * k[j * d + t];
      x[static_cast<size_t>(i * L + j)] = s * scale;
    }
  return x;
}

// The tiles each block row owns, in rows of a CSR list: SD every sub-vector kb, SDF the
// BlockLayout's load list at BM x T. Empty (and a test failure) when the layout fails.
struct RowTiles {
  std::vector<int64_t> row_begin, col;
};
RowTiles TilesOfRows(const se::Mask& mask, sk::RecomposeVariant v, int64_t bm, int64_t T) {
  const int64_t L = mask.Rows(), block_rows = (L + bm - 1) / bm, subs = (L + T - 1) / T;
  RowTiles t;
  t.row_begin.resize(static_cast<size_t>(block_rows + 1));
  if (v == sk::RecomposeVariant::kDecomposed) {
    for (int64_t qb = 0; qb <= block_rows; ++qb) t.row_begin[static_cast<size_t>(qb)] = qb * subs;
    for (int64_t qb = 0; qb < block_rows; ++qb)
      for (int64_t kb = 0; kb < subs; ++kb) t.col.push_back(kb);
    return t;
  }
  auto layout = stof::engine::BlockLayout::Build(mask, bm, T);
  if (!layout.IsOk()) {
    ADD_FAILURE() << layout.Message();
    return {};
  }
  for (size_t i = 0; i < t.row_begin.size(); ++i) t.row_begin[i] = layout->LoadRowPtr()[i];
  for (int32_t c : layout->LoadColIdx()) t.col.push_back(c);
  return t;
}

// Row i's softmax statistics in base 2 over the attended keys in [lo, hi): (max, sum of
// 2^(x - max)); (-inf, 0) where none is attended.
std::pair<double, double> RowStats(const std::vector<double>& xs, const se::Mask& mask, int64_t i,
                                   int64_t lo, int64_t hi) {
  const int64_t L = mask.Cols();
  double m = -std::numeric_limits<double>::infinity(), d = 0;
  for (int64_t j = lo; j < hi; ++j)
    if (mask.Get(i, j)) m = std::max(m, xs[static_cast<size_t>(i * L + j)]);
  for (int64_t j = lo; j < hi; ++j)
    if (mask.Get(i, j)) d += std::exp2(xs[static_cast<size_t>(i * L + j)] - m);
  return {m, d};
}

// Checks m', d', r' (and SDF's x', SD's P) of one launch of `v` with `params`.
void CheckIntermediates(const se::Mask& mask, const Problem& prob, sk::RecomposeVariant v,
                        const sk::RecomposeParams& params) {
  stof::kernels::CudaBackend* backend = st::SharedBackend();
  SCOPED_TRACE(ParamText(v, params));
  const se::Workload& w = prob.w;
  const int64_t L = w.seq_len, bm = params.block_m, T = params.sub_len;
  const int64_t heads = w.batch * w.heads;
  auto r = sk::RecomposedMha::Create(mask, w, v, params);
  ASSERT_TRUE(r.IsOk()) << r.Message();
  const sk::RecomposedMha& mha = **r;

  const RowTiles owned = TilesOfRows(mask, v, bm, T);
  ASSERT_FALSE(owned.col.empty());
  const std::vector<int64_t>& row_begin = owned.row_begin;
  const std::vector<int64_t>& tile_col = owned.col;
  const int64_t tiles = static_cast<int64_t>(tile_col.size());
  ASSERT_EQ(mha.TilesPerHead(), tiles);

  const stof::kernels::RecomposeWorkspaceView ws = mha.Workspace();
  EXPECT_EQ(ws.tiles_per_head, tiles);
  EXPECT_GE(ws.stats_bytes, heads * tiles * bm * 8);
  EXPECT_GE(ws.r_bytes, heads * tiles * bm * 4);
  const int64_t elements = heads * L * w.head_dim;
  st::DeviceMhaBuffers buf(*backend, elements);
  ASSERT_TRUE(buf.Ok());
  ASSERT_TRUE(buf.Upload(prob.in).IsOk());
  // Poisoned: an entry the kernels should have written but did not reads as NaN.
  ASSERT_TRUE(stof::kernels::PoisonBuffer(ws.stats, static_cast<size_t>(ws.stats_bytes)).IsOk());
  ASSERT_TRUE(stof::kernels::PoisonBuffer(ws.r_factors, static_cast<size_t>(ws.r_bytes)).IsOk());
  if (v == sk::RecomposeVariant::kRecomposed) {
    ASSERT_TRUE(stof::kernels::PoisonBuffer(ws.x, static_cast<size_t>(ws.x_bytes)).IsOk());
  }
  st::CheckMhaRun(
      *backend, buf, [&] { return mha.Launch(w, buf.Q(), buf.K(), buf.V(), buf.O(), nullptr); },
      prob.ref, w, prob.empty_row, nullptr);
  const std::vector<float> stats = CopyBack<float>(*backend, ws.stats, heads * tiles * bm * 8);
  const std::vector<float> rf = CopyBack<float>(*backend, ws.r_factors, heads * tiles * bm * 4);
  const std::vector<uint16_t> x = CopyBack<uint16_t>(
      *backend, ws.x,
      v == sk::RecomposeVariant::kDecomposed ? heads * L * L * 2 : heads * tiles * bm * T * 2);

  const double inf = std::numeric_limits<double>::infinity();
  int64_t checked_rows = 0, masked_subs = 0;
  double worst_m = 0, worst_d = 0, worst_sum = 0, worst_x = 0;
  for (int64_t bh : {int64_t{0}, heads - 1}) {
    const std::vector<double> xs = ScoresBase2(prob.in, w, bh);
    for (int64_t i = 0; i < L; ++i) {
      const int64_t qb = i / bm, rr = i % bm;
      const bool empty = mask.CountRow(i) == 0;
      double row_sum = 0;
      const auto [m_row, d_row] = RowStats(xs, mask, i, 0, L);  // the row's own, for SD's P
      const int64_t e_end = row_begin[static_cast<size_t>(qb + 1)];
      for (int64_t e = row_begin[static_cast<size_t>(qb)]; e < e_end; ++e) {
        const int64_t kb = tile_col[static_cast<size_t>(e)];
        const size_t at = static_cast<size_t>((bh * tiles + e) * bm + rr);
        const double mg = stats[2 * at], dg = stats[2 * at + 1], rg = rf[at];
        const auto [m_ref, d_ref] = RowStats(xs, mask, i, kb * T, std::min(L, kb * T + T));
        const std::string where = "head " + std::to_string(bh) + " row " + std::to_string(i) +
                                  " sub-vector " + std::to_string(kb);
        if (m_ref == -inf) {  // fully masked sub-vector: exactly (-inf, 0), r' = 0
          ++masked_subs;
          EXPECT_TRUE(mg == -inf && dg == 0) << where << ": m' " << mg << " d' " << dg;
          EXPECT_EQ(rg, 0.0) << where;
        } else {
          // S is fp16 in SD (|x| <= ~4 here: fp16 rounding moves x by <= 2e-3); fp32 in SDF.
          EXPECT_NEAR(mg, m_ref, 2e-3 * (1 + std::fabs(m_ref))) << where;
          EXPECT_NEAR(dg, d_ref, 5e-3 * d_ref) << where;
          worst_m = std::max(worst_m, std::fabs(mg - m_ref));
          worst_d = std::max(worst_d, std::fabs(dg - d_ref) / d_ref);
          EXPECT_TRUE(rg > 0 && rg <= 1) << where << ": r' " << rg;
        }
        row_sum += rg * dg;
        // SDF: x' of this row of the tile = 2^(x - m') where attended, 0 elsewhere (also past
        // L), against the kernel's own m' so that only the exponent and fp16 rounding count.
        if (v == sk::RecomposeVariant::kRecomposed) {
          for (int64_t c = 0; c < T; ++c) {
            const int64_t j = kb * T + c;
            const double got = st::HalfToFloat(
                x[static_cast<size_t>(((bh * tiles + e) * bm + rr) * T + c)]);
            const double want = j < L && mask.Get(i, j)
                                    ? std::exp2(xs[static_cast<size_t>(i * L + j)] - mg)
                                    : 0.0;
            EXPECT_NEAR(got, want, 1e-3) << where << " column " << j;
            worst_x = std::max(worst_x, std::fabs(got - want));
          }
        }
      }
      if (empty) {
        EXPECT_EQ(row_sum, 0.0) << "head " << bh << " row " << i << " attends nothing";
      } else {
        EXPECT_NEAR(row_sum, 1.0, 1e-4) << "head " << bh << " row " << i
                                        << ": sum_k r'_k d'_k";
        worst_sum = std::max(worst_sum, std::fabs(row_sum - 1.0));
      }
      // SD: after GS the buffer holds P = softmax (0 where masked and on empty rows).
      if (v == sk::RecomposeVariant::kDecomposed) {
        for (int64_t j = 0; j < L; ++j) {
          const double got = st::HalfToFloat(x[static_cast<size_t>((bh * L + i) * L + j)]);
          const double want =
              mask.Get(i, j) ? std::exp2(xs[static_cast<size_t>(i * L + j)] - m_row) / d_row
                             : 0.0;
          // P = fp16(fp16(x') r') from the fp16 S: a few 1e-4 at P near 1.
          EXPECT_NEAR(got, want, 2e-3) << "P of head " << bh << " row " << i << " column " << j;
          worst_x = std::max(worst_x, std::fabs(got - want));
        }
      }
      ++checked_rows;
    }
  }
  std::printf(
      "[ recompose ] intermediates %s: %lld rows, %lld fully masked sub-vectors; worst "
      "|m' - ref| %.2e, d' rel %.2e, |sum r'd' - 1| %.2e, %s %.2e\n",
      ParamText(v, params).c_str(), static_cast<long long>(checked_rows),
      static_cast<long long>(masked_subs), worst_m, worst_d, worst_sum,
      v == sk::RecomposeVariant::kDecomposed ? "|P - softmax|" : "|x' - 2^(x - m')|", worst_x);
  EXPECT_GT(masked_subs, 0) << "the case should exercise fully masked sub-vectors";
}

TEST(GpuRecomposedMhaEdge, IntermediateStatistics) {
  STOF_REQUIRE_GPU();
  ASSERT_NE(st::SharedBackend(), nullptr);
  // holes: Longformer (window + global rows/columns) with empty rows; at L 512 every block row
  // has part and empty tiles.
  auto mask = st::MakeMask("holes", 512);
  ASSERT_TRUE(mask.IsOk());
  Problem prob;
  MakeProblem(*mask, Shape(1, 2, 512, 64), 99, prob);
  for (sk::RecomposeVariant v : kVariants)
    for (const sk::RecomposeParams& p : DeviceParams(64, v)) CheckIntermediates(*mask, prob, v, p);
}

// Bad inputs come back as errors naming the field; nothing crashes.
TEST(GpuRecomposedMhaEdge, RefusesBadInput) {
  STOF_REQUIRE_GPU();
  stof::kernels::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  auto mask = st::MakeMask("causal", 128);
  ASSERT_TRUE(mask.IsOk());
  for (sk::RecomposeVariant v : kVariants) {
    SCOPED_TRACE(stof::kernels::RecomposeVariantName(v));
    auto t32 =
        sk::RecomposedMha::Create(*mask, Shape(2, 3, 128, 64), v, sk::RecomposeParams{32, 64});
    ASSERT_FALSE(t32.IsOk());
    EXPECT_TRUE(Contains(t32.Message(), "sub_len")) << t32.Message();
    auto bm96 =
        sk::RecomposedMha::Create(*mask, Shape(2, 3, 128, 64), v, sk::RecomposeParams{64, 96});
    ASSERT_FALSE(bm96.IsOk());
    EXPECT_TRUE(Contains(bm96.Message(), "block_m")) << bm96.Message();
    auto d96 = sk::RecomposedMha::Create(*mask, Shape(2, 3, 128, 96), v, sk::RecomposeParams{});
    ASSERT_FALSE(d96.IsOk());
    EXPECT_TRUE(Contains(d96.Message(), "head_dim")) << d96.Message();
    se::Workload f32 = Shape(2, 3, 128, 64);
    f32.dtype = se::DType::kF32;
    auto nf = sk::RecomposedMha::Create(*mask, f32, v, sk::RecomposeParams{});
    ASSERT_FALSE(nf.IsOk());
    EXPECT_TRUE(Contains(nf.Message(), "dtype")) << nf.Message();
    auto nm = sk::RecomposedMha::Create(*mask, Shape(2, 3, 256, 64), v, sk::RecomposeParams{});
    ASSERT_FALSE(nm.IsOk());
    EXPECT_TRUE(Contains(nm.Message(), "mask")) << nm.Message();

    auto ok = sk::RecomposedMha::Create(*mask, Shape(2, 3, 128, 64), v, sk::RecomposeParams{});
    ASSERT_TRUE(ok.IsOk()) << ok.Message();
    const se::Workload w = Shape(2, 3, 128, 64);
    st::DeviceMhaBuffers buf(*backend, w.batch * w.heads * w.seq_len * w.head_dim);
    ASSERT_TRUE(buf.Ok());
    st::ExpectLaunchRefusals(**ok, w, buf);  // L 64, d 128, null q
    auto odd = (*ok)->Launch(w, static_cast<char*>(buf.Q()) + 2, buf.K(), buf.V(), buf.O(),
                             nullptr);
    ASSERT_FALSE(odd.IsOk());
    EXPECT_TRUE(Contains(odd.Message(), "aligned")) << odd.Message();
  }
  // Through the choice: an unsupported T names the field.
  auto c = sk::ChooseMhaConfig(*mask, Shape(2, 3, 128, 64), backend->Device(),
                               sk::MhaRequest{sk::MhaKernelRequest::kRecomposed, 64, 32, 0});
  ASSERT_FALSE(c.IsOk());
  EXPECT_TRUE(Contains(c.Message(), "sub_len")) << c.Message();
  // A workspace that cannot be had: the message names its size.
  const se::Workload huge = Shape(65536, 64, 4096, 64);
  auto big_mask = se::Mask::Create(4096, 4096);
  ASSERT_TRUE(big_mask.IsOk());
  auto nh = sk::RecomposedMha::Create(*big_mask, huge, sk::RecomposeVariant::kDecomposed,
                                      sk::RecomposeParams{});
  ASSERT_FALSE(nh.IsOk());
  EXPECT_TRUE(Contains(nh.Message(), "workspace")) << nh.Message();
  // The failed allocation left no error behind.
  auto again = sk::RecomposedMha::Create(*mask, Shape(2, 3, 128, 64),
                                         sk::RecomposeVariant::kDecomposed, sk::RecomposeParams{});
  ASSERT_TRUE(again.IsOk()) << again.Message();
  ASSERT_TRUE(backend->Synchronize().IsOk());
}

// ---- Host-only ------------------------------------------------------------------------------

TEST(RecomposeParamsHost, CheckAndSupportedSet) {
  using stof::kernels::CheckRecomposeParams;
  using stof::kernels::SupportedRecomposeParams;
  for (sk::RecomposeVariant v : kVariants) {
    EXPECT_TRUE(CheckRecomposeParams(sk::RecomposeParams{}, 64, v).IsOk());
    auto t = CheckRecomposeParams(sk::RecomposeParams{96, 64}, 64, v);
    ASSERT_FALSE(t.IsOk());
    EXPECT_TRUE(Contains(t.Message(), "params.sub_len")) << t.Message();
    EXPECT_TRUE(Contains(t.Message(), "96")) << t.Message();
    auto b = CheckRecomposeParams(sk::RecomposeParams{64, 32}, 64, v);
    ASSERT_FALSE(b.IsOk());
    EXPECT_TRUE(Contains(b.Message(), "params.block_m")) << b.Message();
    auto d = CheckRecomposeParams(sk::RecomposeParams{}, 80, v);
    ASSERT_FALSE(d.IsOk());
    EXPECT_TRUE(Contains(d.Message(), "head_dim")) << d.Message();
    // On an H100 every (T, BM) in {64, 128}^2 fits at both head sizes.
    EXPECT_EQ(SupportedRecomposeParams(64, v).size(), 4u);
    EXPECT_EQ(SupportedRecomposeParams(128, v).size(), 4u);
    EXPECT_TRUE(SupportedRecomposeParams(96, v).empty());
  }
  // SDF's GEMM kernels need shared memory: T 128, BM 128, d 128 takes 137 KiB (two stages of
  // a 128 x 136 x' tile and a 128 x 136 V tile): not on a 99 KiB device. SD needs none.
  const sk::RecomposeParams big{128, 128};
  EXPECT_EQ(stof::kernels::RecomposeSmemBytes(big, 128, sk::RecomposeVariant::kRecomposed), 140288);
  EXPECT_EQ(stof::kernels::RecomposeSmemBytes(big, 128, sk::RecomposeVariant::kDecomposed), 0);
  auto s = CheckRecomposeParams(big, 128, sk::RecomposeVariant::kRecomposed, 101376);
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "shared memory")) << s.Message();
  EXPECT_TRUE(CheckRecomposeParams(big, 128, sk::RecomposeVariant::kDecomposed, 101376).IsOk());
  EXPECT_EQ(SupportedRecomposeParams(128, sk::RecomposeVariant::kRecomposed, 101376).size(), 2u);
}

TEST(RecomposeParamsHost, WorkspaceBytes) {
  // SD, B 16, H 12, L 4096, T 64, BM 64: S 16*12*4096^2*2 = 6 GiB, plus (m', d') and r' of
  // 64 x 64 tiles x 64 rows per head = 4096 * 4096 entries per head: 12 bytes each.
  const se::Workload w = Shape(16, 12, 4096, 64);
  const int64_t entries = int64_t{16} * 12 * 4096 * 4096 / 64;
  EXPECT_EQ(sk::RecomposedMha::WorkspaceBytesFor(w, sk::RecomposeVariant::kDecomposed,
                                                 sk::RecomposeParams{}),
            int64_t{6442450944} + entries * 12);
  // SDF, dense bound: x' of every tile (= L^2 per head) plus the same statistics.
  EXPECT_EQ(sk::RecomposedMha::WorkspaceBytesFor(w, sk::RecomposeVariant::kRecomposed,
                                                 sk::RecomposeParams{}),
            int64_t{6442450944} + entries * 12);
  // Ragged L = 100 at T 128, BM 64: 2 x 1 tiles of 64 x 128 per head: x' 32768 bytes, 128
  // (m', d') pairs 1024, 128 r' 512.
  EXPECT_EQ(
      sk::RecomposedMha::WorkspaceBytesFor(Shape(1, 1, 100, 64), sk::RecomposeVariant::kRecomposed,
                                           sk::RecomposeParams{128, 64}),
      32768 + 1024 + 512);
  EXPECT_EQ(sk::RecomposedMha::WorkspaceBytesFor(w, sk::RecomposeVariant::kRecomposed,
                                                 sk::RecomposeParams{32, 64}),
            -1);
  EXPECT_EQ(sk::RecomposedMha::WorkspaceBytesFor(
                Shape(int64_t{1} << 40, int64_t{1} << 20, 32768, 64),
                sk::RecomposeVariant::kDecomposed, sk::RecomposeParams{}),
            -1);
}

TEST(RecomposeParamsHost, KernelRequests) {
  for (const char* name : {"sd", "sdf"}) {
    auto r = stof::kernels::ParseMhaKernelRequest(name);
    ASSERT_TRUE(r.IsOk()) << r.Message();
    EXPECT_STREQ(stof::kernels::MhaKernelRequestName(*r), name);
  }
  EXPECT_EQ(*stof::kernels::ParseMhaKernelRequest("sd"), sk::MhaKernelRequest::kDecomposed);
  EXPECT_EQ(*stof::kernels::ParseMhaKernelRequest("sdf"), sk::MhaKernelRequest::kRecomposed);
  auto bad = stof::kernels::ParseMhaKernelRequest("sdx");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_TRUE(Contains(bad.Message(), "sdf")) << bad.Message();

  // The choice: default 64 x 64, --block BMxT, warps ignored with a note, Eq. 1 never picks it.
  auto dev = stof::engine::FindBuiltinDevice("h100");
  ASSERT_TRUE(dev.IsOk()) << dev.Message();
  auto mask = st::MakeMask("bigbird", 1024);
  ASSERT_TRUE(mask.IsOk());
  const se::Workload w = Shape(8, 12, 1024, 64);
  auto sd = sk::ChooseMhaConfig(*mask, w, *dev,
                                sk::MhaRequest{sk::MhaKernelRequest::kDecomposed, 0, 0, 0});
  ASSERT_TRUE(sd.IsOk()) << sd.Message();
  EXPECT_TRUE(sd->recompose);
  EXPECT_FALSE(sd->native);
  EXPECT_EQ(sd->recompose_variant, sk::RecomposeVariant::kDecomposed);
  EXPECT_EQ(sd->recompose_params, sk::RecomposeParams{});
  EXPECT_STREQ(stof::kernels::MhaChoiceKernelName(*sd), "sd");
  EXPECT_EQ(sd->params_source, "default");
  auto sdf = sk::ChooseMhaConfig(*mask, w, *dev,
                                 sk::MhaRequest{sk::MhaKernelRequest::kRecomposed, 128, 64, 4});
  ASSERT_TRUE(sdf.IsOk()) << sdf.Message();
  EXPECT_STREQ(stof::kernels::MhaChoiceKernelName(*sdf), "sdf");
  EXPECT_EQ(sdf->recompose_params.block_m, 128);
  EXPECT_EQ(sdf->recompose_params.sub_len, 64);
  EXPECT_EQ(sdf->params_source, "user");
  EXPECT_TRUE(Contains(sdf->note, "ignored")) << sdf->note;
  auto a = sk::ChooseMhaConfig(*mask, w, *dev, sk::MhaRequest{});
  ASSERT_TRUE(a.IsOk());
  EXPECT_FALSE(a->recompose);
}

}  // namespace
