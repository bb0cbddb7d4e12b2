// The Hopper kernel on the shapes of today's models (issue "GQA / KV cache"): grouped key/value
// heads (GQA, MQA), query lengths other than the key length (a KV cache's prefill and decode
// steps, with causal aligned to the bottom right), the packed-GQA tiles of short queries and the
// split of a decode step's keys over CTAs; each against the fp32 CPU reference with the output
// poisoned first, in fp16 and bf16. Also the host rules of the kernel (the split's fill rule)
// and the refusals that name the shape (the engine's rules: tests/engine/grouped_shapes_test.cpp).
// GPU cases skip without an sm_90 GPU; the host cases always run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/mask/gqa_pack.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/attention_common/hopper_chunk.h"
#include "kernels/device_query.h"
#include "gpu_test_util.h"
#include "device_buffer.h"
#include "mha_test_util.h"

namespace {

namespace st = stof::testing;
namespace k = stof::kernels;
using stof::engine::DType;
using stof::engine::Mask;
using stof::engine::MhaStrides;
using stof::engine::Workload;
using stof::testing::DeviceBuffer;

Workload Shape(int64_t batch, int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len,
               int64_t d, DType dtype = DType::kF16) {
  Workload w{batch, kv_len, heads, d, dtype};
  w.kv_heads = kv_heads;
  w.q_len = q_len;
  return w;
}

// The bottom rows of the square mask `pattern` at L = kv_len: a KV cache's q_len new rows.
Mask BottomRows(const std::string& pattern, int64_t q_len, int64_t kv_len) {
  auto square = st::MakeMask(pattern, kv_len);
  EXPECT_TRUE(square.IsOk()) << square.Message();
  auto m = Mask::Create(q_len, kv_len);
  EXPECT_TRUE(m.IsOk());
  for (int64_t r = 0; r < q_len; ++r)
    for (int64_t c = 0; c < kv_len; ++c)
      if (square->Get(kv_len - q_len + r, c)) m->Set(r, c);
  return *m;
}

std::string Label(const Workload& w, const std::string& mask) {
  return mask + " B" + std::to_string(w.batch) + " H" + std::to_string(w.heads) + "/" +
         std::to_string(w.KvHeads()) + " Lq" + std::to_string(w.QLen()) + " Lk" +
         std::to_string(w.seq_len) + " d" + std::to_string(w.head_dim) +
         (w.dtype == DType::kBF16 ? " bf16" : " f16");
}

using ShapeCase = st::CheckedMhaCase;

// Prepares `request` for (mask, w) the way the C API does and checks one launch of it;
// returns the choice (or nothing on a fatal failure).
void CheckPrepared(const Mask& mask, const Workload& w, const k::MhaRequest& request,
                   uint64_t seed, const std::string& label, k::MhaChoice* chosen = nullptr) {
  k::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  auto spec = k::QueryDeviceSpec(0);
  ASSERT_TRUE(spec.IsOk()) << spec.Message();
  auto choice = k::ChooseMhaConfig(mask, w, *spec, request);
  ASSERT_TRUE(choice.IsOk()) << label << ": " << choice.Message();
  // A square MHA shape (L_q = L_k, as many key/value heads) may take any kernel Eq. 1 picks.
  if (!w.IsSquareMha()) {
    ASSERT_TRUE(k::IsHopperAttentionRequest(choice->config.num_warps)) << label;
  }
  auto plan = k::PreparedMha::Create(mask, w, *choice);
  ASSERT_TRUE(plan.IsOk()) << label << ": " << plan.Message();
  ShapeCase c(*backend, mask, w, seed);
  ASSERT_TRUE(c.ok) << label;
  SCOPED_TRACE(label + " " + std::to_string(choice->config.block_m) + "x" +
               std::to_string(choice->config.block_n) +
               (choice->packing.Packed() ? " packed" : ""));
  st::MhaError e;
  st::CheckMhaRun(
      *backend, c.buf,
      [&] { return (*plan)->Launch(w, c.buf.Q(), c.buf.K(), c.buf.V(), c.buf.O(), nullptr); },
      c.ref, w, c.empty_row, &e);
  std::printf("[ shapes ] %s %lldx%lld%s: worst row error %.2e\n", label.c_str(),
              static_cast<long long>(choice->config.block_m),
              static_cast<long long>(choice->config.block_n),
              choice->packing.Packed() ? " packed" : "", e.row_err);
  if (chosen) *chosen = *choice;
}

// A plan of (mask, w) on the Hopper kernel's 64-row tile, chosen as the C API chooses.
stof::engine::Expected<std::unique_ptr<k::PreparedMha>> Hopper64Plan(const Mask& mask,
                                                                    const Workload& w) {
  auto spec = k::QueryDeviceSpec(0);
  if (!spec.IsOk()) return spec.ToStatus();
  k::MhaRequest hopper;
  hopper.kernel = k::MhaKernelRequest::kBlockWise;
  hopper.num_warps = k::kHopperAttentionWarps64;
  auto choice = k::ChooseMhaConfig(mask, w, *spec, hopper);
  if (!choice.IsOk()) return choice.ToStatus();
  return k::PreparedMha::Create(mask, w, *choice);
}

// The reference of each batch row of `c` on its own mask (`row_mask(b)`): the row's q, k and v
// sliced out of the case's inputs, batch 1.
std::vector<float> PerRowReference(const ShapeCase& c, const Workload& w,
                                   const std::function<Mask(int64_t)>& row_mask) {
  const int64_t q_slice = k::QueryElements(w) / w.batch, kv_slice = k::KeyElements(w) / w.batch;
  std::vector<float> ref(c.ref.size());
  Workload one = w;
  one.batch = 1;
  for (int64_t b = 0; b < w.batch; ++b) {
    st::MhaInputs in;
    in.qf.assign(c.in.qf.begin() + b * q_slice, c.in.qf.begin() + (b + 1) * q_slice);
    in.kf.assign(c.in.kf.begin() + b * kv_slice, c.in.kf.begin() + (b + 1) * kv_slice);
    in.vf.assign(c.in.vf.begin() + b * kv_slice, c.in.vf.begin() + (b + 1) * kv_slice);
    std::vector<float> part;
    EXPECT_TRUE(st::ThreadedReference(in, one, row_mask(b), part).IsOk());
    std::copy(part.begin(), part.end(), ref.begin() + b * q_slice);
  }
  return ref;
}

k::MhaRequest Tile(int64_t bm, int64_t bn) {
  k::MhaRequest r;
  r.kernel = k::MhaKernelRequest::kBlockWise;
  r.block_m = bm, r.block_n = bn;
  r.num_warps = bm == 64 ? k::kHopperAttentionWarps64 : k::kHopperAttentionWarps;
  return r;
}

const std::pair<int64_t, int64_t> kTiles[] = {{128, 128}, {128, 64}, {64, 64}, {64, 128}};

bool TileRuns(std::pair<int64_t, int64_t> t, int64_t d) {
  const k::MhaRequest r = Tile(t.first, t.second);
  return k::CheckHopperAttentionConfig(d, r.block_m, r.block_n, r.num_warps).IsOk();
}

// ---- host rules (no GPU) ----------------------------------------------------------------------

// A decode step's one tile per head splits into about fill / tiles chunks of at least
// kMinChunkBlocks; a layout with many tiles keeps the heavy-tile rule.
TEST(HopperShapes, SplitFillRuleCutsFewTiles) {
  namespace d = stof::kernels::detail;
  const d::HopperUnitPlan decode = d::PlanHopperUnits({128}, {0}, 0, 396.0 / 64);
  EXPECT_EQ(decode.units.size(), 6u);  // 6.19 units per head fill the GPU
  EXPECT_EQ(decode.cut, 22);
  const d::HopperUnitPlan tiny = d::PlanHopperUnits({6}, {0}, 0, 396.0 / 8);
  EXPECT_EQ(tiny.cut, d::kMinChunkBlocks);
  EXPECT_EQ(tiny.units.size(), 2u);
  const d::HopperUnitPlan many = d::PlanHopperUnits({128}, {0}, 0, 396.0 / 512);
  EXPECT_EQ(many.units.size(), 1u) << "a wave of whole tiles fills the GPU already";
  const d::HopperUnitPlan heavy =
      d::PlanHopperUnits({16, 2, 2, 2}, {0, 1, 2, 3}, 0, 396.0 / 96);
  EXPECT_EQ(heavy.cut, 11) << "four tiles of 96 heads fill the GPU: the heavy-tile rule";
}

TEST(HopperShapes, RefusalsNameTheShape) {
  Workload w = Shape(1, 12, 5, 64, 64, 64);
  auto v = w.Validate();
  ASSERT_FALSE(v.IsOk());
  EXPECT_NE(v.Message().find("kv_heads"), std::string::npos) << v.Message();
  EXPECT_NE(v.Message().find("divisor of heads = 12"), std::string::npos) << v.Message();

  const Mask mask = BottomRows("causal", 16, 256);
  auto h100 = stof::engine::FindBuiltinDevice("h100");
  ASSERT_TRUE(h100.IsOk()) << h100.Message();
  k::MhaRequest row;
  row.kernel = k::MhaKernelRequest::kRowWise;
  auto refused = k::ChooseMhaConfig(mask, Shape(1, 8, 2, 16, 256, 64), *h100, row);
  ASSERT_FALSE(refused.IsOk());
  EXPECT_NE(refused.Message().find("8 query heads over 2 key/value heads, q_len 16 over "
                                   "seq_len 256"),
            std::string::npos)
      << refused.Message();
  auto d100 = k::ChooseMhaConfig(mask, Shape(1, 8, 2, 16, 256, 100), *h100, {});
  ASSERT_FALSE(d100.IsOk());
  EXPECT_NE(d100.Message().find("head_dim 100"), std::string::npos) << d100.Message();
  auto a100 = stof::engine::FindBuiltinDevice("a100");
  ASSERT_TRUE(a100.IsOk()) << a100.Message();
  auto ampere = k::ChooseMhaConfig(mask, Shape(1, 8, 2, 16, 256, 64), *a100, {});
  ASSERT_FALSE(ampere.IsOk());
  EXPECT_NE(ampere.Message().find("not sm_90"), std::string::npos) << ampere.Message();
  auto wrong = k::ChooseMhaConfig(mask, Shape(1, 8, 2, 8, 256, 64), *h100, {});
  ASSERT_FALSE(wrong.IsOk()) << "a 16-row mask for 8 query rows";
  EXPECT_NE(wrong.Message().find("expected 8 x 256"), std::string::npos) << wrong.Message();
}

// num_warps alone names the tile's rows: 5 gives a 64-row tile (BLOCK_N 64 above head_dim
// 64), 12 a 128-row one, whatever the tile model would pick (found on the GPU: num_warps 5
// with the model's 128 x 128 was refused).
TEST(HopperShapes, NumWarpsAloneNamesTheTileRows) {
  auto h100 = stof::engine::FindBuiltinDevice("h100");
  ASSERT_TRUE(h100.IsOk()) << h100.Message();
  for (int64_t q_len : {int64_t{1000}, int64_t{1}}) {
    const Mask mask = BottomRows("causal", q_len, 1000);
    for (int64_t warps : {k::kHopperAttentionWarps64, k::kHopperAttentionWarps}) {
      k::MhaRequest r;
      r.kernel = k::MhaKernelRequest::kBlockWise;
      r.num_warps = warps;
      auto c = k::ChooseMhaConfig(mask, Shape(4, 8, 2, q_len, 1000, 128), *h100, r);
      ASSERT_TRUE(c.IsOk()) << c.Message();
      EXPECT_EQ(c->config.num_warps, warps);
      EXPECT_EQ(c->config.block_m, warps == k::kHopperAttentionWarps64 ? 64 : 128);
      if (warps == k::kHopperAttentionWarps64) {
        EXPECT_EQ(c->config.block_n, 64);
      }
    }
  }
}

// ---- on the GPU -------------------------------------------------------------------------------

// GQA ratios 1, 2, 4, 8 and 32 (MQA) at L_q = L_k, every Hopper tile, fp16 and bf16.
TEST(GpuHopperShapes, GroupedHeadsMatchReference) {
  STOF_REQUIRE_HOPPER();
  for (const std::string m : {"causal", "bigbird"}) {
    auto mask = st::MakeMask(m, 1000);
    ASSERT_TRUE(mask.IsOk());
    for (int64_t d : {64, 128}) {
      for (int64_t kv_heads : {32, 16, 8, 4, 1}) {
        const DType dtype = kv_heads == 8 ? DType::kBF16 : DType::kF16;
        const Workload w = Shape(2, 32, kv_heads, 1000, 1000, d, dtype);
        for (const auto& t : kTiles) {
          if (!TileRuns(t, d)) continue;
          CheckPrepared(*mask, w, Tile(t.first, t.second), 7 + kv_heads + d, Label(w, m));
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// A KV cache: L_q new rows over L_k keys with causal (and a sliding window) aligned to the
// bottom right, L_q 1, 7, 16 and 128, ragged L_k from 1 to 16384; the automatic choice (which
// packs a group's heads into a tile for short queries and splits a decode step's keys).
TEST(GpuHopperShapes, KvCacheRowsMatchReference) {
  STOF_REQUIRE_HOPPER();
  for (int64_t q_len : {1, 7, 16, 128}) {
    for (int64_t kv_len : {1, 100, 1000, 4096, 16384}) {
      if (kv_len < q_len) continue;
      for (const std::string m : {"causal", "sliding_window"}) {
        if (m == "sliding_window" && kv_len < 1000) continue;
        const Mask mask = BottomRows(m, q_len, kv_len);
        for (int64_t kv_heads : {8, 32}) {
          const int64_t d = kv_len == 4096 ? 64 : 128;
          const DType dtype = q_len == 7 ? DType::kBF16 : DType::kF16;
          const Workload w = Shape(2, 32, kv_heads, q_len, kv_len, d, dtype);
          k::MhaChoice c;
          CheckPrepared(mask, w, {}, 3 + q_len + kv_len, Label(w, m), &c);
          if (HasFatalFailure()) return;
          if (kv_heads == 8 && q_len <= 16) {
            EXPECT_TRUE(c.packing.Packed()) << "short queries of a group share a tile";
          }
        }
      }
    }
  }
}

// Head sizes other than 64 and 128 (Phi's 96, Gemma's 256, small models' 32; 8, 80 and 192 for
// the rule): each runs on the Hopper kernel of 64, 128 or 256 that holds it, the columns past d
// loaded as zeros and never stored (the output is poisoned first, so a stray column fails).
// Square MHA on every tile the size runs on, grouped heads in bf16, and a decode step (packed,
// split) through the automatic choice.
TEST(GpuHopperShapes, HeadSizesMatchReference) {
  STOF_REQUIRE_HOPPER();
  auto causal = st::MakeMask("causal", 1000);
  auto bigbird = st::MakeMask("bigbird", 1000);
  ASSERT_TRUE(causal.IsOk() && bigbird.IsOk());
  const Mask decode = BottomRows("causal", 1, 4096);
  for (int64_t d : {8, 32, 80, 96, 192, 256}) {
    const Workload mha = Shape(2, 4, 4, 1000, 1000, d);
    for (const auto& t : kTiles) {
      if (!TileRuns(t, d)) continue;
      CheckPrepared(*causal, mha, Tile(t.first, t.second), 11 + d, Label(mha, "causal"));
      if (HasFatalFailure()) return;
    }
    // bf16 from d 32: at d 8 its rounding of P and O alone puts rows of 8 columns over the
    // bf16 tolerance that larger rows meet (docs/benchmarks.md, "Step 3: head sizes").
    const Workload gqa = Shape(2, 8, 2, 1000, 1000, d, d >= 32 ? DType::kBF16 : DType::kF16);
    CheckPrepared(*bigbird, gqa, {}, 13 + d, Label(gqa, "bigbird"));
    if (HasFatalFailure()) return;
    const Workload step = Shape(2, 32, 8, 1, 4096, d);
    k::MhaChoice c;
    CheckPrepared(decode, step, {}, 17 + d, Label(step, "causal"), &c);
    if (HasFatalFailure()) return;
    EXPECT_TRUE(c.packing.Packed()) << "d " << d;
  }
}

// A KV cache's q_len newest rows over kv_len keys, made row by row (past a square mask's
// 32768): causal aligned to the bottom right, or its sliding window of `window` keys (0: none).
Mask LongCacheRows(int64_t q_len, int64_t kv_len, int64_t window) {
  auto m = Mask::Create(q_len, kv_len);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  for (int64_t r = 0; r < q_len; ++r) {
    const int64_t pos = kv_len - q_len + r;
    m->SetRange(r, window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0, pos + 1);
  }
  return *m;
}

// Decode and prefill steps over caches longer than a square mask holds (up to 262144 keys,
// ragged lengths included), through the automatic choice (packed, split), against the CPU
// reference; a sliding-window cache visits only its window's blocks.
TEST(GpuHopperShapes, LongCacheRowsMatchReference) {
  STOF_REQUIRE_HOPPER();
  struct Case {
    int64_t q_len, kv_len, window, heads, kv_heads, d;
    DType dtype;
  };
  const Case cases[] = {{1, 131072, 0, 8, 2, 128, DType::kBF16},
                        {16, 262144, 0, 8, 2, 128, DType::kF16},
                        {1, 200003, 4096, 4, 1, 64, DType::kBF16},
                        {7, 65601, 0, 4, 4, 96, DType::kF16}};
  for (const Case& t : cases) {
    const Mask mask = LongCacheRows(t.q_len, t.kv_len, t.window);
    const Workload w = Shape(1, t.heads, t.kv_heads, t.q_len, t.kv_len, t.d, t.dtype);
    CheckPrepared(mask, w, {}, 29 + t.kv_len, Label(w, t.window ? "window" : "causal"));
    if (HasFatalFailure()) return;
  }
}

// The decode path's parts, each forced: the packed tile at BLOCK_M 64 and 128, split over CTAs
// or whole, on a full and a persistent grid; a split decode launch leaves its arrival counters
// at zero, so it runs twice.
TEST(GpuHopperShapes, DecodeSplitAndPackingMatchReference) {
  STOF_REQUIRE_HOPPER();
  k::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  const k::HopperLaunchOverrides before = k::GetHopperLaunchOverrides();
  // 1 and 4 rows per head: a tile's 4 and 16 query rows sit in warp 0, whose partials the four
  // warps merge; 8 rows per head: 32 rows in two warps, whose partials both merge.
  for (int64_t q_len : {1, 4, 8})
  for (int64_t d : {64, 96, 128, 256}) {
    const Mask mask = BottomRows("causal", q_len, 8192);
    const Workload w = Shape(3, 16, 4, q_len, 8192, d);
    ShapeCase c(*backend, mask, w, 99 + d);
    ASSERT_TRUE(c.ok);
    for (const auto& t : kTiles) {
      if (!TileRuns(t, d)) continue;
      auto layout = k::PrepareHopperLayout(mask, w, t.first, t.second);
      ASSERT_TRUE(layout.IsOk()) << layout.Message();
      EXPECT_TRUE((*layout)->Packing().Packed());
      if (t.first == 64) {
        EXPECT_GT((*layout)->HopperSplitSlots(), 0) << "the fill rule split";
      }
      for (int split : {0, 1}) {
        for (int persistent : {0, 1}) {
          SCOPED_TRACE(Label(w, "causal") + " " + std::to_string(t.first) + "x" +
                       std::to_string(t.second) + " split " + std::to_string(split) +
                       " persistent " + std::to_string(persistent));
          k::HopperLaunchOverrides o;
          o.split = split;
          o.persistent = persistent;
          k::SetHopperLaunchOverrides(o);
          // Two launches: both match the reference, with the same bits (the merge adds a
          // tile's chunks in chunk order, whichever arrives last).
          std::vector<std::vector<uint8_t>> bits(2, std::vector<uint8_t>(c.buf.Bytes()));
          for (int rep = 0; rep < 2; ++rep) {
            st::CheckMhaRun(
                *backend, c.buf,
                [&] {
                  return k::LaunchHopperAttention(w, **layout, c.buf.Q(), c.buf.K(), c.buf.V(),
                                                  c.buf.O(), nullptr, MhaStrides{}, MhaStrides{},
                                                  MhaStrides{}, 0.0f);
                },
                c.ref, w, c.empty_row, nullptr);
            if (HasFatalFailure()) break;
            ASSERT_TRUE(backend->CopyToHost(bits[rep].data(), c.buf.O(), bits[rep].size()).IsOk());
          }
          EXPECT_TRUE(bits[0] == bits[1]) << "two launches gave different bits";
        }
      }
    }
  }
  k::SetHopperLaunchOverrides(before);
}

// [B, L, H, d] views as Hugging Face passes them (transposed, not copied) with grouped heads
// and a KV cache give the same bits as the packed [B, H, L, d] tensors.
TEST(GpuHopperShapes, StridedViewsOfGroupedHeads) {
  STOF_REQUIRE_HOPPER();
  k::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  for (int64_t q_len : {1, 300}) {
    const Workload w = Shape(2, 8, 2, q_len, 300, 128);
    const Mask mask = BottomRows("causal", q_len, 300);
    auto spec = k::QueryDeviceSpec(0);
    ASSERT_TRUE(spec.IsOk());
    auto choice = k::ChooseMhaConfig(mask, w, *spec, {});
    ASSERT_TRUE(choice.IsOk()) << choice.Message();
    auto plan = k::PreparedMha::Create(mask, w, *choice);
    ASSERT_TRUE(plan.IsOk()) << plan.Message();
    ShapeCase packed(*backend, mask, w, 5);
    ASSERT_TRUE(packed.ok);
    ASSERT_TRUE((*plan)->Launch(w, packed.buf.Q(), packed.buf.K(), packed.buf.V(),
                                packed.buf.O(), nullptr)
                    .IsOk());
    // The same values laid out [B, L, H, d].
    const auto transpose = [](const std::vector<uint16_t>& bhld, int64_t B, int64_t H, int64_t L,
                              int64_t d) {
      std::vector<uint16_t> out(bhld.size());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t l = 0; l < L; ++l)
            for (int64_t c = 0; c < d; ++c)
              out[static_cast<size_t>(((b * L + l) * H + h) * d + c)] =
                  bhld[static_cast<size_t>(((b * H + h) * L + l) * d + c)];
      return out;
    };
    st::MhaInputs t = packed.in;
    t.q = transpose(packed.in.q, 2, 8, q_len, 128);
    t.k = transpose(packed.in.k, 2, 2, 300, 128);
    t.v = transpose(packed.in.v, 2, 2, 300, 128);
    st::DeviceMhaBuffers views(*backend, k::QueryElements(w), k::KeyElements(w));
    ASSERT_TRUE(views.Upload(t).IsOk());
    const MhaStrides qs{q_len * 8 * 128, 128, 8 * 128}, kvs{300 * 2 * 128, 128, 2 * 128};
    ASSERT_TRUE(k::PoisonBuffer(views.O(), views.Bytes()).IsOk());
    auto run = (*plan)->LaunchViews(w, views.Q(), views.K(), views.V(), views.O(), nullptr, qs,
                                    kvs, qs, 0.0f);
    ASSERT_TRUE(run.IsOk()) << run.Message();
    ASSERT_TRUE(backend->Synchronize().IsOk());
    std::vector<uint16_t> a(static_cast<size_t>(k::QueryElements(w))), b(a.size());
    ASSERT_TRUE(backend->CopyToHost(a.data(), packed.buf.O(), a.size() * 2).IsOk());
    ASSERT_TRUE(backend->CopyToHost(b.data(), views.O(), b.size() * 2).IsOk());
    EXPECT_EQ(transpose(a, 2, 8, q_len, 128), b) << "L_q " << q_len;
  }
}

// A plan prepared for a KV cache's capacity launches with fewer keys (the mask's first L_k
// columns) and matches the reference on those columns; more keys than prepared are refused
// with the prepared shape.
TEST(GpuHopperShapes, FewerKeysThanPreparedMatchReference) {
  STOF_REQUIRE_HOPPER();
  k::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  const Mask capacity = BottomRows("sliding_window", 4, 2048);
  auto spec = k::QueryDeviceSpec(0);
  ASSERT_TRUE(spec.IsOk());
  const Workload prepared = Shape(2, 16, 4, 4, 2048, 128);
  auto choice = k::ChooseMhaConfig(capacity, prepared, *spec, {});
  ASSERT_TRUE(choice.IsOk()) << choice.Message();
  auto plan = k::PreparedMha::Create(capacity, prepared, *choice);
  ASSERT_TRUE(plan.IsOk()) << plan.Message();
  for (int64_t keys : {1500, 1537, 2048}) {
    const Workload w = Shape(2, 16, 4, 4, keys, 128);
    auto cols = Mask::Create(4, keys);
    ASSERT_TRUE(cols.IsOk());
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < keys; ++c)
        if (capacity.Get(r, c)) cols->Set(r, c);
    ShapeCase c(*backend, *cols, w, 17 + keys);
    ASSERT_TRUE(c.ok);
    SCOPED_TRACE("L_k " + std::to_string(keys) + " of 2048");
    st::CheckMhaRun(
        *backend, c.buf,
        [&] { return (*plan)->Launch(w, c.buf.Q(), c.buf.K(), c.buf.V(), c.buf.O(), nullptr); },
        c.ref, w, c.empty_row, nullptr);
  }
  auto more = (*plan)->CheckLaunchWorkload(Shape(2, 16, 4, 4, 4096, 128));
  EXPECT_FALSE(more.IsOk());
  EXPECT_NE(more.Message().find("L_k = 2048"), std::string::npos) << more.Message();
}

// Per batch row key ranges (a padded batch in one launch): each row's output is the reference
// on the mask AND its range, for a square prefill and a packed decode step; rows whose range
// leaves them nothing are zeros. The portable kernel refuses ranges by name.
TEST(GpuHopperShapes, KeyRangesMatchPerRowReference) {
  STOF_REQUIRE_HOPPER();
  k::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  const int32_t ranges[3][2] = {{0, 1000}, {37, 1000}, {0, 900}};
  DeviceBuffer dev_ranges(sizeof ranges, backend);
  ASSERT_TRUE(dev_ranges.Upload(ranges, sizeof ranges).IsOk());
  for (int64_t q_len : {1000, 1}) {
    const Workload w = Shape(3, 8, 2, q_len, 1000, 128);
    const Mask mask = BottomRows("causal", q_len, 1000);
    auto plan = Hopper64Plan(mask, w);
    ASSERT_TRUE(plan.IsOk()) << plan.Message();
    ShapeCase c(*backend, mask, w, 23 + q_len);
    ASSERT_TRUE(c.ok);
    // The reference of each batch row on its own mask: the mask AND the row's key range.
    const std::vector<float> ref = PerRowReference(c, w, [&](int64_t b) {
      Mask cut = mask;
      for (int64_t r = 0; r < q_len; ++r) {
        cut.SetRange(r, 0, ranges[b][0], false);
        cut.SetRange(r, ranges[b][1], 1000, false);
      }
      return cut;
    });
    SCOPED_TRACE("L_q " + std::to_string(q_len));
    st::CheckMhaRun(
        *backend, c.buf,
        [&] {
          return (*plan)->LaunchViews(w, c.buf.Q(), c.buf.K(), c.buf.V(), c.buf.O(), nullptr,
                                      MhaStrides{}, MhaStrides{}, MhaStrides{}, 0.0f,
                                      k::MhaKeyLimits{dev_ranges.Ptr()});
        },
        ref, w, std::vector<uint8_t>(static_cast<size_t>(q_len), 0), nullptr);
  }
  const Mask square = BottomRows("causal", 64, 64);
  auto layout = k::DeviceBlockLayout::Create(square, 64, 64);
  ASSERT_TRUE(layout.IsOk());
  auto refused = k::LaunchBlockSparseAttention(Shape(3, 4, 4, 64, 64, 64), **layout, 4, nullptr,
                                               nullptr, nullptr, nullptr, nullptr, {}, {}, {},
                                               0.0f, k::MhaKeyLimits{dev_ranges.Ptr()});
  ASSERT_FALSE(refused.IsOk());
  EXPECT_NE(refused.Message().find("key_ranges"), std::string::npos) << refused.Message();
}

// Per batch row kept keys (padding with holes in one launch): each row's output is the
// reference on the mask AND its kept keys (and its key range, where both are given), for a
// square prefill and a packed decode step over 1000 keys (not a multiple of 128: the words
// cover 1024), with left padding and a hole, scattered keys, and only the first five kept.
// Too few words are refused by name.
TEST(GpuHopperShapes, KeyBitsMatchPerRowReference) {
  STOF_REQUIRE_HOPPER();
  k::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  constexpr int64_t kL = 1000, kWords = 16;
  std::vector<std::vector<bool>> keep(4, std::vector<bool>(kL, true));
  for (int64_t j = 0; j < 37; ++j) keep[1][j] = false;       // left padding
  for (int64_t j = 300; j < 340; ++j) keep[1][j] = false;    // and a hole
  uint64_t state = 99;
  for (int64_t j = 0; j < kL; ++j) keep[2][j] = st::SplitMix64(state) % 3 != 0;  // scattered
  for (int64_t j = 0; j < kL; ++j) keep[3][j] = j < 5;       // only the first keys
  std::vector<uint64_t> bits(4 * kWords, 0);
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t j = 0; j < kL; ++j)
      if (keep[b][j]) bits[b * kWords + j / 64] |= uint64_t{1} << (j % 64);
  const int32_t ranges[4][2] = {{0, kL}, {0, kL}, {0, 900}, {0, kL}};
  DeviceBuffer dev_bits(bits.size() * 8, backend), dev_ranges(sizeof ranges, backend);
  ASSERT_TRUE(dev_bits.Upload(bits.data(), bits.size() * 8).IsOk());
  ASSERT_TRUE(dev_ranges.Upload(ranges, sizeof ranges).IsOk());
  for (int64_t q_len : {kL, int64_t{1}}) {
    const Workload w = Shape(4, 8, 2, q_len, kL, 128);
    const Mask mask = BottomRows("causal", q_len, kL);
    auto plan = Hopper64Plan(mask, w);
    ASSERT_TRUE(plan.IsOk()) << plan.Message();
    ShapeCase c(*backend, mask, w, 31 + q_len);
    ASSERT_TRUE(c.ok);
    const std::vector<uint8_t> empty(static_cast<size_t>(q_len), 0);
    const std::vector<float> ref = PerRowReference(c, w, [&](int64_t b) {
      Mask cut = mask;
      for (int64_t r = 0; r < q_len; ++r)
        for (int64_t j = 0; j < kL; ++j)
          if (!keep[b][j] || j < ranges[b][0] || j >= ranges[b][1]) cut.Set(r, j, false);
      return cut;
    });
    SCOPED_TRACE("L_q " + std::to_string(q_len));
    st::CheckMhaRun(
        *backend, c.buf,
        [&] {
          return (*plan)->LaunchViews(w, c.buf.Q(), c.buf.K(), c.buf.V(), c.buf.O(), nullptr,
                                      MhaStrides{}, MhaStrides{}, MhaStrides{}, 0.0f,
                                      k::MhaKeyLimits{dev_ranges.Ptr(), dev_bits.Ptr(), kWords});
        },
        ref, w, empty, nullptr);
    auto few = (*plan)->LaunchViews(w, c.buf.Q(), c.buf.K(), c.buf.V(), c.buf.O(), nullptr,
                                    MhaStrides{}, MhaStrides{}, MhaStrides{}, 0.0f,
                                    k::MhaKeyLimits{nullptr, dev_bits.Ptr(), 15});
    ASSERT_FALSE(few.IsOk());
    EXPECT_NE(few.Message().find("key bits: 15 words a batch row, expected at least 16"),
              std::string::npos)
        << few.Message();
  }
}

// The mma.sync kernels refuse grouped shapes with the reason, before any pointer is read.
TEST(GpuHopperShapes, PortableKernelRefusesGroupedShapes) {
  STOF_REQUIRE_GPU();
  const Mask mask = BottomRows("causal", 64, 64);
  auto layout = k::DeviceBlockLayout::Create(mask, 64, 64);
  ASSERT_TRUE(layout.IsOk()) << layout.Message();
  auto s = k::LaunchBlockSparseAttention(Shape(1, 8, 2, 64, 64, 64), **layout, 4, nullptr,
                                         nullptr, nullptr, nullptr);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("8 query heads over 2 key/value heads"), std::string::npos)
      << s.Message();
  EXPECT_NE(s.Message().find("Hopper kernel"), std::string::npos) << s.Message();
}

}  // namespace
