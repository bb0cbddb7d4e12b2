// EstimateHopperTile (hopper_select.h): valid-block elements of the mask at the portable tile
// and at 128 x 64 / 128 x 128, weighed by per-element rates measured on an H100.
#include "engine/select/hopper_select.h"

#include "engine/layout/block_layout.h"

namespace stof::engine {

namespace {

// Elements computed per element of the portable 64 x 64, 4-warp kernel's rate, by head size
// and Hopper BLOCK_N. Measured on an H100, 2026-11-24 (docs/benchmarks.md, "Hopper kernel"):
// on the paper grid at B16 (sliding window L4096, 3 blocks per row, CUDA graphs) the Hopper
// kernel at 128 x 128 computed 1.98x the elements of 64 x 64 in 1.52x the time (a rate of 1.3);
// on dense masks it ran 1.8x (d 64) and 2.3x (d 128) the rate, but a mask with few blocks per
// row gets the sparse figure, so that one is used (conservative: the choice errs towards the
// portable kernel). d 128 scales it by the dense d128 / d64 ratio; 128 x 64 ran at 0.78 (d 64)
// and 0.91 (d 128) of 128 x 128's rate on dense L4096 B4 H12 (`stof bench mha`).
double HopperRate(int64_t head_dim, int64_t block_n) {
  const double rate128 = head_dim == 64 ? 1.3 : 1.3 * (2.34 / 1.77);
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
  } else if (workload.seq_len < kHopperMinSeqLen) {
    e.why_not = "L " + std::to_string(workload.seq_len) + " < " +
                std::to_string(kHopperMinSeqLen) + " (per-CTA start cost dominates)";
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

}  // namespace stof::engine
