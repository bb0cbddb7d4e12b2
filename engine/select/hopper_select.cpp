// EstimateHopperTile (hopper_select.h): valid-block elements of the mask at the portable tile
// and at 128 x 64 / 128 x 128, weighed by per-element rates measured on an H100.
#include "engine/select/hopper_select.h"

#include "engine/layout/block_layout.h"

namespace stof::engine {

namespace {

// Elements computed per unit time, relative to the portable 64 x 64, 4-warp kernel, by head size
// and Hopper BLOCK_N. Fitted on the paper grid (96 configurations, CUDA graphs, H100,
// 2026-11-24, docs/benchmarks.md "Hopper kernel"): the per-configuration rate of 128 x 128 over
// 64 x 64 ran 0.94-3.4 at d 64 (median about 1.65; higher at batch 1) and 1.25-2.8 at d 128
// (about 2.2); the constants are the ones that maximise the geometric-mean speedup of the
// choice over FlexAttention on that grid (in-sample: d 64 0.923 against 0.958 for the best
// of the two per configuration, d 128 1.382, equal to it). 128 x 64 ran at 0.78 (d 64) and
// 0.91 (d 128) of 128 x 128's rate on dense L4096 B4 H12 (`stof bench mha`).
double HopperRate(int64_t head_dim, int64_t block_n) {
  const double rate128 = head_dim == 64 ? 1.65 : 2.2;
  if (block_n == 128) return rate128;
  return rate128 * (head_dim == 64 ? 0.78 : 0.91);
}

Expected<double> TileElements(const Mask& mask, int64_t bm, int64_t bn) {
  auto layout = BlockLayout::Build(mask, bm, bn);
  if (!layout.IsOk()) return Error{layout.Message()};
  return static_cast<double>(layout->LoadColIdx().size()) * static_cast<double>(bm * bn);
}

}  // namespace

Expected<HopperTileEstimate> EstimateHopperTile(const Mask& mask, const Workload& workload,
                                                const DeviceSpec& device,
                                                const MhaConfig& portable) {
  if (mask.Rows() != workload.seq_len || mask.Cols() != workload.seq_len)
    return Error{"hopper tile estimate: mask: expected " + std::to_string(workload.seq_len) +
                 " x " + std::to_string(workload.seq_len) + ", got " +
                 std::to_string(mask.Rows()) + " x " + std::to_string(mask.Cols())};
  HopperTileEstimate e;
  e.portable = portable;
  if (device.cc_major != 9 || device.cc_minor != 0) {
    e.why_not = "the device is not sm_90 (compute capability " + std::to_string(device.cc_major) +
                "." + std::to_string(device.cc_minor) + ")";
  } else if (workload.head_dim != 64 && workload.head_dim != 128) {
    e.why_not = "head_dim " + std::to_string(workload.head_dim) + " (the Hopper kernel: 64, 128)";
  } else if (portable.kernel != MhaKernel::kBlockWise) {
    e.why_not = "the portable choice is row-wise";
  }
  if (!e.why_not.empty()) return e;
  e.eligible = true;
  auto portable_elements = TileElements(mask, portable.block_m, portable.block_n);
  if (!portable_elements.IsOk()) return Error{portable_elements.Message()};
  e.portable_elements = *portable_elements;
  double best_time = -1;
  for (int64_t bn : {128, 64}) {
    auto elements = TileElements(mask, 128, bn);
    if (!elements.IsOk()) return Error{elements.Message()};
    const double time = *elements / HopperRate(workload.head_dim, bn);
    if (best_time < 0 || time < best_time) {
      best_time = time;
      e.hopper_elements = *elements;
      e.hopper = MhaConfig{MhaKernel::kBlockWise, 128, bn, kHopperMhaWarps};
    }
  }
  e.ratio = e.portable_elements > 0 ? best_time / e.portable_elements : 1.0;
  e.prefer_hopper = e.portable_elements > 0 && e.ratio < 1.0;
  return e;
}

Expected<double> HopperTimeRatio(const Mask& mask, const Workload& workload, int64_t block_n,
                                 const MhaConfig& portable) {
  if (block_n != 64 && block_n != 128)
    return Error{"hopper time ratio: block_n: expected 64 or 128, got " +
                 std::to_string(block_n)};
  if (workload.head_dim != 64 && workload.head_dim != 128)
    return Error{"hopper time ratio: head_dim: expected 64 or 128, got " +
                 std::to_string(workload.head_dim)};
  if (mask.Rows() != workload.seq_len || mask.Cols() != workload.seq_len)
    return Error{"hopper time ratio: mask: expected " + std::to_string(workload.seq_len) +
                 " x " + std::to_string(workload.seq_len)};
  auto portable_elements = TileElements(mask, portable.block_m, portable.block_n);
  if (!portable_elements.IsOk()) return Error{portable_elements.Message()};
  auto elements = TileElements(mask, 128, block_n);
  if (!elements.IsOk()) return Error{elements.Message()};
  if (*portable_elements <= 0) return 1.0;
  return *elements / HopperRate(workload.head_dim, block_n) / *portable_elements;
}

}  // namespace stof::engine
