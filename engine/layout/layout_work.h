// The work a block-sparse attention kernel does on a layout, for one workload: FLOPs of QK^T
// and PV over every valid block (what a BSR kernel computes) versus over the attended
// elements only (what the mask needs), and the valid blocks of each block row (load balance).
// Used by the studio's layout view and block-size table; tested in layout_work_test.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/layout/block_layout.h"

namespace stof::engine {

struct LayoutWork {
  // 2 GEMMs x 2 FLOP per multiply-add x d per element, x batch x heads.
  double block_kernel_flops = 0;  // 4 d B H * (full + part) * BM * BN
  double valid_flops = 0;         // 4 d B H * nnz
  double wasted_flops = 0;        // block_kernel_flops - valid_flops
  double wasted_fraction = 0;     // wasted / block_kernel (0 when there are no blocks)
};

// Fails when the workload is invalid or its seq_len differs from the layout's L.
Expected<LayoutWork> ComputeLayoutWork(const LayoutStats& stats, int64_t seq_len,
                                       const Workload& workload);

// Valid (full + part) blocks of each block row, from LoadRowPtr.
std::vector<int32_t> ValidBlocksPerRow(const BlockLayout& layout);

}  // namespace stof::engine
