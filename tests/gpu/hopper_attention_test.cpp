// The Hopper attention kernel (kernels/attention_hopper/): its configuration rules (host only),
// and on an sm_90 GPU its output against the fp32 CPU reference through CudaBackend::RunMha,
// the way every caller reaches it (MhaConfig 128 x BLOCK_N with 12 warps, 64 x BLOCK_N with 5).
// Matrix: 11 masks (full, causal, the generators, document, random blocks and elements, rows
// emptied, an empty mask) x L {128, 1000, 1024, 3000, 4096} x d {64, 128} x the tiles
// (128 x 64, 128 x 128, 64 x 64, and 64 x 128 at d 64); batch and head counts from 1 to 16;
// strided q/k/v/o views into a packed QKV projection; chained launches with and without
// programmatic dependent launch; a tile's blocks split over CTAs, eagerly and in CUDA graphs;
// bad requests refused; the SASS holds HGMMA (wgmma) instructions. Each run: fresh seeded
// inputs, output poisoned first, every element written, per-row error < 2e-3, empty rows
// exactly zero (mha_test_util.h). On another GPU or without one the GPU tests skip and say why.
#include "kernels/attention_hopper/hopper_attention.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/select/hopper_select.h"
#include "gpu_test_util.h"
#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention_common/device_layout.h"
#include "kernels/attention_common/hopper_chunk.h"
#include "mha_test_util.h"

namespace {

using stof::engine::Mask;
using stof::engine::MhaCall;
using stof::engine::MhaConfig;
using stof::engine::MhaKernel;
using stof::engine::MhaStrides;
using stof::engine::Workload;
using stof::kernels::CudaBackend;
namespace st = stof::testing;
namespace k = stof::kernels;

// ---- configuration rules (no GPU needed) -----------------------------------------------------

TEST(HopperConfig, AcceptsTheVariantsAndRefusesTheRest) {
  for (int64_t d : {32, 64, 96, 128}) {
    for (int64_t bn : {64, 128}) {
      EXPECT_TRUE(k::CheckHopperAttentionConfig(d, 128, bn, 12).IsOk()) << d << " " << bn;
      // The block-wise check forwards 12 (and 5) warps here, so every caller accepts them too.
      EXPECT_TRUE(k::CheckBlockSparseConfig(d, 128, bn, 12).IsOk()) << d << " " << bn;
    }
    EXPECT_TRUE(k::CheckHopperAttentionConfig(d, 64, 64, 5).IsOk()) << d;
    EXPECT_TRUE(k::CheckBlockSparseConfig(d, 64, 64, 5).IsOk()) << d;
  }
  const auto refused = [](int64_t d, int64_t bm, int64_t bn, int64_t w, const char* rule) {
    auto s = k::CheckHopperAttentionConfig(d, bm, bn, w);
    ASSERT_FALSE(s.IsOk());
    EXPECT_NE(s.Message().find(rule), std::string::npos) << s.Message();
    EXPECT_NE(s.Message().find("supported: head_dim a multiple of 8 up to 256"),
              std::string::npos);
  };
  for (int64_t d : {136, 256}) {
    EXPECT_TRUE(k::CheckHopperAttentionConfig(d, 128, 64, 12).IsOk()) << d;
    EXPECT_TRUE(k::CheckHopperAttentionConfig(d, 64, 64, 5).IsOk()) << d;
    refused(d, 128, 128, 12, "BLOCK_N must be 64 above head_dim 128");
  }
  refused(100, 128, 128, 12, "head_dim must be a multiple of 8 from 8 to 256");
  refused(264, 128, 64, 12, "head_dim must be a multiple of 8 from 8 to 256");
  refused(64, 64, 128, 12, "BLOCK_M must be 128 with num_warps 12");
  refused(128, 128, 32, 12, "BLOCK_N must be 64 or 128");
  refused(64, 128, 128, 8, "num_warps must be 12");
  refused(64, 128, 64, 5, "BLOCK_M must be 64 with num_warps 5");
  refused(128, 64, 128, 5, "BLOCK_N must be 64 with BLOCK_M 64 above head_dim 64");
  refused(96, 64, 128, 5, "BLOCK_N must be 64 with BLOCK_M 64 above head_dim 64");
  EXPECT_TRUE(k::CheckHopperAttentionConfig(64, 64, 128, 5).IsOk());
  EXPECT_TRUE(k::CheckHopperAttentionConfig(32, 64, 128, 5).IsOk());
  refused(64, 32, 64, 5, "BLOCK_M must be 64 with num_warps 5");
  // A device with less shared memory per block than the d 128 x 128 ring needs.
  auto small = k::CheckHopperAttentionConfig(128, 128, 128, 12, 100000);
  ASSERT_FALSE(small.IsOk());
  EXPECT_NE(small.Message().find("bytes of shared memory, the limit is 100000"), std::string::npos);
}

// The selection's wave estimate (engine/select/hopper_select.cpp) counts the CTAs per SM each
// kernel is built for: a change to the kernel's traits must change the table too.
TEST(HopperConfig, TileModelCountsTheKernelsCtasPerSm) {
  int variants = 0;
  for (int64_t d : {64, 128, 256})
    for (int64_t bm : {64, 128})
      for (int64_t bn : {64, 128}) {
        const int kernel = k::HopperAttentionCtasPerSm(d, bm, bn);
        EXPECT_EQ(stof::engine::HopperTileCtasPerSm(d, bm, bn), kernel)
            << "d " << d << " " << bm << "x" << bn;
        variants += kernel > 0;
      }
  EXPECT_EQ(variants, 9);
  EXPECT_EQ(k::HopperAttentionCtasPerSm(64, 64, 64), 4);
  EXPECT_EQ(k::HopperAttentionCtasPerSm(96, 64, 64), k::HopperAttentionCtasPerSm(128, 64, 64));
  EXPECT_EQ(k::HopperAttentionCtasPerSm(100, 64, 64), 0);
  EXPECT_EQ(stof::engine::HopperTileCtasPerSm(64, 64, 192), 0);
}

// The chunks of a tile's visited blocks (a split over CTAs): in order they give back every
// block once, part blocks before full blocks, with sizes differing by at most one.
TEST(HopperConfig, ChunksCoverTheVisitedBlocksOnceInOrder) {
  using stof::kernels::detail::BlockRanges;
  using stof::kernels::detail::ChunkOfBlocks;
  for (int parts : {0, 1, 3, 8})
    for (int fulls : {0, 1, 5})
      for (int chunks = 1; chunks <= 7; ++chunks) {
        const BlockRanges all{100, parts, 200, fulls};
        std::vector<int> order;  // part j as 100 + j, full j as 200 + j
        int smallest = 1 << 30, largest = 0;
        for (int c = 0; c < chunks; ++c) {
          const BlockRanges r = ChunkOfBlocks(all, c, chunks);
          for (int j = 0; j < r.parts; ++j) order.push_back(r.part_begin + j);
          for (int j = 0; j < r.fulls; ++j) order.push_back(r.full_begin + j);
          smallest = std::min(smallest, r.parts + r.fulls);
          largest = std::max(largest, r.parts + r.fulls);
        }
        std::vector<int> want;
        for (int j = 0; j < parts; ++j) want.push_back(100 + j);
        for (int j = 0; j < fulls; ++j) want.push_back(200 + j);
        EXPECT_EQ(order, want) << parts << " parts, " << fulls << " fulls, " << chunks;
        EXPECT_LE(largest - smallest, 1);
      }
}

// The default split rule on the rows measured split and whole on an H100 (64 x 64 d64 on
// 132 SMs x 4 CTAs; blocks per head and heaviest tile counted by `stof layout --block
// 64x64`): it splits the B1 rows that got faster and not the L1024 B8 rows, which got slower
// (measured: docs/benchmarks.md, "Hopper kernel, step 7: heavy tiles split by default, bf16
// (issue 15)").
TEST(HopperConfig, SplitPaysWhereItWasMeasuredFaster) {
  using stof::kernels::detail::SplitPays;
  const int64_t ctas = 132 * 4;
  EXPECT_TRUE(SplitPays(16, 74, 12, ctas));   // longformer L1024 B1: faster split
  EXPECT_TRUE(SplitPays(64, 314, 12, ctas));  // longformer L4096 B1: faster split
  EXPECT_TRUE(SplitPays(64, 692, 12, ctas));  // bigbird L4096 B1: faster split
  EXPECT_FALSE(SplitPays(16, 74, 96, ctas));  // longformer L1024 B8: slower split
  EXPECT_FALSE(SplitPays(16, 92, 96, ctas));  // bigbird L1024 B8: slower split
  EXPECT_FALSE(SplitPays(0, 0, 1, ctas));     // an empty mask: nothing to split
}

// The work units of a split launch: every tile once, in heavy-first order; a heavy tile's
// chunks together, covering its blocks once (ChunkOfBlocks); the split tiles' chunks numbered
// 0, 1, ... in unit order; the default cut max(4, ceil(2 x mean)); at most 16 chunks.
TEST(HopperConfig, UnitsCutHeavyTilesOnly) {
  using stof::kernels::detail::BlockRanges;
  using stof::kernels::detail::ChunkOfBlocks;
  using stof::kernels::detail::HopperUnitPlan;
  using stof::kernels::detail::PlanHopperUnits;
  const auto check = [](const std::vector<int32_t>& counts, const std::vector<int32_t>& order,
                        int32_t cut, int32_t want_cut, int32_t want_slots) {
    SCOPED_TRACE("cut " + std::to_string(cut));
    const HopperUnitPlan plan = PlanHopperUnits(counts, order, cut);
    EXPECT_EQ(plan.cut, want_cut);
    EXPECT_EQ(plan.split_slots, want_slots);
    size_t at = 0;
    int32_t next_slot = 0;
    for (int32_t tile : order) {
      ASSERT_LT(at, plan.units.size());
      const int32_t chunks = plan.units[at].chunks;
      const int32_t count = counts[static_cast<size_t>(tile)];
      EXPECT_EQ(chunks,
                std::min<int32_t>(count > want_cut ? (count + want_cut - 1) / want_cut : 1, 16))
          << "tile " << tile;
      int32_t covered = 0;
      for (int32_t c = 0; c < chunks; ++c, ++at) {
        ASSERT_LT(at, plan.units.size());
        const auto& u = plan.units[at];
        EXPECT_EQ(u.tile, tile);
        EXPECT_EQ(u.chunk, c);
        EXPECT_EQ(u.chunks, chunks);
        EXPECT_EQ(u.slot, chunks > 1 ? next_slot++ : -1);
        const BlockRanges r = ChunkOfBlocks(BlockRanges{0, count, 0, 0}, c, chunks);
        EXPECT_EQ(r.part_begin, covered);
        covered += r.parts;
      }
      EXPECT_EQ(covered, count);
    }
    EXPECT_EQ(at, plan.units.size());
  };
  // A global-row tile among band tiles (Longformer at 64 x 64, L 1024): mean 61 / 16,
  // so the default cut is 2 x 3.7 -> 8 and only the 16-block tile splits, in two.
  std::vector<int32_t> counts(16, 3);
  counts[0] = 16;
  std::vector<int32_t> order(16);
  for (int32_t t = 0; t < 16; ++t) order[static_cast<size_t>(t)] = t;
  check(counts, order, 0, 8, 2);
  check(counts, order, 2, 2, 8 + 15 * 2);  // 16 -> 8 chunks, each 3 -> 2
  check(counts, order, 1, 1, 16 + 15 * 3);
  // Dense and uniform rows never split by default; a 100-block tile at cut 1 stops at 16.
  check(std::vector<int32_t>(8, 32), {7, 6, 5, 4, 3, 2, 1, 0}, 0, 64, 0);
  check({100, 0, 1}, {0, 2, 1}, 1, 1, 16);
  // Empty tiles (count 0) stay whole; an all-empty layout keeps the minimum cut.
  check({0, 0}, {0, 1}, 0, 4, 0);
}

// The merge's state of a split launch, over every (batch, head) and unit of a plan: each
// chunk of a split tile owns one partial entry, none shared, all inside [heads_total]
// [split_slots]; the chunks of one (tile, head) share one arrival counter, which no other
// (tile, head) uses, inside [heads_total][q_tiles] (the sizes PrepareSplit allocates).
TEST(HopperConfig, SplitStateHasOneEntryPerChunkAndTile) {
  namespace d = stof::kernels::detail;
  const std::vector<int32_t> counts = {40, 3, 0, 25, 4, 4, 9};
  const std::vector<int32_t> order = {0, 3, 6, 4, 5, 1, 2};
  const int q_tiles = static_cast<int>(counts.size()), heads_total = 5;
  const d::HopperUnitPlan plan = d::PlanHopperUnits(counts, order, 4);
  ASSERT_EQ(plan.split_slots, 10 + 7 + 3);  // 40, 25 and 9 blocks at 4 per chunk
  std::vector<int> partial_uses(static_cast<size_t>(heads_total * plan.split_slots), 0);
  std::map<int64_t, std::pair<int, int>> arrival_owner;  // index -> (bh, tile)
  std::map<std::pair<int, int>, int> arrivals;           // (bh, tile) -> chunks counted
  for (int bh = 0; bh < heads_total; ++bh) {
    for (const d::HopperUnit& u : plan.units) {
      const int32_t piece = d::PackPiece(u.chunk, u.chunks, u.slot);
      if (piece == 0) continue;  // whole tile: no merge
      const int chunk = d::PieceChunk(piece), slot = d::PieceSlot(piece);
      // The kernel's own arithmetic: this chunk's entry is slot0 + chunk.
      const int64_t mine = d::SplitPartialIndex(bh, plan.split_slots, slot - chunk) + chunk;
      ASSERT_GE(mine, 0);
      ASSERT_LT(mine, static_cast<int64_t>(partial_uses.size()));
      ++partial_uses[static_cast<size_t>(mine)];
      const int64_t a = d::SplitArrivalIndex(bh, q_tiles, u.tile);
      ASSERT_GE(a, 0);
      ASSERT_LT(a, int64_t{heads_total} * q_tiles);
      const auto owner = arrival_owner.emplace(a, std::make_pair(bh, u.tile)).first->second;
      EXPECT_EQ(owner, std::make_pair(bh, u.tile)) << "arrival counter " << a << " shared";
      ++arrivals[{bh, u.tile}];
    }
  }
  for (size_t i = 0; i < partial_uses.size(); ++i) EXPECT_EQ(partial_uses[i], 1) << "entry " << i;
  for (const auto& [key, n] : arrivals)
    EXPECT_EQ(n, (counts[static_cast<size_t>(key.second)] + plan.cut - 1) / plan.cut)
        << "bh " << key.first << " tile " << key.second;
}

// A unit's chunk, chunk count and slot survive the packing into one int (0 = a whole tile).
TEST(HopperConfig, PiecesPackAndUnpack) {
  namespace d = stof::kernels::detail;
  EXPECT_EQ(d::PackPiece(0, 1, -1), 0);
  for (int32_t chunks = 1; chunks <= 16; ++chunks)
    for (int32_t chunk = 0; chunk < chunks; ++chunk)
      for (int32_t slot : {-1, 0, 1, 777, 1 << 20}) {
        const int32_t v = d::PackPiece(chunk, chunks, slot);
        EXPECT_EQ(d::PieceChunk(v), chunk);
        EXPECT_EQ(d::PieceChunks(v), chunks);
        EXPECT_EQ(d::PieceSlot(v), slot);
      }
}

TEST(HopperConfig, SharedMemoryIsTheQSlotsPlusTheKvRingPlusBarriers) {
  // Two Q slots of BLOCK_M x d (where they fit), kStages x (K + V) of BLOCK_N x d, fp16, a
  // part block's BLOCK_M x BLOCK_N bitmap per stage (where it fits); 8 bytes per barrier (q
  // full / empty per slot, 4 per stage), 48 per slot for its work item, 4 per consumer
  // warpgroup for its split flag, 1024 of alignment.
  EXPECT_EQ(k::HopperAttentionSmemBytes(128, 128, 128),
            2 * 32768u + 2 * 2 * 32768u + 2 * 2048u + 8 * 12 + 2 * 48 + 8 + 1024);
  EXPECT_EQ(k::HopperAttentionSmemBytes(128, 128, 64),
            2 * 32768u + 3 * 2 * 16384u + 3 * 1024u + 8 * 16 + 2 * 48 + 8 + 1024);
  EXPECT_EQ(k::HopperAttentionSmemBytes(64, 128, 128),
            2 * 16384u + 3 * 2 * 16384u + 3 * 2048u + 8 * 16 + 2 * 48 + 8 + 1024);
  EXPECT_EQ(k::HopperAttentionSmemBytes(64, 128, 64),
            2 * 16384u + 3 * 2 * 8192u + 3 * 1024u + 8 * 16 + 2 * 48 + 8 + 1024);
  // BLOCK_M 64: two stages at d 64, one at d 128, so four (64 x 64 at d 64) or three CTAs
  // share an SM's 227 KiB.
  EXPECT_EQ(k::HopperAttentionSmemBytes(64, 64, 64),
            2 * 8192u + 2 * 2 * 8192u + 2 * 512u + 8 * 12 + 2 * 48 + 4 + 1024);
  EXPECT_LE(4 * (k::HopperAttentionSmemBytes(64, 64, 64) + 1024), 233472u);
  EXPECT_EQ(k::HopperAttentionSmemBytes(128, 64, 64),
            2 * 16384u + 1 * 2 * 16384u + 512u + 8 * 8 + 2 * 48 + 4 + 1024);
  EXPECT_LE(3 * (k::HopperAttentionSmemBytes(128, 64, 64) + 1024), 233472u);
  EXPECT_EQ(k::HopperAttentionSmemBytes(100, 128, 64), 0u);
  EXPECT_EQ(k::HopperAttentionSmemBytes(96, 128, 128), k::HopperAttentionSmemBytes(128, 128, 128));
  // d 256: one Q slot of 128 (64) rows beside two stages of K and V (64 rows of 512 bytes).
  EXPECT_EQ(k::HopperAttentionSmemBytes(256, 128, 64),
            65536u + 2 * 2 * 32768u + 2 * 1024u + 8 * 10 + 48 + 8 + 1024);
  EXPECT_EQ(k::HopperAttentionSmemBytes(256, 64, 64),
            2 * 32768u + 2 * 2 * 32768u + 2 * 512u + 8 * 12 + 2 * 48 + 4 + 1024);
  EXPECT_LE(k::HopperAttentionSmemBytes(256, 128, 64) + 1024, 233472u);
  // 64 x 128 at d 64 has no room for a second Q slot at three CTAs per SM (252 492 bytes of
  // 233 472): one slot, whose next item's Q waits for this one's store; nor for the bitmaps
  // (2 x 1024 bytes more would need 233 868): its mask reads them from global memory.
  EXPECT_EQ(k::HopperAttentionSmemBytes(64, 64, 128),
            8192u + 2 * 2 * 16384u + 8 * 10 + 48 + 4 + 1024);
  EXPECT_LE(3 * (k::HopperAttentionSmemBytes(64, 64, 128) + 1024), 233472u);
  EXPECT_GT(3 * (k::HopperAttentionSmemBytes(64, 64, 128) + 2 * 1024 + 1024), 233472u);
  EXPECT_EQ(k::HopperAttentionSmemBytes(128, 64, 128), 0u);
  EXPECT_EQ(k::SupportedHopperAttentionConfigs(64).size(), 4u);
  // 170000 bytes: 128 x 64 (168 168) and 64 x 64 fit at d 128, 128 x 128 (201 928) does not.
  EXPECT_EQ(k::SupportedHopperAttentionConfigs(128, 170000).size(), 2u);
}

// ---- on an sm_90 GPU ---------------------------------------------------------------------------

MhaConfig HopperConfig(int64_t block_m, int64_t block_n) {
  MhaConfig c;
  c.kernel = MhaKernel::kBlockWise;
  c.block_m = block_m;
  c.block_n = block_n;
  c.num_warps = block_m == 64 ? k::kHopperAttentionWarps64 : k::kHopperAttentionWarps;
  return c;
}

// The configurations every GPU test runs: (BLOCK_M, BLOCK_N); 64 x 128 at d 64 only.
constexpr std::pair<int64_t, int64_t> kHopperTiles[] = {{128, 64}, {128, 128}, {64, 64}, {64, 128}};

bool TileRuns(std::pair<int64_t, int64_t> tile, int64_t head_dim) {
  const MhaConfig c = HopperConfig(tile.first, tile.second);
  return k::CheckHopperAttentionConfig(head_dim, c.block_m, c.block_n, c.num_warps).IsOk();
}

std::string TileName(std::pair<int64_t, int64_t> t) {
  return std::to_string(t.first) + "x" + std::to_string(t.second);
}

using CheckedCase = st::CheckedMhaCase;

// The configurations on one (mask, workload) against one reference.
void CheckHopper(const Mask& mask, const Workload& w, uint64_t seed, const std::string& label) {
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  CheckedCase c(*backend, mask, w, seed);
  ASSERT_TRUE(c.ok);
  const st::DeviceMhaBuffers& buf = c.buf;
  const std::vector<float>& ref = c.ref;
  const auto& empty_row = c.empty_row;
  for (const auto& tile : kHopperTiles) {
    if (!TileRuns(tile, w.head_dim)) continue;
    SCOPED_TRACE(label + " " + TileName(tile));
    MhaCall call;
    call.workload = w;
    call.mask = &mask;
    call.config = HopperConfig(tile.first, tile.second);
    call.q = buf.Q(), call.k = buf.K(), call.v = buf.V(), call.o = buf.O();
    st::MhaError e;
    st::CheckMhaRun(*backend, buf, [&] { return backend->RunMha(call); }, ref, w, empty_row, &e);
    if (::testing::Test::HasFatalFailure()) return;
    std::printf("[ hopper ] %s %s: worst row error %.2e, global %.2e\n", label.c_str(),
                TileName(tile).c_str(), e.row_err, e.global_err);
  }
}

stof::engine::Expected<Mask> HopperTestMask(const std::string& name, int64_t L) {
  if (name == "empty") return Mask::Create(L, L, "empty");
  if (name == "full" || name == "causal") {
    stof::engine::MaskSpec s;
    s.pattern = name;
    s.seq_len = L;
    return stof::engine::Generate(s);
  }
  return st::MakeMask(name, L);
}

std::vector<st::MhaCase> HopperCases() {
  std::vector<st::MhaCase> v;
  for (const char* m : {"full", "causal", "sliding_window", "dilated", "longformer", "bigbird",
                        "document", "random_blocks", "random_elements", "holes", "empty"})
    for (int64_t L : {128, 1000, 1024, 3000, 4096})
      for (int64_t d : {64, 128}) v.push_back({m, L, d});
  return v;
}

class GpuHopperAttention : public ::testing::TestWithParam<st::MhaCase> {};

TEST_P(GpuHopperAttention, MatchesReference) {
  STOF_REQUIRE_HOPPER();
  const st::MhaCase& c = GetParam();
  auto mask = HopperTestMask(c.mask, c.seq_len);
  ASSERT_TRUE(mask.IsOk()) << mask.Message();
  const bool big = c.seq_len >= 3000;
  CheckHopper(*mask, st::MhaWorkload(big ? 1 : 2, big ? 2 : 3, c.seq_len, c.head_dim),
              1000 + c.seq_len, st::MhaCaseName(c));
}

INSTANTIATE_TEST_SUITE_P(Masks, GpuHopperAttention, ::testing::ValuesIn(HopperCases()),
                         st::MhaCaseParamName);

TEST(GpuHopperAttentionShapes, BatchAndHeadsFromOneToSixteen) {
  STOF_REQUIRE_HOPPER();
  auto mask = st::MakeMask("bigbird", 512);
  ASSERT_TRUE(mask.IsOk());
  for (auto [b, h] : {std::pair<int64_t, int64_t>{1, 1}, {16, 1}, {1, 16}, {4, 5}}) {
    for (int64_t d : {64, 128}) {
      CheckHopper(*mask, st::MhaWorkload(b, h, 512, d), 7 * b + h,
                  "bigbird L512 B" + std::to_string(b) + " H" + std::to_string(h) + " d" +
                      std::to_string(d));
      if (HasFatalFailure()) return;
    }
  }
}

// Puts the launch overrides back as they were when the test ends.
struct RestoreOverrides {
  k::HopperLaunchOverrides saved = k::GetHopperLaunchOverrides();
  ~RestoreOverrides() { k::SetHopperLaunchOverrides(saved); }
};

// Heavy tiles split over CTAs, whatever the rule says (the tests' masks are small).
void ForceSplitHeavyFirst() {
  k::HopperLaunchOverrides o;
  o.split = 1;
  o.order = 1;
  k::SetHopperLaunchOverrides(o);
}

// The masks that stress the scheduler, at L 1000: causal, bigbird, "banded" (bigbird with
// whole Q tiles emptied at BLOCK_M 64 and 128, rows 128-383 and 640-767, between tiles with
// work, and three rows emptied inside a tile, 900-902) and the empty mask.
const char* const kSchedulerMasks[] = {"causal", "bigbird", "banded", "empty"};
stof::engine::Expected<Mask> SchedulerTestMask(const std::string& name) {
  auto mask = HopperTestMask(name == "banded" ? "bigbird" : name, 1000);
  if (mask.IsOk() && name == "banded") {
    for (int64_t r = 128; r < 384; ++r) mask->SetRange(r, 0, 1000, false);
    for (int64_t r = 640; r < 768; ++r) mask->SetRange(r, 0, 1000, false);
    for (int64_t r = 900; r < 903; ++r) mask->SetRange(r, 0, 1000, false);
  }
  return mask;
}

// CheckHopper under launch overrides `o` on the scheduler masks, d 64 and 128, L1000 B2 H3.
// Restores nothing: callers hold a RestoreOverrides.
void CheckHopperUnderOverrides(const k::HopperLaunchOverrides& o, uint64_t seed,
                               const std::string& label) {
  k::SetHopperLaunchOverrides(o);
  for (const std::string m : kSchedulerMasks) {
    auto mask = SchedulerTestMask(m);
    ASSERT_TRUE(mask.IsOk()) << mask.Message();
    for (int64_t d : {64, 128}) {
      CheckHopper(*mask, st::MhaWorkload(2, 3, 1000, d), seed,
                  m + " L1000 B2 H3 d" + std::to_string(d) + " " + label);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// A persistent grid of a few CTAs, each taking many work items from the scheduler in both
// launch orders (empty items among them: bigbird with two bands of rows emptied, and the empty
// mask), so the load rings' and Q's phases carry over from item to item, and the output
// staging is reused. One CTA walks them all at cap 1. The layout cache hands the same layout
// (and its work counter) to every round, so a counter not reset by the launch before would
// leave items uncomputed (poisoned output).
TEST(GpuHopperAttentionShapes, PersistentGridMatchesReference) {
  STOF_REQUIRE_HOPPER();
  RestoreOverrides restore;
  for (int64_t cap : {1, 7}) {
    for (int order : {0, 1}) {
      k::HopperLaunchOverrides o;
      o.order = order;
      o.max_ctas = cap;
      CheckHopperUnderOverrides(o, 31 * cap + order,
                                "ctas " + std::to_string(cap) + " order " + std::to_string(order));
      if (HasFatalFailure()) return;
    }
  }
}

// One launch of `layout` (64-row tiles) through LaunchHopperAttention on `stream`: the path
// the backend takes, on a layout of the test's own (the backend's cache holds layouts at the
// default split cut).
stof::engine::Status LaunchOwnLayout(const k::DeviceBlockLayout& layout, const Workload& w,
                                     const st::DeviceMhaBuffers& buf, cudaStream_t stream) {
  return k::LaunchHopperAttention(w, layout, buf.Q(), buf.K(), buf.V(), buf.O(), stream,
                                  MhaStrides{}, MhaStrides{}, MhaStrides{}, 0.0f);
}

// Heavy tiles' blocks split over CTAs (forced on, heavy-first order) with the layout's chunks
// cut at 1, 2 and 3 blocks (at 1 every tile of two or more blocks splits, up to 16 chunks), on
// a full and a persistent grid, every 64-row tile, d 64 and 128: the output matches the
// reference on the scheduler masks of CheckHopperUnderOverrides (emptied rows, whole empty
// tiles, the empty mask). The layout's scratch must exist after a launch whose layout has
// split tiles (the launch did split), and every case reuses the arrival counters, so a launch
// that did not leave them at zero would break the next. The 128-row tiles have no split
// kernel; the backend's launches of them stay whole (PersistentGridMatchesReference).
TEST(GpuHopperAttentionShapes, SplitBlocksMatchReference) {
  STOF_REQUIRE_HOPPER();
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  RestoreOverrides restore;
  for (const std::string m : kSchedulerMasks) {
    auto mask = SchedulerTestMask(m);
    ASSERT_TRUE(mask.IsOk()) << mask.Message();
    for (int64_t d : {64, 128}) {
      const Workload w = st::MhaWorkload(2, 3, 1000, d);
      CheckedCase c(*backend, *mask, w, 41 + d);
      ASSERT_TRUE(c.ok);
      for (const auto& tile : kHopperTiles) {
        if (tile.first != 64 || !TileRuns(tile, d)) continue;
        for (int32_t cut : {1, 2, 3}) {
          auto layout = k::DeviceBlockLayout::Create(*mask, 64, tile.second, cut);
          ASSERT_TRUE(layout.IsOk()) << layout.Message();
          if (m != "empty") {
            EXPECT_GT((*layout)->HopperSplitSlots(), 0) << "nothing to split";
          }
          for (int persistent : {0, 1}) {
            SCOPED_TRACE(m + " L1000 B2 H3 d" + std::to_string(d) + " " + TileName(tile) + " cut " +
                         std::to_string(cut) + " persistent " + std::to_string(persistent));
            k::HopperLaunchOverrides o;
            o.split = 1;
            o.order = 1;
            o.persistent = persistent;
            k::SetHopperLaunchOverrides(o);
            st::CheckMhaRun(
                *backend, c.buf, [&] { return LaunchOwnLayout(**layout, w, c.buf, nullptr); },
                c.ref, w, c.empty_row, nullptr);
            if (HasFatalFailure()) return;
            if ((*layout)->HopperSplitSlots() > 0) {
              EXPECT_GT((*layout)->SplitWorkspaceBytes(), 0u) << "the launch did not split";
            }
          }
        }
      }
    }
  }
}

// A split launch captured into a CUDA graph on another stream than the eager launches, as
// torch.cuda.graph does. Before any eager launch the layout has no scratch and a capture
// cannot allocate one, so the graph must hold the kernel that does not merge (a graph that
// captured the merging one without scratch hit an illegal address on replay:
// docs/benchmarks.md, "Hopper kernel, step 6: the waiting branches validated, the split's
// first runs (issue 15)"). After an eager launch on the default stream made the scratch, the
// capture splits. Each graph is replayed twice (the second reuses the arrival counters the
// first left at zero) and matches the reference.
TEST(GpuHopperAttentionShapes, SplitLaunchesInCudaGraphs) {
  STOF_REQUIRE_HOPPER();
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  RestoreOverrides restore;
  ForceSplitHeavyFirst();
  auto mask = st::MakeMask("bigbird", 1000);
  ASSERT_TRUE(mask.IsOk());
  for (int64_t d : {64, 128}) {
    SCOPED_TRACE("d " + std::to_string(d));
    const Workload w = st::MhaWorkload(2, 3, 1000, d);
    CheckedCase c(*backend, *mask, w, 31 + d);
    ASSERT_TRUE(c.ok);
    auto layout = k::DeviceBlockLayout::Create(*mask, 64, 64, 2);
    ASSERT_TRUE(layout.IsOk()) << layout.Message();
    ASSERT_GT((*layout)->HopperSplitSlots(), 0);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    for (bool scratch : {false, true}) {
      SCOPED_TRACE(scratch ? "scratch made before the capture" : "no scratch");
      if (scratch) {
        ASSERT_TRUE(LaunchOwnLayout(**layout, w, c.buf, nullptr).IsOk());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      }
      ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
      const auto run = LaunchOwnLayout(**layout, w, c.buf, stream);
      cudaGraph_t graph = nullptr;
      ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
      ASSERT_TRUE(run.IsOk()) << run.Message();
      EXPECT_EQ((*layout)->SplitWorkspaceBytes() > 0, scratch)
          << "the capture itself must not make the scratch";
      cudaGraphExec_t exec = nullptr;
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      for (int replay = 0; replay < 2; ++replay) {
        st::CheckMhaRun(
            *backend, c.buf,
            [&]() -> stof::engine::Status {
              if (cudaGraphLaunch(exec, stream) != cudaSuccess)
                return stof::engine::MakeError("cudaGraphLaunch failed");
              return stof::engine::Status::Ok();
            },
            c.ref, w, c.empty_row, nullptr);
        if (HasFatalFailure()) break;
      }
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      if (HasFatalFailure()) break;
    }
    cudaStreamDestroy(stream);
    if (HasFatalFailure()) return;
  }
}

// A split launch gives the same bits every time, whichever chunk of a tile arrives last (the
// merge runs in chunk order): five launches of bigbird cut into chunks of 2 blocks.
TEST(GpuHopperAttentionShapes, SplitLaunchesGiveTheSameBits) {
  STOF_REQUIRE_HOPPER();
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  RestoreOverrides restore;
  ForceSplitHeavyFirst();
  auto mask = st::MakeMask("bigbird", 1000);
  ASSERT_TRUE(mask.IsOk());
  for (int64_t d : {64, 128}) {
    const Workload w = st::MhaWorkload(2, 3, 1000, d);
    const size_t elements = static_cast<size_t>(w.batch * w.heads * w.seq_len * d);
    CheckedCase c(*backend, *mask, w, 5 + d);
    ASSERT_TRUE(c.ok);
    auto layout = k::DeviceBlockLayout::Create(*mask, 64, 64, 2);
    ASSERT_TRUE(layout.IsOk()) << layout.Message();
    ASSERT_GT((*layout)->HopperSplitSlots(), 0);
    std::vector<uint16_t> first(elements), again(elements);
    for (int launch = 0; launch < 5; ++launch) {
      ASSERT_TRUE(k::PoisonBuffer(c.buf.O(), c.buf.Bytes()).IsOk());
      ASSERT_TRUE(LaunchOwnLayout(**layout, w, c.buf, nullptr).IsOk());
      ASSERT_TRUE(backend->Synchronize().IsOk());
      std::vector<uint16_t>& out = launch == 0 ? first : again;
      ASSERT_TRUE(backend->CopyToHost(out.data(), c.buf.O(), elements * 2).IsOk());
      if (launch == 0) continue;
      int64_t mismatches = 0;
      for (size_t i = 0; i < elements; ++i) mismatches += first[i] != again[i];
      EXPECT_EQ(mismatches, 0) << "d " << d << ", launch " << launch;
    }
  }
}

// ReserveHopperSplitWorkspace (what PreparedMha::Create calls) makes the scratch of a layout
// that will split, at the size the launch asks for (the launch does not grow it), and nothing
// for a layout whose launch does not split: forced off, or a dense mask (no heavy tile).
TEST(GpuHopperAttentionShapes, ReserveMakesTheSplitScratchOnlyWhenSplitting) {
  STOF_REQUIRE_HOPPER();
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  RestoreOverrides restore;
  auto mask = st::MakeMask("bigbird", 1000);
  auto dense = st::MakeMask("full", 1000);
  ASSERT_TRUE(mask.IsOk() && dense.IsOk());
  const Workload w = st::MhaWorkload(2, 3, 1000, 64);  // K + V 1.5 MB: heavy first
  for (int split : {-1, 0}) {
    SCOPED_TRACE("split override " + std::to_string(split));
    k::HopperLaunchOverrides o;
    o.split = split;
    k::SetHopperLaunchOverrides(o);
    auto layout = k::DeviceBlockLayout::Create(*mask, 64, 64, 2);
    ASSERT_TRUE(layout.IsOk()) << layout.Message();
    ASSERT_TRUE(k::ReserveHopperSplitWorkspace(w, **layout).IsOk());
    const size_t reserved = (*layout)->SplitWorkspaceBytes();
    EXPECT_EQ(reserved > 0, split != 0);
    CheckedCase c(*backend, *mask, w, 77);
    ASSERT_TRUE(c.ok);
    st::CheckMhaRun(
        *backend, c.buf, [&] { return LaunchOwnLayout(**layout, w, c.buf, nullptr); }, c.ref, w,
        c.empty_row, nullptr);
    EXPECT_EQ((*layout)->SplitWorkspaceBytes(), reserved) << "the launch had to grow it";
  }
  auto full = k::DeviceBlockLayout::Create(*dense, 64, 64);
  ASSERT_TRUE(full.IsOk()) << full.Message();
  ASSERT_TRUE(k::ReserveHopperSplitWorkspace(w, **full).IsOk());
  EXPECT_EQ((*full)->SplitWorkspaceBytes(), 0u);
}

// q, k, v as views into one packed projection [B, L, 3, H, d] and o as [B, L, H, d] (what a
// fused layer passes): the same bits as the packed call.
TEST(GpuHopperAttentionShapes, StridedViewsMatchPackedTensors) {
  STOF_REQUIRE_HOPPER();
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  auto mask = st::MakeMask("longformer", 1000);
  ASSERT_TRUE(mask.IsOk());
  for (int64_t d : {64, 128}) {
    const Workload w = st::MhaWorkload(2, 3, 1000, d);
    const int64_t B = w.batch, H = w.heads, L = w.seq_len;
    const int64_t elements = B * H * L * d;
    const st::MhaInputs in = st::RandomInputs(elements, 99 + d);
    std::vector<uint16_t> qkv(static_cast<size_t>(3 * elements));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t r = 0; r < L; ++r)
          for (int64_t c = 0; c < d; ++c) {
            const size_t src = static_cast<size_t>(((b * H + h) * L + r) * d + c);
            const size_t dst = static_cast<size_t>(((b * L + r) * 3 * H + h) * d + c);
            qkv[dst] = in.q[src];
            qkv[dst + static_cast<size_t>(H * d)] = in.k[src];
            qkv[dst + static_cast<size_t>(2 * H * d)] = in.v[src];
          }
    st::DeviceMhaBuffers packed(*backend, elements);
    ASSERT_TRUE(packed.Ok());
    ASSERT_TRUE(packed.Upload(in).IsOk());
    st::DeviceBuffer dev_qkv(qkv.size() * 2), dev_o(static_cast<size_t>(elements) * 2);
    ASSERT_TRUE(dev_qkv.Ok() && dev_o.Ok());
    ASSERT_TRUE(dev_qkv.Upload(qkv).IsOk());
    for (const auto& tile : kHopperTiles) {
      if (!TileRuns(tile, d)) continue;
      MhaCall call;
      call.workload = w;
      call.mask = &*mask;
      call.config = HopperConfig(tile.first, tile.second);
      call.q = packed.Q(), call.k = packed.K(), call.v = packed.V(), call.o = packed.O();
      ASSERT_TRUE(backend->RunMha(call).IsOk());
      auto* base = static_cast<uint16_t*>(dev_qkv.Ptr());
      call.q = base, call.k = base + H * d, call.v = base + 2 * H * d, call.o = dev_o.Ptr();
      call.q_strides = MhaStrides{L * 3 * H * d, d, 3 * H * d};
      call.kv_strides = call.q_strides;
      call.o_strides = MhaStrides{L * H * d, d, H * d};
      ASSERT_TRUE(dev_o.Poison().IsOk());
      auto run = backend->RunMha(call);
      ASSERT_TRUE(run.IsOk()) << run.Message();
      ASSERT_TRUE(backend->Synchronize().IsOk());
      std::vector<uint16_t> a(static_cast<size_t>(elements)), o(static_cast<size_t>(elements));
      ASSERT_TRUE(backend->CopyToHost(a.data(), packed.O(), a.size() * 2).IsOk());
      ASSERT_TRUE(dev_o.CopyToHost(o.data(), o.size() * 2).IsOk());
      int64_t mismatches = 0;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t r = 0; r < L; ++r)
            for (int64_t c = 0; c < d; ++c)
              mismatches += a[static_cast<size_t>(((b * H + h) * L + r) * d + c)] !=
                            o[static_cast<size_t>(((b * L + r) * H + h) * d + c)];
      EXPECT_EQ(mismatches, 0) << "d " << d << " " << TileName(tile);
    }
  }
}

// Programmatic dependent launch lets a launch start while the one before it drains. A chain of
// four launches, each reading the previous one's output as its Q (poisoned until written),
// gives the same bits with and without it, on a full and a persistent grid: a launch that read
// its Q, or wrote its O, before the previous launch finished would read NaN or stale values
// (or overwrite an output still being read).
TEST(GpuHopperAttentionShapes, DependentLaunchesReadThePreviousOutput) {
  STOF_REQUIRE_HOPPER();
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  RestoreOverrides restore;
  auto mask = st::MakeMask("bigbird", 1000);
  ASSERT_TRUE(mask.IsOk());
  constexpr int kChain = 4;
  for (int64_t d : {64, 128}) {
    const Workload w = st::MhaWorkload(2, 3, 1000, d);
    const int64_t elements = w.batch * w.heads * w.seq_len * d;
    const st::MhaInputs in = st::RandomInputs(elements, 5 + d);
    st::DeviceMhaBuffers buf(*backend, elements);
    ASSERT_TRUE(buf.Ok());
    ASSERT_TRUE(buf.Upload(in).IsOk());
    std::vector<std::unique_ptr<st::DeviceBuffer>> x;
    for (int i = 0; i <= kChain; ++i) {
      x.push_back(std::make_unique<st::DeviceBuffer>(static_cast<size_t>(elements) * 2));
      ASSERT_TRUE(x.back()->Ok());
    }
    ASSERT_TRUE(x[0]->Upload(in.q).IsOk());
    for (const auto& tile : kHopperTiles) {
      if (!TileRuns(tile, d)) continue;
      for (int persistent : {0, 1}) {
        SCOPED_TRACE("d " + std::to_string(d) + " " + TileName(tile) + " persistent " +
                     std::to_string(persistent));
        std::vector<uint16_t> last[2];
        for (int pdl : {0, 1}) {
          k::HopperLaunchOverrides o;
          o.persistent = persistent;
          o.dependent_launch = pdl;
          k::SetHopperLaunchOverrides(o);
          for (int i = 1; i <= kChain; ++i) ASSERT_TRUE(x[static_cast<size_t>(i)]->Poison().IsOk());
          MhaCall call;
          call.workload = w;
          call.mask = &*mask;
          call.config = HopperConfig(tile.first, tile.second);
          call.k = buf.K(), call.v = buf.V();
          for (int i = 0; i < kChain; ++i) {
            call.q = x[static_cast<size_t>(i)]->Ptr();
            call.o = x[static_cast<size_t>(i) + 1]->Ptr();
            auto run = backend->RunMha(call);
            ASSERT_TRUE(run.IsOk()) << run.Message();
          }
          auto got = x[kChain]->Download(elements);
          ASSERT_TRUE(got.IsOk()) << got.Message();
          last[pdl] = std::move(*got);
        }
        int64_t non_finite = 0, mismatches = 0;
        for (size_t i = 0; i < last[1].size(); ++i) {
          non_finite += (last[1][i] & 0x7c00) == 0x7c00;
          mismatches += last[0][i] != last[1][i];
        }
        EXPECT_EQ(non_finite, 0);
        EXPECT_EQ(mismatches, 0);
      }
    }
  }
}

TEST(GpuHopperAttentionShapes, BadRequestsAreRefusedWithAMessage) {
  STOF_REQUIRE_HOPPER();
  CudaBackend* backend = st::SharedBackend();
  ASSERT_NE(backend, nullptr);
  auto mask = st::MakeMask("bigbird", 256);
  ASSERT_TRUE(mask.IsOk());
  const Workload w = st::MhaWorkload(1, 2, 256, 64);
  st::DeviceMhaBuffers buf(*backend, 1 * 2 * 256 * 64 + 8);
  ASSERT_TRUE(buf.Ok());
  MhaCall call;
  call.workload = w;
  call.mask = &*mask;
  call.config = HopperConfig(128, 128);
  call.q = static_cast<char*>(buf.Q()) + 2;  // one half off: not 16-byte aligned
  call.k = buf.K(), call.v = buf.V(), call.o = buf.O();
  auto s = backend->RunMha(call);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("16-byte aligned"), std::string::npos) << s.Message();
  call.q = buf.Q();
  call.q_strides = MhaStrides{256 * 64, 256 * 64 / 2, 68};  // row stride not a multiple of 8
  s = backend->RunMha(call);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("multiples of 8"), std::string::npos) << s.Message();
  call.q_strides = {};
  call.config.block_m = 64;
  s = backend->RunMha(call);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("BLOCK_M must be 128"), std::string::npos) << s.Message();
  call.workload.head_dim = 128;  // 64 x 128 exists at d 64 only
  call.config = HopperConfig(64, 64);
  call.config.block_n = 128;
  s = backend->RunMha(call);
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("BLOCK_N must be 64 with BLOCK_M 64 above head_dim 64"),
            std::string::npos)
      << s.Message();
}

// The kernels run on the tensor cores' warpgroup path: their SASS holds HGMMA instructions
// (cuobjdump on this test binary, which links the kernels statically; 36 kernels: 2 head
// sizes x 2 BLOCK_N x 3 schedules at BLOCK_M 128, the serial and split schedules of the three
// BLOCK_M 64 tiles, each in fp16 and bf16; the counts measured: docs/benchmarks.md, "Hopper
// kernel, step 7: heavy tiles split by default, bf16 (issue 15)"). The bf16 ones are counted
// apart (printed).
TEST(GpuHopperAttentionShapes, SassUsesWarpgroupMma) {
  STOF_REQUIRE_HOPPER();
  char exe[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  // HGMMA lines inside the HopperAttentionKernel functions (every schedule and size).
  const std::string cmd = "PATH=$PATH:/usr/local/cuda/bin cuobjdump --dump-sass '" +
                          std::string(exe) +
                          "' 2>/dev/null | awk '/Function :/ { f = ($0 ~ /HopperAttentionKernel/) }"
                          " f && /HGMMA/ { n++; if (/BF16/) b++ }"
                          " END { if (NR) print n + 0, b + 0 }'";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char line[64] = {0};
  const bool got = fgets(line, sizeof line, f) != nullptr;
  pclose(f);
  char* rest = nullptr;
  const long count = got ? std::strtol(line, &rest, 10) : 0;
  const long bf16 = got ? std::strtol(rest, nullptr, 10) : 0;
  if (!got) GTEST_SKIP() << "SKIPPED: cuobjdump gave no output";
  std::printf("[ hopper ] HGMMA instructions in the Hopper attention kernels: %ld (%ld BF16)\n",
              count, bf16);
  EXPECT_GT(count, 0);
}

}  // namespace
