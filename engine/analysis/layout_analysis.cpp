// AnalyzeMask (layout_analysis.h). Stages and their share of the progress bar: main layout
// 10 %, 128 x 128 layout 10 %, selection 10 % (it builds the 16 x 16 layout), table 70 %
// (one step per block size; without the table the first three scale to 100 %).
#include "engine/analysis/layout_analysis.h"

namespace stof::engine {

Expected<MaskAnalysis> AnalyzeMask(const Mask& mask, const AnalysisRequest& request,
                                   const AnalysisProgress& progress) {
  if (mask.Empty()) return MakeError("analysis: the mask is empty");
  if (mask.Rows() != mask.Cols())
    return MakeError("analysis: the mask is " + std::to_string(mask.Rows()) + " x " +
                     std::to_string(mask.Cols()) + ", attention needs a square mask");
  STOF_RETURN_IF_ERROR(BlockLayout::CheckBlockSize(request.block_m, request.block_n));
  STOF_RETURN_IF_ERROR(request.device.Validate("analysis: device"));
  STOF_RETURN_IF_ERROR(request.workload.Validate("analysis: workload"));
  if (request.workload.seq_len != mask.Rows())
    return MakeError("analysis: workload.seq_len " + std::to_string(request.workload.seq_len) +
                     " differs from the mask's L = " + std::to_string(mask.Rows()));

  const double head = request.with_table ? 0.1 : 1.0 / 3.0;
  auto step = [&](double fraction, const std::string& stage) {
    return !progress || progress(fraction, stage);
  };
  const Error cancelled{"analysis: cancelled"};
  MaskAnalysis out;

  if (!step(0.0, "layout " + std::to_string(request.block_m) + "x" + std::to_string(request.block_n)))
    return cancelled;
  auto layout = BlockLayout::Build(mask, request.block_m, request.block_n);
  if (!layout.IsOk()) return MakeError("analysis: " + layout.Message());
  out.layout = std::move(*layout);
  out.stats = out.layout.Stats();
  auto work = ComputeLayoutWork(out.stats, mask.Rows(), request.workload);
  if (!work.IsOk()) return MakeError("analysis: " + work.Message());
  out.work = *work;
  out.row_valid = ValidBlocksPerRow(out.layout);

  if (!step(head, "layout 128x128 (FlexAttention)")) return cancelled;
  auto flex = BlockLayout::Build(mask, kFlexBlock, kFlexBlock);
  if (!flex.IsOk()) return MakeError("analysis: " + flex.Message());
  out.flex_stats = flex->Stats();
  auto flex_work = ComputeLayoutWork(out.flex_stats, mask.Rows(), request.workload);
  if (!flex_work.IsOk()) return MakeError("analysis: " + flex_work.Message());
  out.flex_work = *flex_work;

  if (!step(2 * head, "Eq. 1 / Eq. 2")) return cancelled;
  auto sel = SelectKernel(mask, request.workload, request.device);
  if (sel.IsOk()) {
    out.has_selection = true;
    out.selection = *sel;
  } else {
    out.selection_error = sel.Message();
  }
  // A KV cache's step runs the mask's last q_len rows over all its keys (as `stof select
  // --q-len` cuts them).
  const int64_t q_len = request.workload.q_len;
  const bool cache_step = q_len > 0 && q_len < mask.Rows();
  const Expected<Mask> last_rows = cache_step ? mask.LastRows(q_len, "workload.q_len") : Mask();
  auto run = !last_rows.IsOk()
                 ? Expected<MhaRunChoice>(last_rows.ToStatus())
                 : ChooseRun(request.choose_run, cache_step ? *last_rows : mask,
                             request.workload, request.device);
  if (run.IsOk()) {
    out.has_run_choice = true;
    out.run_choice = *run;
  } else {
    out.run_choice_why_not = run.Message();
  }

  if (request.with_table) {
    const std::vector<std::pair<int64_t, int64_t>>& sizes = DefaultTableBlockSizes();
    if (!step(3 * head, "table 0/" + std::to_string(sizes.size()))) return cancelled;
    auto table = BuildBlockSizeTable(mask, request.workload, sizes, [&](int64_t done, int64_t total) {
      return step(3 * head + (1 - 3 * head) * static_cast<double>(done) / static_cast<double>(total),
                  "table " + std::to_string(done) + "/" + std::to_string(total));
    });
    if (!table.IsOk())
      return table.Message().find("cancelled") != std::string::npos ? cancelled
                                                                   : MakeError("analysis: " + table.Message());
    out.table = std::move(*table);
  }
  step(1.0, "done");
  return out;
}

}  // namespace stof::engine
