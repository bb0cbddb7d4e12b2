// AnalyzeMask: everything the studio's layout and kernel-selection views show for one mask,
// computed in one call so the GUI can run it off its thread (L = 16384 takes about a second):
// the layout at the chosen BM x BN with its statistics, work and per-row load, the same
// figures at FlexAttention's default 128 x 128, STOF's kernel selection (Eq. 1 + Eq. 2), what
// the engine runs (ChooseRun, mha_run.h) and the block-size table. Progress is reported per stage; the callback can cancel.
// Used by the studio's analysis worker; tested in tests/engine/layout_analysis_test.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/analysis/mha_run.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/layout/block_layout.h"
#include "engine/layout/block_size_table.h"
#include "engine/layout/layout_work.h"
#include "engine/mask/mask.h"
#include "engine/mask/row_runs.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

struct AnalysisRequest {
  int64_t block_m = 64, block_n = 64;
  Workload workload;       // seq_len must equal the mask's L
  DeviceSpec device;
  bool with_table = true;  // the block-size table (the slowest part: 16 layouts)
  MhaRunChooser choose_run;  // the kernels' rules; none: the engine's model (ChooseRun)
};

inline constexpr int64_t kFlexBlock = 128;  // FlexAttention's default block size

struct MaskAnalysis {
  BlockLayout layout;                 // at request.block_m x block_n
  LayoutStats stats;
  LayoutWork work;
  std::vector<int32_t> row_valid;     // valid blocks per block row
  LayoutStats flex_stats;             // at 128 x 128
  LayoutWork flex_work;
  bool has_selection = false;         // false: selection_error says why (e.g. nothing fits)
  KernelSelection selection;
  std::string selection_error;
  bool has_run_choice = false;        // false: run_choice_why_not says why
  MhaRunChoice run_choice;            // what the engine runs (AnalysisRequest::choose_run)
  std::string run_choice_why_not;
  std::vector<BlockSizeRow> table;    // empty unless with_table
  // False only for a mask analysed as runs past a square call's length (AnalyzeRowRuns): the
  // workload does not validate, so work, flex_work and the table's work stay zero and
  // selection and run choice say why (work_why_not holds the workload's message).
  bool has_work = true;
  std::string work_why_not;
};

// fraction in [0, 1] and the stage starting ("layout 64x64", "Eq. 1 / Eq. 2", "table 3/16");
// returning false cancels (the analysis then fails with "analysis: cancelled").
using AnalysisProgress = std::function<bool(double fraction, const std::string& stage)>;

// Fails on an empty or non-square mask, a bad block size, an invalid workload or device, a
// workload seq_len that is not L, or cancellation. A failing kernel selection is not an
// error of the analysis (has_selection = false, selection_error set).
Expected<MaskAnalysis> AnalyzeMask(const Mask& mask, const AnalysisRequest& request,
                                   const AnalysisProgress& progress = {});

// The same analysis of a mask held as runs (never as L x L bits), at any square length up to
// 262144 (Workload::kMaxKeyLen): the layout from the runs, the 128 x 128 statistics and the
// table from BlockLayout::StatsOf, Eq. 1 from the 16 x 16 valid blocks; up to 32768 every
// field equals AnalyzeMask's on the same mask (the run choice from its bits). Past 32768 the
// workload does not validate (a square call stops there), so has_work is false and only the
// mask's figures are given. Fails as AnalyzeMask does otherwise.
Expected<MaskAnalysis> AnalyzeRowRuns(const RowRuns& runs, const AnalysisRequest& request,
                                      const AnalysisProgress& progress = {});

}  // namespace stof::engine
