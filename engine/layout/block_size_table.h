// The block-size trade-off table of the studio's layout view: one mask's layout statistics
// and kernel work at every BM x BN in {16, 32, 64, 128}^2 (squares and rectangles), so the
// user sees density, wasted work and index bytes side by side. Tested in
// block_size_table_test.cpp against BlockLayout::Build at each size.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/layout/block_layout.h"
#include "engine/layout/layout_work.h"
#include "engine/mask/mask.h"

namespace stof::engine {

struct BlockSizeRow {
  LayoutStats stats;  // stats.block_m, stats.block_n name the size
  LayoutWork work;
};

// {16, 32, 64, 128}^2 in BM-major order (16 sizes).
const std::vector<std::pair<int64_t, int64_t>>& DefaultTableBlockSizes();

// Called after each size with (done, total); returning false cancels (the table then fails
// with "block-size table: cancelled").
using TableProgress = std::function<bool(int64_t done, int64_t total)>;

// Fails on an empty list, a bad block size (named), a workload whose seq_len is not the
// mask's, or cancellation.
Expected<std::vector<BlockSizeRow>> BuildBlockSizeTable(
    const Mask& mask, const Workload& workload,
    const std::vector<std::pair<int64_t, int64_t>>& sizes, const TableProgress& progress = {});

// The same table of a mask held in another form, at any length up to RowRuns::kMaxLen:
// stats_at(BM, BN) gives each size's statistics (BlockLayout::StatsOf of its runs or of its
// per-block rule); the work columns only with a `workload` (null: left zero, as for a square
// length past what a call runs). Fails as above.
using TableStats = std::function<Expected<LayoutStats>(int64_t block_m, int64_t block_n)>;
Expected<std::vector<BlockSizeRow>> BuildBlockSizeTable(
    int64_t seq_len, const Workload* workload, const TableStats& stats_at,
    const std::vector<std::pair<int64_t, int64_t>>& sizes, const TableProgress& progress = {});

}  // namespace stof::engine
