// Tests of the engine's side of today's model shapes: Workload's grouped key/value heads and
// query length (validation, the defaults that keep old workloads square), Mask::LastRows (a KV
// cache's newest rows), packed GQA (engine/mask/gqa_pack.h), the CPU reference with grouped
// heads and L_q != L_k against the same attention with K and V repeated per query head, and
// the Hopper tile choice for such shapes (engine/select/hopper_select.h).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/cpu/reference.h"
#include "engine/device/device_spec.h"
#include "engine/mask/gqa_pack.h"
#include "engine/select/hopper_select.h"
#include "test_masks.h"

namespace {

using namespace stof::engine;

Workload Shape(int64_t batch, int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len,
               int64_t d) {
  Workload w{batch, kv_len, heads, d, DType::kF32};
  w.kv_heads = kv_heads;
  w.q_len = q_len;
  return w;
}

TEST(GroupedShapes, WorkloadDefaultsAreSquareMha) {
  Workload w;
  EXPECT_EQ(w.KvHeads(), w.heads);
  EXPECT_EQ(w.QLen(), w.seq_len);
  EXPECT_EQ(w.GroupSize(), 1);
  EXPECT_TRUE(w.IsSquareMha());
  const Workload g = Shape(2, 32, 8, 1, 4096, 128);
  EXPECT_EQ(g.GroupSize(), 4);
  EXPECT_EQ(g.QLen(), 1);
  EXPECT_FALSE(g.IsSquareMha());
  EXPECT_TRUE(g.Validate().IsOk());
  EXPECT_TRUE(Shape(2, 32, 32, 0, 64, 64).IsSquareMha()) << "kv_heads = heads is plain MHA";
}

TEST(GroupedShapes, WorkloadRefusesBadGroupsAndLengths) {
  const auto message = [](const Workload& w) { return w.Validate("w").Message(); };
  EXPECT_NE(message(Shape(1, 12, 5, 0, 64, 64)).find("w: kv_heads: expected a divisor of heads "
                                                     "= 12"),
            std::string::npos);
  EXPECT_NE(message(Shape(1, 12, 24, 0, 64, 64)).find("kv_heads"), std::string::npos);
  EXPECT_NE(message(Shape(1, 12, -1, 0, 64, 64)).find("kv_heads"), std::string::npos);
  EXPECT_NE(message(Shape(1, 12, 0, -1, 64, 64)).find("w: q_len: expected 1..262144 (0: "
                                                      "seq_len), got -1"),
            std::string::npos);
  EXPECT_NE(message(Shape(1, 12, 0, 300000, 64, 64)).find("q_len"), std::string::npos);
}

// A square call stops at 32768; fewer query rows than keys (a KV cache) may have up to 262144
// keys while L_q x L_k stays within 32768 x 32768 cells.
TEST(GroupedShapes, LongKeysNeedFewerQueryRows) {
  EXPECT_TRUE(Shape(1, 32, 8, 1, 262144, 128).Validate().IsOk());
  EXPECT_TRUE(Shape(1, 32, 8, 4096, 262144, 128).Validate().IsOk()) << "2^30 cells exactly";
  EXPECT_TRUE(Shape(1, 32, 8, 0, 32768, 128).Validate().IsOk());
  EXPECT_EQ(Shape(1, 32, 8, 4097, 262144, 128).Validate("w").Message(),
            "w: q_len x seq_len: 4097 x 262144 is more than 32768 x 32768 mask cells (a square "
            "call stops at 32768; up to 262144 keys with fewer query rows: set q_len)");
  EXPECT_NE(Shape(1, 32, 8, 0, 32769, 128).Validate("w").Message().find(
                "w: q_len x seq_len: 32769 x 32769"),
            std::string::npos);
  EXPECT_EQ(Shape(1, 32, 8, 1, 262145, 128).Validate("w").Message(),
            "w: seq_len: expected 1..262144, got 262145");
  // The mask of such a step: its last row as bits, and the limits named.
  auto wide = Mask::Create(1, 262144);
  ASSERT_TRUE(wide.IsOk()) << wide.Message();
  EXPECT_EQ(wide->Words().size(), 4096u);
  EXPECT_FALSE(Mask::Create(1, 262145).IsOk());
  EXPECT_FALSE(Mask::Create(32769, 32769).IsOk());
  EXPECT_TRUE(Mask::Create(4096, 262144).IsOk());
  EXPECT_EQ(Mask::Create(4097, 262144, "m").Message(),
            "m: size 4097 x 262144 is too large; a square mask must be at most 32768 on a side, "
            "and any mask at most 262144 on a side and 32768 x 32768 cells");
}

TEST(GroupedShapes, LastRowsAreTheNewestPositions) {
  const Mask causal = stof::engine::testing::PatternMask("causal", 100);
  auto rows = causal.LastRows(3);
  ASSERT_TRUE(rows.IsOk()) << rows.Message();
  ASSERT_EQ(rows->Rows(), 3);
  ASSERT_EQ(rows->Cols(), 100);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 100; ++c) EXPECT_EQ(rows->Get(r, c), c <= 97 + r) << r << " " << c;
  EXPECT_EQ(*causal.LastRows(100), causal);
  for (int64_t bad : {0, 101, -3}) {
    auto e = causal.LastRows(bad, "--q-len");
    ASSERT_FALSE(e.IsOk());
    EXPECT_NE(e.Message().find("--q-len: expected 1..100"), std::string::npos) << e.Message();
  }
}

TEST(GroupedShapes, PackingRule) {
  EXPECT_FALSE(ChooseGqaPacking(32, 32, 1, 64).Packed()) << "no group: nothing to pack";
  EXPECT_EQ(ChooseGqaPacking(32, 8, 1, 64), (GqaPacking{4, 1}));
  EXPECT_EQ(ChooseGqaPacking(32, 8, 7, 64), (GqaPacking{4, 8}));
  EXPECT_EQ(ChooseGqaPacking(32, 1, 16, 64), (GqaPacking{32, 16}));
  EXPECT_FALSE(ChooseGqaPacking(32, 8, 33, 64).Packed()) << "one head's rows fill half the tile";
  EXPECT_TRUE(ChooseGqaPacking(32, 8, 33, 128).Packed());
  EXPECT_FALSE(ChooseGqaPacking(32, 8, 1024, 128).Packed());
  EXPECT_EQ(PackedRowsPerHead(1), 1);
  EXPECT_EQ(PackedRowsPerHead(5), 8);
  EXPECT_EQ(PackedRowsPerHead(16), 16);
}

TEST(GroupedShapes, PackedMaskRepeatsRowsPerHead) {
  auto mask = Mask::Create(3, 100);
  ASSERT_TRUE(mask.IsOk());
  mask->SetRange(0, 0, 10);
  mask->SetRange(1, 5, 50);
  mask->SetRange(2, 90, 100);
  auto packed = PackGqaMask(*mask, {4, 4});
  ASSERT_TRUE(packed.IsOk()) << packed.Message();
  ASSERT_EQ(packed->Rows(), 16);
  ASSERT_EQ(packed->Cols(), 100);
  for (int64_t g = 0; g < 4; ++g) {
    for (int64_t r = 0; r < 4; ++r) {
      const int64_t src = r < 3 ? r : 2;  // padding rows repeat the last row
      for (int64_t c = 0; c < 100; ++c)
        ASSERT_EQ(packed->Get(g * 4 + r, c), mask->Get(src, c)) << g << " " << r << " " << c;
    }
  }
  EXPECT_FALSE(PackGqaMask(*mask, {4, 2}).IsOk()) << "2 rows cannot hold 3";
  EXPECT_FALSE(PackGqaMask(*mask, {4, 6}).IsOk()) << "rows must be a power of 2";
  EXPECT_FALSE(PackGqaMask(*mask, {}).IsOk()) << "not a packing";
}

// Grouped heads and a rectangular mask give exactly what the square MHA reference gives with K
// and V repeated per query head and the query rows taken alone.
TEST(GroupedShapes, ReferenceEqualsRepeatedKeyValueHeads) {
  const int64_t B = 2, H = 6, Hkv = 2, Lq = 5, Lk = 37, d = 16;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
  };
  const std::vector<float> q = fill(B * H * Lq * d), k = fill(B * Hkv * Lk * d),
                           v = fill(B * Hkv * Lk * d);
  auto mask = stof::engine::testing::PatternMask("causal", Lk).LastRows(Lq);
  ASSERT_TRUE(mask.IsOk());
  mask->SetRange(2, 0, Lk, false);  // an empty row gives zeros
  std::vector<float> out(q.size(), -7.f);
  ASSERT_TRUE(cpu::MaskedAttention(q.data(), k.data(), v.data(), out.data(),
                                   Shape(B, H, Hkv, Lq, Lk, d), *mask)
                  .IsOk());
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kvh = h / (H / Hkv);
      // One head, square: the Lk x Lk mask whose last Lq rows are `mask`, q in those rows.
      Mask square = *Mask::Create(Lk, Lk);
      for (int64_t r = 0; r < Lq; ++r)
        for (int64_t c = 0; c < Lk; ++c) square.Set(Lk - Lq + r, c, mask->Get(r, c));
      std::vector<float> qs(Lk * d, 0.f), os(Lk * d);
      std::copy_n(q.begin() + (b * H + h) * Lq * d, Lq * d, qs.begin() + (Lk - Lq) * d);
      const float* ks = k.data() + (b * Hkv + kvh) * Lk * d;
      const float* vs = v.data() + (b * Hkv + kvh) * Lk * d;
      ASSERT_TRUE(
          cpu::MaskedAttention(qs.data(), ks, vs, os.data(), Shape(1, 1, 0, 0, Lk, d), square)
              .IsOk());
      for (int64_t i = 0; i < Lq * d; ++i)
        ASSERT_EQ(out[(b * H + h) * Lq * d + i], os[(Lk - Lq) * d + i]) << b << " " << h;
    }
  }
  EXPECT_EQ(out[(0 * H + 1) * Lq * d + 2 * d], 0.f) << "the emptied row";
  auto wrong = cpu::MaskedAttention(q.data(), k.data(), v.data(), out.data(),
                                    Shape(B, H, Hkv, Lq + 1, Lk, d), *mask);
  ASSERT_FALSE(wrong.IsOk());
  EXPECT_NE(wrong.Message().find("does not match workload q_len x seq_len 6 x 37"),
            std::string::npos)
      << wrong.Message();
}

// A decode step of 32 heads over 8 takes a 64-row tile with the group's 4 heads packed; a
// prefill of the same heads is not packed; another GPU or head size is refused by name.
TEST(GroupedShapes, HopperTileChoiceForShapes) {
  const DeviceSpec h100 = *FindBuiltinDevice("h100");
  auto decode = *stof::engine::testing::PatternMask("causal", 8192).LastRows(1);
  auto c = ChooseHopperTileForShape(decode, Shape(8, 32, 8, 1, 8192, 128), h100);
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_EQ(c->config.block_m, 64);
  EXPECT_EQ(c->packing, (GqaPacking{4, 1}));
  auto prefill =
      ChooseHopperTileForShape(stof::engine::testing::PatternMask("causal", 4096), Shape(4, 32, 8, 0, 4096, 128),
                               h100);
  ASSERT_TRUE(prefill.IsOk()) << prefill.Message();
  EXPECT_FALSE(prefill->packing.Packed());
  auto a100 = ChooseHopperTileForShape(decode, Shape(8, 32, 8, 1, 8192, 128),
                                       *FindBuiltinDevice("a100"));
  ASSERT_FALSE(a100.IsOk());
  EXPECT_NE(a100.Message().find("32 query heads over 8 key/value heads, q_len 1 over seq_len "
                                "8192 runs on the Hopper kernel only"),
            std::string::npos)
      << a100.Message();
  // Head sizes between the kernel's run on the next one up (d 96 on d 128's tiles, 256 on its
  // own two); one the copy engine cannot address is refused by name.
  auto d96 = ChooseHopperTileForShape(decode, Shape(8, 32, 8, 1, 8192, 96), h100);
  ASSERT_TRUE(d96.IsOk()) << d96.Message();
  EXPECT_TRUE(d96->packing.Packed());
  auto d256 = ChooseHopperTileForShape(stof::engine::testing::PatternMask("causal", 4096),
                                       Shape(4, 16, 8, 0, 4096, 256), h100);
  ASSERT_TRUE(d256.IsOk()) << d256.Message();
  EXPECT_EQ(d256->config.block_m, 128) << "dense prefill: the two-consumer tile";
  EXPECT_EQ(d256->config.block_n, 64);
  // A decode step over 131072 keys (past a square mask's 32768): the same packed tile.
  auto long_row = Mask::Create(1, 131072);
  ASSERT_TRUE(long_row.IsOk());
  long_row->SetRange(0, 0, 131072);
  auto long_decode = ChooseHopperTileForShape(*long_row, Shape(1, 32, 8, 1, 131072, 128), h100);
  ASSERT_TRUE(long_decode.IsOk()) << long_decode.Message();
  EXPECT_EQ(long_decode->config.block_m, 64);
  EXPECT_EQ(long_decode->packing, (GqaPacking{4, 1}));
  auto d100 = ChooseHopperTileForShape(decode, Shape(8, 32, 8, 1, 8192, 100), h100);
  ASSERT_FALSE(d100.IsOk());
  EXPECT_NE(d100.Message().find("head_dim 100"), std::string::npos) << d100.Message();
}

}  // namespace
