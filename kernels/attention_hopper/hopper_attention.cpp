// Host side of the Hopper attention kernel (hopper_attention.h): its configurations, the
// device check, validation of a launch, the TMA tensor maps of q, k, v and o, and the table
// of the nine instantiations by (head size, BLOCK_M, BLOCK_N) (hopper_attention_d64.cu, _d128.cu,
// _d256.cu); a head_dim between them runs on the next one up (engine::HopperKernelHeadDim).
#include "kernels/attention_hopper/hopper_attention.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "engine/core/text_format.h"
#include "engine/select/hopper_select.h"
#include "engine/select/model_capabilities.h"
#include "kernels/attention_common/device_layout.h"
#include "kernels/attention_common/mha_operands.h"
#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/attention_common/hopper_chunk.h"
#include "kernels/common/hopper/device_check.h"
#include "kernels/common/hopper/tensor_map.h"
#include "kernels/cuda_check.h"

namespace stof::kernels {

namespace {

using detail::HopperAttentionTraits;

using engine::Str;

// The overrides; the environment sets their first value (STOF_HOPPER_ORDER=0 / 1,
// STOF_HOPPER_PERSISTENT=0 / 1: one CTA per item / as many CTAs as are co-resident,
// STOF_HOPPER_PDL=0 / 1: plain / programmatic dependent launch, STOF_HOPPER_SPLIT=0 / 1:
// whole tiles / heavy tiles split over CTAs, the default).
HopperLaunchOverrides& Overrides() {
  static HopperLaunchOverrides o = [] {
    HopperLaunchOverrides v;
    if (const char* e = std::getenv("STOF_HOPPER_ORDER")) v.order = std::atoi(e) == 0 ? 0 : 1;
    if (const char* e = std::getenv("STOF_HOPPER_PERSISTENT")) v.persistent = std::atoi(e) != 0;
    if (const char* e = std::getenv("STOF_HOPPER_PDL")) v.dependent_launch = std::atoi(e) != 0;
    if (const char* e = std::getenv("STOF_HOPPER_SPLIT")) v.split = std::atoi(e) != 0;
    return v;
  }();
  return o;
}

// The nine instantiated variants, in one table: calls f(HopperAttentionTraits<...>{}) for
// (head_dim, BLOCK_M, BLOCK_N) and returns its result, or `none` when there is no such variant.
// head_dim is any the kernel serves: its variant is the head size that holds it.
// Both the shared-memory size (checked on the CPU by the tests) and the launch go through it.
template <class R, class F>
R WithHopperVariant(int64_t head_dim, int64_t bm, int64_t bn, R none, F&& f) {
  const int64_t d = engine::HopperKernelHeadDim(head_dim);
  if (d == 64) {
    if (bm == 128 && bn == 64) return f(HopperAttentionTraits<64, 64, 128>{});
    if (bm == 128 && bn == 128) return f(HopperAttentionTraits<64, 128, 128>{});
    if (bm == 64 && bn == 64) return f(HopperAttentionTraits<64, 64, 64>{});
    if (bm == 64 && bn == 128) return f(HopperAttentionTraits<64, 128, 64>{});
  } else if (d == 128) {
    if (bm == 128 && bn == 64) return f(HopperAttentionTraits<128, 64, 128>{});
    if (bm == 128 && bn == 128) return f(HopperAttentionTraits<128, 128, 128>{});
    if (bm == 64 && bn == 64) return f(HopperAttentionTraits<128, 64, 64>{});
  } else if (d == 256) {
    if (bm == 128 && bn == 64) return f(HopperAttentionTraits<256, 64, 128>{});
    if (bm == 64 && bn == 64) return f(HopperAttentionTraits<256, 64, 64>{});
  }
  return none;
}

// The split's scratch for `heads_total` heads of `layout` on variant T: per consumer thread
// (128 per warpgroup) kOAcc / 4 float4 of O and one of (max, sum) per partial slot, and one
// arrival counter per consumer of each (head, Q tile).
struct SplitBytes {
  size_t counters = 0, partials = 0;
};
template <class T>
SplitBytes SplitScratchBytes(const DeviceBlockLayout& layout, int64_t heads_total) {
  const size_t per_slot = static_cast<size_t>(T::kConsumers) * 128 * (T::kOAcc / 4 + 1) * 16;
  const size_t heads = static_cast<size_t>(heads_total);
  return {heads * static_cast<size_t>(layout.BlockRows()) * T::kConsumers * 4,
          heads * static_cast<size_t>(layout.HopperSplitSlots()) * per_slot};
}

// True when a launch of `layout` splits heavy tiles (before the scratch is asked for): not
// forced off, the tile has a split kernel (T::kSplitBuilt), the launch runs heavy first, some
// tile is heavy, and (unless forced on) splitting pays: detail::SplitPays with the whole-tile
// kernel's resident CTAs (measured: docs/kernels-hopper.md, "Splitting heavy tiles' blocks").
template <class T>
bool SplitsHeavyTiles(const DeviceBlockLayout& layout, int split, int order, int64_t heads_total,
                      int sm_count) {
  if (split == 0 || !T::kSplitBuilt || order != 1 || layout.HopperSplitSlots() == 0) return false;
  return split == 1 || detail::SplitPays(layout.MaxTileBlocks(), layout.ValidBlocks(), heads_total,
                                         int64_t{sm_count} * T::kCtasPerSm);
}

// A split launch: heavy tiles' blocks over several CTAs (the layout's HopperUnits, merged by
// hopper_split.cuh) when SplitsHeavyTiles and the layout's scratch is large enough or can grow
// (not during a stream capture). Otherwise `p` is left as is: whole tiles.
template <class T>
engine::Status PrepareSplit(const DeviceBlockLayout& layout, int split, int sm_count, void* stream,
                            detail::HopperAttentionParams& p) {
  if (!SplitsHeavyTiles<T>(layout, split, p.order, p.heads_total, sm_count))
    return engine::Status::Ok();
  const int64_t items = layout.HopperUnitCount() * p.heads_total;
  if (items > int64_t{0x7fffffff}) return engine::Status::Ok();
  const SplitBytes bytes = SplitScratchBytes<T>(layout, p.heads_total);
  STOF_ASSIGN_OR_RETURN(const DeviceBlockLayout::SplitScratch scratch,
                        layout.SplitWorkspace(bytes.counters, bytes.partials, stream));
  if (scratch.partials == nullptr) return engine::Status::Ok();
  p.units = layout.HopperUnits();
  p.split_slots = layout.HopperSplitSlots();
  p.split_partials = scratch.partials;
  p.split_arrivals = scratch.arrivals;
  p.items = items;
  return engine::Status::Ok();
}

// Launch order. Heavy first across heads starts the longest tiles of every head in the first
// wave, but spreads a head's tiles over the whole launch, so K and V are re-read from DRAM
// once they no longer fit in L2: heavy first won where K and V fit in half the L2 and lost up
// to 1.5x beyond (docs/kernels-hopper.md, "Design", the launch orders side by side). So heavy
// first (1) only when all K and V fit in half the L2. STOF_HOPPER_ORDER=0 / 1 forces one
// (experiments).
// A launch of one block row per head (a decode step) has one order only, and takes heavy first
// so that its tiles may split (PrepareSplit).
engine::Expected<int> LaunchOrder(const engine::Workload& w, const DeviceBlockLayout& layout,
                                  const HopperLaunchOverrides& forced, int device) {
  if (forced.order >= 0) return forced.order;
  if (layout.BlockRows() == 1) return 1;
  int l2_bytes = 0;
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  const double kv_bytes =
      4.0 * static_cast<double>(w.batch * w.KvHeads() * w.seq_len * w.head_dim);
  return 2 * kv_bytes <= static_cast<double>(l2_bytes) ? 1 : 0;
}

// The shape checks of a launch: the workload against the layout's query and key lengths and
// its packing (engine/mask/gqa_pack.h), which must be the one ChooseGqaPacking gives this
// workload at the layout's BLOCK_M or none.
engine::Status CheckHopperShape(const engine::Workload& w, const DeviceBlockLayout& layout,
                                const std::string& what) {
  STOF_RETURN_IF_ERROR(CheckFusedMhaWorkload(w, layout.SeqLen(), what, /*bf16_too=*/true,
                                             /*grouped_too=*/true));
  // Fewer keys than the layout's (a KV cache's plan for its capacity): the keys past seq_len
  // are masked by the key limit, and the K / V maps end there.
  if (layout.KeyLen() < w.seq_len)
    return engine::MakeError(what + "layout: built for L_k = " + Str(layout.KeyLen()) +
                             ", workload.seq_len is " + Str(w.seq_len));
  const engine::GqaPacking& packing = layout.Packing();
  if (packing.Packed() &&
      packing != engine::ChooseGqaPacking(w.heads, w.KvHeads(), w.QLen(), layout.BlockM()))
    return engine::MakeError(what + "layout: packed for " + Str(packing.group) +
                             " query heads per key/value head, the workload has " +
                             Str(w.heads) + " over " + Str(w.KvHeads()));
  return engine::Status::Ok();
}

// The device's SM count, asked once per device (every launch needs it for the split rule).
engine::Expected<int> SmCount(int device) {
  static std::atomic<int> known[64] = {};
  const bool cached = device >= 0 && device < 64;
  if (cached) {
    if (const int sms = known[device].load(std::memory_order_acquire); sms > 0) return sms;
  }
  int sms = 0;
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (cached) known[device].store(sms, std::memory_order_release);
  return sms;
}

// The Hopper kernel's precondition on per batch row key limits (MhaKeyLimits): 8-byte aligned
// arrays, and key bits covering L_k rounded up to 128 keys (a block reads its whole words).
engine::Status CheckKeyLimits(const engine::Workload& w, const MhaKeyLimits& keys,
                              const std::string& what) {
  if (keys.ranges != nullptr && (reinterpret_cast<uintptr_t>(keys.ranges) & 7u) != 0)
    return engine::MakeError(what + "key_ranges: must be 8-byte aligned (int32 pairs)");
  if (keys.bits == nullptr) return engine::Status::Ok();
  const int64_t need = (w.seq_len + 127) / 128 * 2;
  if ((reinterpret_cast<uintptr_t>(keys.bits) & 7u) != 0)
    return engine::MakeError(what + "key bits: must be 8-byte aligned (64-bit words)");
  if (keys.words < need || keys.words > int64_t{0x7fffffff})
    return engine::MakeError(what + "key bits: " + Str(keys.words) + " words a batch row, " +
                             "expected at least " + Str(need) + " (L_k = " + Str(w.seq_len) +
                             " rounded up to 128, over 64)");
  return engine::Status::Ok();
}

// The operands of a launch and their strides (q, k / v, o).
struct HopperOperands {
  const void* q;
  const void* k;
  const void* v;
  const void* o;
};
struct HopperStrides {
  engine::MhaStrides q, kv, o;
};

// The four TMA tensor maps of a launch.
engine::Expected<detail::HopperTensorMaps> EncodeHopperMaps(const engine::Workload& w,
                                                           const DeviceBlockLayout& layout,
                                                           const HopperOperands& in,
                                                           const HopperStrides& strides,
                                                           const std::string& what) {
  const bool bf16 = w.dtype == engine::DType::kBF16;
  const engine::GqaPacking& packing = layout.Packing();
  // K and V: [B][H_kv][L_k][d] with the caller's strides, boxes of BLOCK_N rows. Q and O:
  // [B][H_kv][group][L_q][d] (query head h = kv head x group + g), boxes of BLOCK_M (Q) or 64
  // (O: one consumer warpgroup's rows) rows of one head, or, packed, of Lp rows x the heads
  // that fill them (RowCoords, hopper_scheduler.cuh).
  const int64_t group = w.GroupSize();
  const auto map = [&](const void* base, const engine::MhaStrides& s, MhaOperand operand,
                       const char* name, int box_rows, CUtensorMap* out) -> engine::Status {
    auto st = ResolveOperandStrides(s, w, operand, what, name);
    if (!st.IsOk()) return st.ToStatus();
    hopper::TensorView view;
    view.base = base;
    view.bf16 = bf16;
    int box[hopper::kMaxTensorRank] = {64, box_rows, 1, 1, 1};
    if (operand == MhaOperand::kKeyValue) {
      view.rank = 4;
      const int64_t extent[4] = {w.head_dim, w.seq_len, w.KvHeads(), w.batch};
      const int64_t stride[4] = {1, st->row_stride, st->head_stride, st->batch_stride};
      std::copy(extent, extent + 4, view.extent);
      std::copy(stride, stride + 4, view.stride);
    } else {
      view.rank = 5;
      const int64_t extent[5] = {w.head_dim, w.QLen(), group, w.KvHeads(), w.batch};
      const int64_t stride[5] = {1, st->row_stride, st->head_stride, st->head_stride * group,
                                 st->batch_stride};
      std::copy(extent, extent + 5, view.extent);
      std::copy(stride, stride + 5, view.stride);
      if (packing.Packed()) {
        box[1] = static_cast<int>(packing.rows);
        box[2] = static_cast<int>(box_rows / packing.rows);
      }
    }
    return hopper::EncodeTensorMap(view, box, (what + name).c_str(), out);
  };
  detail::HopperTensorMaps maps;
  const int box_n = static_cast<int>(layout.BlockN());
  STOF_RETURN_IF_ERROR(map(in.q, strides.q, MhaOperand::kQuery, "q",
                           static_cast<int>(layout.BlockM()), &maps.q));
  STOF_RETURN_IF_ERROR(map(in.k, strides.kv, MhaOperand::kKeyValue, "k", box_n, &maps.k));
  STOF_RETURN_IF_ERROR(map(in.v, strides.kv, MhaOperand::kKeyValue, "v", box_n, &maps.v));
  STOF_RETURN_IF_ERROR(map(in.o, strides.o, MhaOperand::kQuery, "o", 64, &maps.o));
  return maps;
}

}  // namespace

void SetHopperLaunchOverrides(const HopperLaunchOverrides& overrides) { Overrides() = overrides; }
HopperLaunchOverrides GetHopperLaunchOverrides() { return Overrides(); }

size_t HopperAttentionSmemBytes(int64_t head_dim, int64_t block_m, int64_t block_n) {
  return WithHopperVariant(head_dim, block_m, block_n, size_t{0},
                           [](auto traits) -> size_t { return decltype(traits)::kSmemBytes; });
}

int HopperAttentionCtasPerSm(int64_t head_dim, int64_t block_m, int64_t block_n) {
  return WithHopperVariant(head_dim, block_m, block_n, 0,
                           [](auto traits) { return decltype(traits)::kCtasPerSm; });
}

engine::Status CheckHopperAttentionConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                          int64_t num_warps, int64_t smem_limit_bytes) {
  // The rules and their messages are the engine's (its model of this kernel runs the same);
  // the shared memory per variant is this kernel's own.
  return engine::CheckHopperConfigRules(head_dim, block_m, block_n, num_warps, smem_limit_bytes,
                                        HopperAttentionSmemBytes);
}

std::vector<BlockSparseConfig> SupportedHopperAttentionConfigs(int64_t head_dim,
                                                               int64_t smem_limit_bytes) {
  std::vector<BlockSparseConfig> out;
  for (BlockSparseConfig c : {BlockSparseConfig{128, 64, kHopperAttentionWarps},
                              BlockSparseConfig{128, 128, kHopperAttentionWarps},
                              BlockSparseConfig{64, 64, kHopperAttentionWarps64},
                              BlockSparseConfig{64, 128, kHopperAttentionWarps64}})
    if (CheckHopperAttentionConfig(head_dim, c.block_m, c.block_n, c.num_warps, smem_limit_bytes)
            .IsOk())
      out.push_back(c);
  return out;
}

engine::Status CheckHopperDevice() {
  auto ok = hopper::CheckSm90aDevice("block-wise MHA (Hopper kernel): ");
  if (ok.IsOk()) return ok;
  return engine::MakeError(ok.Message() + "; use num_warps <= 8 for the portable kernel");
}

engine::Status LaunchHopperAttention(const engine::Workload& w, const DeviceBlockLayout& layout,
                                     const void* q, const void* k, const void* v, void* o,
                                     void* stream, const engine::MhaStrides& q_strides,
                                     const engine::MhaStrides& kv_strides,
                                     const engine::MhaStrides& o_strides, float scale,
                                     const MhaKeyLimits& keys) {
  const std::string what = "block-wise MHA (Hopper kernel): ";
  STOF_RETURN_IF_ERROR(CheckKeyLimits(w, keys, what));
  STOF_RETURN_IF_ERROR(CheckHopperShape(w, layout, what));
  const bool bf16 = w.dtype == engine::DType::kBF16;
  auto dev = QueryLaunchDevice();
  if (!dev.IsOk()) return dev.ToStatus();
  const int64_t warps = layout.BlockM() == 64 ? kHopperAttentionWarps64 : kHopperAttentionWarps;
  STOF_RETURN_IF_ERROR(CheckHopperAttentionConfig(w.head_dim, layout.BlockM(), layout.BlockN(),
                                                  warps, dev->smem_limit));
  STOF_RETURN_IF_ERROR(CheckHopperDevice());
  if (q == nullptr || k == nullptr || v == nullptr || o == nullptr)
    return engine::MakeError(what + "q, k, v and o must not be null");
  // Work items: a Q tile of one query head, or (packed) of one key/value head's group.
  const engine::GqaPacking& packing = layout.Packing();
  const int64_t item_heads = packing.Packed() ? w.KvHeads() : w.heads;
  const int64_t grid = layout.BlockRows() * w.batch * item_heads;
  if (grid > int64_t{0x7fffffff})
    return engine::MakeError(what + "block_rows * batch * heads = " + Str(grid) +
                             " exceeds the grid limit 2^31 - 1");

  if (layout.PatternItems() != 0 && layout.PatternItems() != w.batch * item_heads)
    return engine::MakeError(what + "layout: its masks per batch row / head were prepared for " +
                             Str(layout.PatternItems()) + " (batch, head) pairs, the workload "
                             "has " + Str(w.batch) + " x " + Str(item_heads));

  detail::HopperAttentionParams p;
  p.pattern_of = layout.ItemPatterns();
  p.part_row_ptr = layout.PartRowPtr();
  p.part_col_idx = layout.PartColIdx();
  p.full_row_ptr = layout.FullRowPtr();
  p.full_col_idx = layout.FullColIdx();
  p.part_bitmaps = layout.PartBitmaps();
  p.seq_len = static_cast<int>(w.seq_len);
  p.q_tiles = static_cast<int>(layout.BlockRows());
  p.tile_order = layout.HeavyFirstRows();
  p.work_counter = layout.WorkCounter();
  p.heads_total = static_cast<int>(w.batch * item_heads);
  const HopperLaunchOverrides forced = GetHopperLaunchOverrides();
  STOF_ASSIGN_OR_RETURN(p.order, LaunchOrder(w, layout, forced, dev->device));
  p.heads = static_cast<int>(item_heads);
  p.kv_group = static_cast<int>(w.GroupSize());
  p.pack_rows = static_cast<int>(packing.rows);
  p.q_len = static_cast<int>(w.QLen());
  p.key_ranges = static_cast<const int32_t*>(keys.ranges);
  p.key_bits = static_cast<const uint64_t*>(keys.bits);
  p.key_words = static_cast<int>(keys.words);
  p.items = grid;
  // A persistent grid (one wave of CTAs taking items from an atomic counter) rather than one
  // CTA per item: a CTA's next item's Q, K and V load while it stores the last one's output
  // (measured: docs/kernels-hopper.md, "Persistent grid").
  const bool persistent = forced.persistent >= 0 ? forced.persistent == 1 : true;
  p.max_ctas = forced.max_ctas > 0 ? forced.max_ctas : persistent ? -1 : 0;
  // Programmatic dependent launch: a launch's CTAs start, and resolve their first work item,
  // while the previous kernel on the stream drains (kernels/common/hopper/grid_dependency.cuh).
  // On by default (-1) (measured: docs/kernels-hopper.md, "Starting before the previous kernel
  // ends").
  p.dependent_launch = forced.dependent_launch;
  auto scale_log2 = ScoreScaleLog2(scale, w.head_dim, what);
  if (!scale_log2.IsOk()) return scale_log2.ToStatus();
  p.scale_log2 = *scale_log2;

  STOF_ASSIGN_OR_RETURN(
      const detail::HopperTensorMaps maps,
      EncodeHopperMaps(w, layout, {q, k, v, o}, {q_strides, kv_strides, o_strides}, what));

  // Heavy tiles split over CTAs where the layout has some and it pays (PrepareSplit).
  STOF_ASSIGN_OR_RETURN(const int sms, SmCount(dev->device));
  const auto launch = [&](auto traits) -> engine::Status {
    using T = decltype(traits);
    detail::HopperAttentionParams run = p;
    STOF_RETURN_IF_ERROR(PrepareSplit<T>(layout, forced.split, sms, stream, run));
    if (bf16)
      return detail::LaunchHopperAttentionVariant<T::kHeadDim, T::kBlockN, T::kBlockM, true>(
          run, maps, dev->device, stream);
    return detail::LaunchHopperAttentionVariant<T::kHeadDim, T::kBlockN, T::kBlockM, false>(
        run, maps, dev->device, stream);
  };
  // CheckHopperAttentionConfig above accepted the variant, so the table has it.
  return WithHopperVariant(w.head_dim, layout.BlockM(), layout.BlockN(),
                           engine::Status(engine::MakeError(what + "no such variant")), launch);
}

engine::Expected<std::unique_ptr<DeviceBlockLayout>> PrepareHopperLayout(
    const engine::Mask& mask, const engine::Workload& w, int64_t block_m, int64_t block_n) {
  const engine::GqaPacking packing =
      engine::ChooseGqaPacking(w.heads, w.KvHeads(), w.QLen(), block_m);
  auto dev = QueryLaunchDevice();
  if (!dev.IsOk()) return dev.ToStatus();
  STOF_ASSIGN_OR_RETURN(const int sms, SmCount(dev->device));
  const int64_t heads_total = w.batch * (packing.Packed() ? w.KvHeads() : w.heads);
  // The split kernels' CTAs per SM (their traits): the units that fill the GPU when they run.
  const int per_sm = WithHopperVariant(w.head_dim, block_m, block_n, 0, [](auto traits) {
    using T = decltype(traits);
    if constexpr (T::kSplitBuilt) {
      return detail::HopperAttentionTraits<T::kHeadDim, T::kBlockN, T::kBlockM, false,
                                           true>::kCtasPerSm;
    } else {
      return 0;
    }
  });
  const double fill_units =
      static_cast<double>(sms) * per_sm / static_cast<double>(heads_total);
  STOF_ASSIGN_OR_RETURN(
      std::unique_ptr<DeviceBlockLayout> layout,
      DeviceBlockLayout::Create(mask, block_m, block_n, 0, packing, fill_units));
  STOF_RETURN_IF_ERROR(ReserveHopperSplitWorkspace(w, *layout));
  return layout;
}

engine::Status ReserveHopperSplitWorkspace(const engine::Workload& w,
                                           const DeviceBlockLayout& layout) {
  if (layout.HopperSplitSlots() == 0) return engine::Status::Ok();
  auto dev = QueryLaunchDevice();
  if (!dev.IsOk()) return dev.ToStatus();
  const HopperLaunchOverrides forced = GetHopperLaunchOverrides();
  STOF_ASSIGN_OR_RETURN(const int order, LaunchOrder(w, layout, forced, dev->device));
  STOF_ASSIGN_OR_RETURN(const int sms, SmCount(dev->device));
  const int64_t heads_total = w.batch * (layout.Packing().Packed() ? w.KvHeads() : w.heads);
  const auto reserve = [&](auto traits) -> engine::Status {
    using T = decltype(traits);
    if (!SplitsHeavyTiles<T>(layout, forced.split, order, heads_total, sms))
      return engine::Status::Ok();
    const SplitBytes bytes = SplitScratchBytes<T>(layout, heads_total);
    return layout.SplitWorkspace(bytes.counters, bytes.partials, nullptr).ToStatus();
  };
  return WithHopperVariant(w.head_dim, layout.BlockM(), layout.BlockN(), engine::Status::Ok(),
                           reserve);
}

}  // namespace stof::kernels
