// The Hopper kernel with masks per batch row and head in one launch (engine/mask/mask_set.h,
// DeviceBlockLayout::CreatePatterns): packed documents with other boundaries in every batch
// row, heads with different sparse patterns, and decode steps whose batch rows see different
// windows (the group's heads sharing a tile, packed GQA) or whose heads differ within a group
// (unpacked); each (batch, head) against the fp32 CPU reference on its own mask, the output
// poisoned first, fp16 and bf16. Also the refusals that name the field: another kernel, a
// launch of another batch, the mma.sync kernel on such a layout. GPU cases skip without an
// sm_90 GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/mask/mask_set.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/device_query.h"
#include "gpu_test_util.h"
#include "device_buffer.h"
#include "mha_test_util.h"

namespace {

namespace st = stof::testing;
namespace k = stof::kernels;
using stof::engine::DType;
using stof::engine::Mask;
using stof::engine::MaskSet;
using stof::engine::Workload;

Workload Shape(int64_t batch, int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len,
               int64_t d, DType dtype) {
  Workload w{batch, kv_len, heads, d, dtype};
  w.kv_heads = kv_heads;
  w.q_len = q_len;
  return w;
}

// Causal attention within documents of the given lengths (summing to L), as packed sequences.
Mask Documents(const std::vector<int64_t>& lengths) {
  int64_t L = 0;
  for (int64_t n : lengths) L += n;
  Mask m = *Mask::Create(L, L);
  int64_t start = 0;
  for (int64_t n : lengths) {
    for (int64_t r = start; r < start + n; ++r) m.SetRange(r, start, r + 1);
    start += n;
  }
  return m;
}

// The last q_len rows of a causal window of `width` keys over kv_len keys (a decode step).
Mask WindowRows(int64_t q_len, int64_t kv_len, int64_t width) {
  Mask m = *Mask::Create(q_len, kv_len);
  for (int64_t r = 0; r < q_len; ++r) {
    const int64_t row = kv_len - q_len + r;
    m.SetRange(r, std::max<int64_t>(0, row - width + 1), row + 1);
  }
  return m;
}

Mask Named(const std::string& pattern, int64_t L) {
  auto m = st::MakeMask(pattern, L);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  return *m;
}

// Prepares `set` as the C API does (ChooseMhaConfigForPatterns, PreparedMha) and checks one
// poisoned launch against each (batch, head)'s reference on its own mask.
void CheckPatterns(const MaskSet& set, const Workload& w, uint64_t seed, const std::string& label,
                   bool want_packed) {
  k::CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  auto spec = k::QueryDeviceSpec(0);
  ASSERT_TRUE(spec.IsOk()) << spec.Message();
  auto choice = k::ChooseMhaConfigForPatterns(set, w, *spec, k::MhaRequest{});
  ASSERT_TRUE(choice.IsOk()) << label << ": " << choice.Message();
  ASSERT_TRUE(k::IsHopperAttentionRequest(choice->config.num_warps)) << label;
  EXPECT_EQ(choice->packing.Packed(), want_packed) << label << ": " << choice->note;
  auto plan = k::PreparedMha::Create(set, w, *choice);
  ASSERT_TRUE(plan.IsOk()) << label << ": " << plan.Message();
  EXPECT_EQ((*plan)->Patterns(), set.Patterns());
  EXPECT_EQ((*plan)->Nnz(), set.TotalCount());

  const int64_t q_slice = w.QLen() * w.head_dim, kv_slice = w.seq_len * w.head_dim;
  const st::MhaInputs in =
      st::RandomInputs(k::QueryElements(w), seed, w.dtype, k::KeyElements(w));
  std::vector<float> ref(static_cast<size_t>(k::QueryElements(w)));
  Workload one = w;
  one.batch = 1, one.heads = 1, one.kv_heads = 1;
  for (int64_t b = 0; b < w.batch; ++b)
    for (int64_t h = 0; h < w.heads; ++h) {
      const int64_t qh = b * w.heads + h, kvh = b * w.KvHeads() + h / w.GroupSize();
      st::MhaInputs part;
      part.qf.assign(in.qf.begin() + qh * q_slice, in.qf.begin() + (qh + 1) * q_slice);
      part.kf.assign(in.kf.begin() + kvh * kv_slice, in.kf.begin() + (kvh + 1) * kv_slice);
      part.vf.assign(in.vf.begin() + kvh * kv_slice, in.vf.begin() + (kvh + 1) * kv_slice);
      std::vector<float> out;
      ASSERT_TRUE(st::ThreadedReference(part, one, set.PatternOf(b, h), out).IsOk());
      std::copy(out.begin(), out.end(), ref.begin() + qh * q_slice);
    }
  st::DeviceMhaBuffers buf(*backend, k::QueryElements(w), k::KeyElements(w));
  ASSERT_TRUE(buf.Ok() && buf.Upload(in).IsOk());
  SCOPED_TRACE(label);
  st::MhaError e;
  st::CheckMhaRun(
      *backend, buf, [&] { return (*plan)->Launch(w, buf.Q(), buf.K(), buf.V(), buf.O(), nullptr); },
      ref, w, std::vector<uint8_t>(static_cast<size_t>(w.QLen()), 0), &e);
  std::printf("[ patterns ] %s: %lld patterns, %lldx%lld%s, worst row error %.2e\n",
              label.c_str(), static_cast<long long>(set.Patterns()),
              static_cast<long long>(choice->config.block_m),
              static_cast<long long>(choice->config.block_n),
              choice->packing.Packed() ? " packed" : "", e.row_err);
}

// Packed documents with other boundaries in each batch row (varlen), GQA heads, fp16 and bf16.
TEST(GpuHopperPatterns, DocumentsPerBatchRowMatchReference) {
  STOF_REQUIRE_HOPPER();
  const std::vector<Mask> docs = {Documents({300, 200, 200}), Documents({700}),
                                  Documents({64, 1, 500, 135})};
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const int64_t d = dtype == DType::kF16 ? 64 : 128;
    const Workload w = Shape(3, 4, 2, 700, 700, d, dtype);
    std::vector<int32_t> of;
    for (int32_t b = 0; b < 3; ++b) of.insert(of.end(), 4, b);
    auto set = MaskSet::Make(docs, of, 3, 4);
    ASSERT_TRUE(set.IsOk()) << set.Message();
    CheckPatterns(*set, w, 41 + d, "documents d" + std::to_string(d), false);
  }
}

// Heads with different sparse patterns (causal, a window, full, bigbird), another order in the
// second batch row; rows repeating a pattern share its layout.
TEST(GpuHopperPatterns, PatternsPerHeadMatchReference) {
  STOF_REQUIRE_HOPPER();
  const int64_t L = 512;
  const std::vector<Mask> masks = {Named("causal", L), WindowRows(L, L, 96), Named("full", L),
                                   Named("bigbird", L)};
  for (int64_t d : {128, 96}) {
    const Workload w = Shape(2, 4, 4, L, L, d, DType::kF16);
    auto set = MaskSet::Make(masks, {0, 1, 2, 3, 3, 2, 1, 1}, 2, 4);
    ASSERT_TRUE(set.IsOk()) << set.Message();
    EXPECT_EQ(set->Patterns(), 4);
    CheckPatterns(*set, w, 7 + d, "per head d" + std::to_string(d), false);
  }
}

// Decode steps over 1500 keys: a window per batch row (the group's heads share it: packed) and
// windows that differ within a group (unpacked); bf16, 8 query heads over 2.
TEST(GpuHopperPatterns, DecodeWindowsPerRowAndHeadMatchReference) {
  STOF_REQUIRE_HOPPER();
  const std::vector<Mask> windows = {WindowRows(4, 1500, 1500), WindowRows(4, 1500, 256),
                                     WindowRows(4, 1500, 37)};
  const Workload w = Shape(3, 8, 2, 4, 1500, 128, DType::kBF16);
  std::vector<int32_t> per_row;
  for (int32_t b = 0; b < 3; ++b) per_row.insert(per_row.end(), 8, b);
  auto rows = MaskSet::Make(windows, per_row, 3, 8);
  ASSERT_TRUE(rows.IsOk()) << rows.Message();
  CheckPatterns(*rows, w, 99, "decode window per row", true);
  std::vector<int32_t> per_head;
  for (int32_t i = 0; i < 24; ++i) per_head.push_back(i % 3);
  auto heads = MaskSet::Make(windows, per_head, 3, 8);
  ASSERT_TRUE(heads.IsOk()) << heads.Message();
  CheckPatterns(*heads, w, 100, "decode window per head", false);
}

// Refusals naming the field: another kernel, a set of another size, a launch of another batch,
// the portable kernel on a pattern layout.
TEST(GpuHopperPatterns, RefusalsNameTheField) {
  STOF_REQUIRE_HOPPER();
  const Workload w = Shape(2, 2, 2, 128, 128, 64, DType::kF16);
  auto set = MaskSet::Make({Named("causal", 128), Named("full", 128)}, {0, 1, 1, 0}, 2, 2);
  ASSERT_TRUE(set.IsOk());
  auto spec = k::QueryDeviceSpec(0);
  ASSERT_TRUE(spec.IsOk());
  k::MhaRequest row;
  row.kernel = k::MhaKernelRequest::kRowWise;
  auto refused = k::ChooseMhaConfigForPatterns(*set, w, *spec, row);
  ASSERT_FALSE(refused.IsOk());
  EXPECT_NE(refused.Message().find("row_wise kernel takes one mask"), std::string::npos)
      << refused.Message();
  auto wrong = k::ChooseMhaConfigForPatterns(*set, Shape(3, 2, 2, 128, 128, 64, DType::kF16),
                                             *spec, k::MhaRequest{});
  ASSERT_FALSE(wrong.IsOk());
  EXPECT_NE(wrong.Message().find("the workload has batch 3"), std::string::npos)
      << wrong.Message();
  auto choice = k::ChooseMhaConfigForPatterns(*set, w, *spec, k::MhaRequest{});
  ASSERT_TRUE(choice.IsOk()) << choice.Message();
  auto plan = k::PreparedMha::Create(*set, w, *choice);
  ASSERT_TRUE(plan.IsOk()) << plan.Message();
  Workload more = w;
  more.batch = 1;
  auto launch = (*plan)->CheckLaunchWorkload(more);
  ASSERT_FALSE(launch.IsOk());
  EXPECT_NE(launch.Message().find("prepared for batch 2 x 2 heads, got 1 x 2"), std::string::npos)
      << launch.Message();
  auto layout = k::DeviceBlockLayout::CreatePatterns(*set, 64, 64);
  ASSERT_TRUE(layout.IsOk()) << layout.Message();
  EXPECT_EQ((*layout)->Patterns(), 2);
  EXPECT_EQ((*layout)->PatternItems(), 4);
  auto portable = k::LaunchBlockSparseAttention(w, **layout, 4, nullptr, nullptr, nullptr,
                                                nullptr, nullptr);
  ASSERT_FALSE(portable.IsOk());
  EXPECT_NE(portable.Message().find("masks per batch row / head run on the Hopper kernel only"),
            std::string::npos)
      << portable.Message();
}

}  // namespace
