// EstimateHopperTile (hopper_select.h): valid-block elements of the mask at the portable tile
// and at the Hopper tiles (64 x 64, 128 x 64, 128 x 128), weighed by per-element rates
// measured on an H100.
#include "engine/select/hopper_select.h"

#include <cmath>

#include "engine/layout/block_layout.h"
#include "engine/mask/gqa_pack.h"

namespace stof::engine {

namespace {

// The Hopper configurations and their elements computed per unit time, relative to the
// portable 64 x 64, 4-warp kernel, by head size (how each was fitted, on the H100:
// docs/kernels-hopper.md, "The automatic choice on sm_90"). 128 x 128: fitted on the paper
// grid (its rate over 64 x 64 ran 0.94-3.4 at d 64, median about 1.65, and 1.25-2.8 at d 128,
// about 2.2); 128 x 64 at 0.78 (d 64) and 0.91 (d 128) of 128 x 128's rate on a dense mask.
// 64 x 64 with 5 warps ran 0.96-0.97x 128 x 128's rate at d 64 from L 2048 on and about 0.84x
// at d 128: d 64 1.65 (a tie goes to the finer tile), d 128 1.85. 64 x 128 with 5 warps (d 64
// only) ran about 1.05x the rate of 64 x 64 x 5: 1.73. 0: no such kernel at that head size.
// The 64-row kernels got faster since (more CTAs per SM), all tiles alike at d 64, so the rates
// stand.
// d 256 (the kernel of head sizes 136-256): not fitted yet. There is no portable kernel to
// compare with, so only the two tiles' order matters: 128 x 64 (two consumer warpgroups) at
// d 128's rate, 64 x 64 (one warpgroup, one CTA per SM) at 0.6 of it, so dense prefill takes
// the 128-row tile and a packed decode step, half the elements at 64 rows, the 64-row one.
// ctas: CTAs per SM of the kernel (its __launch_bounds__ and shared memory,
// kernels/attention_hopper/hopper_attention_params.h), for the wave estimate below; the test
// HopperConfig.TileModelCountsTheKernelsCtasPerSm ties the two.
struct HopperTile {
  int64_t block_m, block_n, num_warps;
  double rate[3];  // by kernel head size: d 64, 128, 256 (HeadSizeSlot); 0: no such kernel
  int ctas[3];
};
constexpr HopperTile kHopperTiles[] = {
    {64, 64, kHopperMhaWarps64, {1.65, 1.85, 2.2 * 0.91 * 0.6}, {4, 3, 1}},  // first: wins ties
    {64, 128, kHopperMhaWarps64, {1.73, 0, 0}, {3, 0, 0}},
    {128, 128, kHopperMhaWarps, {1.65, 2.2, 0}, {1, 1, 0}},
    {128, 64, kHopperMhaWarps, {1.65 * 0.78, 2.2 * 0.91, 2.2 * 0.91}, {1, 1, 1}},
};

const HopperTile* FindTile(int64_t block_m, int64_t block_n) {
  for (const HopperTile& t : kHopperTiles)
    if (t.block_m == block_m && t.block_n == block_n) return &t;
  return nullptr;
}

// The slot of the head size the kernel computes head_dim at (HopperKernelHeadDim) in a tile's
// rate / ctas arrays; -1: none.
int HeadSizeSlot(int64_t head_dim) {
  switch (HopperKernelHeadDim(head_dim)) {
    case 64: return 0;
    case 128: return 1;
    case 256: return 2;
    default: return -1;
  }
}
double Rate(const HopperTile& t, int64_t head_dim) {
  const int slot = HeadSizeSlot(head_dim);
  return slot < 0 ? 0 : t.rate[slot];
}
int CtasPerSm(const HopperTile& t, int64_t head_dim) {
  const int slot = HeadSizeSlot(head_dim);
  return slot < 0 ? 0 : t.ctas[slot];
}

// The layout a tile's launch uses: the mask itself, or its packed form where the tile packs
// the query heads of a key/value head (engine/mask/gqa_pack.h), with the heads its work items
// are counted over.
struct TileLayout {
  BlockLayout layout;
  int64_t item_heads = 0;
};
Expected<TileLayout> BuildTileLayout(const Mask& mask, const Workload& w, int64_t bm,
                                     int64_t bn) {
  const GqaPacking packing = ChooseGqaPacking(w.heads, w.KvHeads(), w.QLen(), bm);
  TileLayout t;
  t.item_heads = packing.Packed() ? w.KvHeads() : w.heads;
  if (packing.Packed()) {
    STOF_ASSIGN_OR_RETURN(const Mask packed, PackGqaMask(mask, packing));
    STOF_ASSIGN_OR_RETURN(t.layout, BlockLayout::Build(packed, bm, bn));
  } else {
    STOF_ASSIGN_OR_RETURN(t.layout, BlockLayout::Build(mask, bm, bn));
  }
  return t;
}

// A grid that spills a little past what the GPU holds at once pays for a tail: beyond one wave
// (CTAs > SMs x CTAs per SM) the persistent grid hands items out as CTAs finish, so the
// busiest SM runs ceil(I) of the I = CTAs / SMs items per SM: the factor ceil(I) / I; 1 when
// every CTA is resident or without an SM count. On the paper grid a resident 64 x 64 x 5 grid
// ran about 1.2x faster than a 64 x 128 grid past one wave; charging whole waves of CTAs per SM
// instead moved rows to tiles that ran 3-13 % slower (docs/kernels-hopper.md, "The automatic
// choice on sm_90").
double WaveFactor(const HopperTile& t, const TileLayout& l, const Workload& w,
                  const DeviceSpec& device) {
  const int per_sm = CtasPerSm(t, w.head_dim);
  if (device.sm_count <= 0 || per_sm <= 0) return 1.0;
  const double ctas = static_cast<double>(l.layout.BlockRows()) *
                      static_cast<double>(w.batch * l.item_heads);
  const double sms = static_cast<double>(device.sm_count);
  if (ctas <= sms * per_sm) return 1.0;
  const double per_sm_items = ctas / sms;
  return std::ceil(per_sm_items) / per_sm_items;
}

// Elements of the valid blocks per query head (packed: per query head of the group, so that
// every tile's count compares alike).
double Elements(const TileLayout& l, const Workload& w) {
  const double per_item_head = static_cast<double>(l.layout.LoadColIdx().size()) *
                               static_cast<double>(l.layout.BlockM() * l.layout.BlockN());
  return per_item_head * static_cast<double>(l.item_heads) / static_cast<double>(w.heads);
}

Expected<double> TileElements(const Mask& mask, int64_t bm, int64_t bn) {
  STOF_ASSIGN_OR_RETURN(auto layout, BlockLayout::Build(mask, bm, bn));
  return static_cast<double>(layout.LoadColIdx().size()) * static_cast<double>(bm * bn);
}

Status CheckMaskShape(const Mask& mask, const Workload& w, const std::string& what) {
  if (mask.Rows() == w.QLen() && mask.Cols() == w.seq_len) return Status::Ok();
  return Error{what + ": mask: expected " + std::to_string(w.QLen()) + " x " +
               std::to_string(w.seq_len) + ", got " + std::to_string(mask.Rows()) + " x " +
               std::to_string(mask.Cols())};
}

// The Hopper tile of the least estimated time (elements over rate, a partial last wave
// counted), with its elements and its time before the wave factor.
struct BestTile {
  MhaConfig config;
  double elements = 0, rate_time = 0;
};
Expected<BestTile> FastestHopperTile(const Mask& mask, const Workload& w,
                                     const DeviceSpec& device) {
  BestTile best;
  double best_time = -1;
  for (const HopperTile& t : kHopperTiles) {
    if (Rate(t, w.head_dim) <= 0) continue;
    STOF_ASSIGN_OR_RETURN(const TileLayout l, BuildTileLayout(mask, w, t.block_m, t.block_n));
    const double elements = Elements(l, w);
    const double rate_time = elements / Rate(t, w.head_dim);
    const double time = rate_time * WaveFactor(t, l, w, device);
    if (best_time < 0 || time < best_time) {
      best_time = time;
      best = {MhaConfig{MhaKernel::kBlockWise, t.block_m, t.block_n, t.num_warps}, elements,
              rate_time};
    }
  }
  return best;
}

std::string WhyNotHopper(const DeviceSpec& device, const Workload& w) {
  if (device.cc_major != 9 || device.cc_minor != 0)
    return "the device is not sm_90 (compute capability " + std::to_string(device.cc_major) +
           "." + std::to_string(device.cc_minor) + ")";
  if (HopperKernelHeadDim(w.head_dim) == 0)
    return "head_dim " + std::to_string(w.head_dim) +
           " (the Hopper kernel: multiples of 8 from 8 to 256)";
  return "";
}

}  // namespace

std::string HopperOnlyShape(const Workload& w) {
  const std::string d = "head_dim " + std::to_string(w.head_dim);
  if (w.IsSquareMha()) return d;
  return std::to_string(w.heads) + " query heads over " + std::to_string(w.KvHeads()) +
         " key/value heads, q_len " + std::to_string(w.QLen()) + " over seq_len " +
         std::to_string(w.seq_len) + (w.head_dim == 64 || w.head_dim == 128 ? "" : ", " + d);
}

std::string HopperShapeNote(const Workload& w, const MhaConfig& config,
                            const GqaPacking& packing) {
  const std::string tile = MhaConfigText(config.block_m, config.block_n, config.num_warps);
  const std::string packed =
      packing.Packed() ? ", " + std::to_string(packing.group) + " query heads x " +
                             std::to_string(packing.rows) + (packing.rows == 1 ? " row" : " rows") +
                             " per tile (packed GQA)"
                       : std::string();
  const char* why = w.IsSquareMha()
                        ? " (Eq. 1 / Eq. 2 choose between the mma.sync kernels, which take "
                          "head_dim 64 and 128; their pick is not used)"
                        : " (Eq. 1 / Eq. 2 describe square MHA and are not evaluated)";
  return HopperOnlyShape(w) + ": the Hopper kernel " + tile + packed + why;
}

int64_t HopperKernelHeadDim(int64_t head_dim) {
  if (head_dim < 8 || head_dim > 256 || head_dim % 8 != 0) return 0;
  return head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 256;
}

Expected<HopperTileEstimate> EstimateHopperTile(const Mask& mask, const Workload& workload,
                                                const DeviceSpec& device,
                                                const MhaConfig& portable) {
  STOF_RETURN_IF_ERROR(CheckMaskShape(mask, workload, "hopper tile estimate"));
  HopperTileEstimate e;
  e.portable = portable;
  e.why_not = WhyNotHopper(device, workload);
  if (e.why_not.empty() && portable.kernel != MhaKernel::kBlockWise)
    e.why_not = "the portable choice is row-wise";
  if (!e.why_not.empty()) return e;
  e.eligible = true;
  auto portable_elements = TileElements(mask, portable.block_m, portable.block_n);
  if (!portable_elements.IsOk()) return Error{portable_elements.Message()};
  e.portable_elements = *portable_elements;
  // The ratio against the portable tiling: elements over rate, as the rates were fitted.
  STOF_ASSIGN_OR_RETURN(const BestTile best, FastestHopperTile(mask, workload, device));
  e.hopper = best.config;
  e.hopper_elements = best.elements;
  e.ratio = e.portable_elements > 0 ? best.rate_time / e.portable_elements : 1.0;
  e.prefer_hopper = e.portable_elements > 0 && e.ratio < 1.0;
  return e;
}

Expected<HopperShapeChoice> ChooseHopperTileForShape(const Mask& mask, const Workload& workload,
                                                     const DeviceSpec& device) {
  STOF_RETURN_IF_ERROR(CheckMaskShape(mask, workload, "hopper tile choice"));
  const std::string why_not = WhyNotHopper(device, workload);
  if (!why_not.empty())
    return Error{"workload: " + HopperOnlyShape(workload) +
                 " runs on the Hopper kernel only, and here " + why_not};
  STOF_ASSIGN_OR_RETURN(const BestTile best, FastestHopperTile(mask, workload, device));
  HopperShapeChoice c;
  c.config = best.config;
  c.elements = best.elements;
  c.packing = ChooseGqaPacking(workload.heads, workload.KvHeads(), workload.QLen(),
                               best.config.block_m);
  return c;
}

int HopperTileCtasPerSm(int64_t head_dim, int64_t block_m, int64_t block_n) {
  const HopperTile* tile = FindTile(block_m, block_n);
  if (tile == nullptr || Rate(*tile, head_dim) <= 0) return 0;
  return CtasPerSm(*tile, head_dim);
}

Expected<double> HopperTimeRatio(const Mask& mask, const Workload& workload, int64_t block_m,
                                 int64_t block_n, const MhaConfig& portable) {
  const HopperTile* tile = FindTile(block_m, block_n);
  if (tile == nullptr)
    return Error{"hopper time ratio: block_m x block_n: expected 128 x 64, 128 x 128, 64 x 64 "
                 "or 64 x 128, got " + std::to_string(block_m) + " x " + std::to_string(block_n)};
  if (HopperKernelHeadDim(workload.head_dim) == 0)
    return Error{"hopper time ratio: head_dim: expected a multiple of 8 from 8 to 256, got " +
                 std::to_string(workload.head_dim)};
  STOF_RETURN_IF_ERROR(CheckMaskShape(mask, workload, "hopper time ratio"));
  STOF_ASSIGN_OR_RETURN(auto portable_elements,
                        TileElements(mask, portable.block_m, portable.block_n));
  if (Rate(*tile, workload.head_dim) <= 0)
    return Error{"hopper time ratio: the Hopper kernel has no " + std::to_string(block_m) + " x " +
                 std::to_string(block_n) + " tile at head_dim " +
                 std::to_string(workload.head_dim)};
  STOF_ASSIGN_OR_RETURN(auto elements, TileElements(mask, block_m, block_n));
  if (portable_elements <= 0) return 1.0;
  return elements / Rate(*tile, workload.head_dim) / portable_elements;
}

}  // namespace stof::engine
