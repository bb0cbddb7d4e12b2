// AnalyzeMask and AnalyzeRowRuns (layout_analysis.h): one body (Analyze) over a mask's form,
// which says how to build a layout, take a size's statistics, count Eq. 1's 16 x 16 blocks and
// give the bits the run choice needs. Stages and their share of the progress bar: main layout
// 10 %, 128 x 128 layout 10 %, selection 10 % (it builds the 16 x 16 layout), table 70 %
// (one step per block size; without the table the first three scale to 100 %).
#include "engine/analysis/layout_analysis.h"

#include <map>
#include <utility>

namespace stof::engine {

namespace {

// The operations Analyze asks of a mask's form (bits or runs).
struct MaskForm {
  int64_t rows = 0, cols = 0;
  std::function<Expected<BlockLayout>(int64_t bm, int64_t bn)> layout;
  std::function<Expected<LayoutStats>(int64_t bm, int64_t bn)> stats;
  std::function<Expected<KernelSelection>(const Workload&, const DeviceSpec&)> select;
  // The bits the run choice reads: the whole mask, or its last `rows` rows (a KV cache step),
  // made in `storage` where the form does not hold them.
  std::function<Expected<const Mask*>(int64_t rows, Mask& storage)> bits;
  std::function<Expected<std::vector<BlockSizeRow>>(const Workload*, const TableProgress&)> table;
};

Expected<MaskAnalysis> Analyze(const MaskForm& form, const AnalysisRequest& request,
                               const AnalysisProgress& progress) {
  if (form.rows != form.cols)
    return MakeError("analysis: the mask is " + std::to_string(form.rows) + " x " +
                     std::to_string(form.cols) + ", attention needs a square mask");
  STOF_RETURN_IF_ERROR(BlockLayout::CheckBlockSize(request.block_m, request.block_n));
  STOF_RETURN_IF_ERROR(request.device.Validate("analysis: device"));
  if (request.workload.seq_len != form.rows)
    return MakeError("analysis: workload.seq_len " + std::to_string(request.workload.seq_len) +
                     " differs from the mask's L = " + std::to_string(form.rows));
  MaskAnalysis out;
  const Status valid = request.workload.Validate("analysis: workload");
  if (!valid.IsOk()) {
    // Only a square length past a call's is analysed without a workload (its mask's figures).
    if (form.rows <= Workload::kMaxSeqLen) return valid;
    out.has_work = false;
    out.work_why_not = valid.Message();
  }
  const Workload* workload = out.has_work ? &request.workload : nullptr;

  const double head = request.with_table ? 0.1 : 1.0 / 3.0;
  auto step = [&](double fraction, const std::string& stage) {
    return !progress || progress(fraction, stage);
  };
  const Error cancelled{"analysis: cancelled"};

  if (!step(0.0, "layout " + std::to_string(request.block_m) + "x" + std::to_string(request.block_n)))
    return cancelled;
  auto layout = form.layout(request.block_m, request.block_n);
  if (!layout.IsOk()) return MakeError("analysis: " + layout.Message());
  out.layout = std::move(*layout);
  out.stats = out.layout.Stats();
  out.row_valid = ValidBlocksPerRow(out.layout);
  if (workload != nullptr) {
    auto work = ComputeLayoutWork(out.stats, form.rows, *workload);
    if (!work.IsOk()) return MakeError("analysis: " + work.Message());
    out.work = *work;
  }

  if (!step(head, "layout 128x128 (FlexAttention)")) return cancelled;
  auto flex = form.stats(kFlexBlock, kFlexBlock);
  if (!flex.IsOk()) return MakeError("analysis: " + flex.Message());
  out.flex_stats = *flex;
  if (workload != nullptr) {
    auto flex_work = ComputeLayoutWork(out.flex_stats, form.rows, *workload);
    if (!flex_work.IsOk()) return MakeError("analysis: " + flex_work.Message());
    out.flex_work = *flex_work;
  }

  if (!step(2 * head, "Eq. 1 / Eq. 2")) return cancelled;
  if (workload == nullptr) {
    out.selection_error = out.work_why_not;
    out.run_choice_why_not = out.work_why_not;
  } else {
    auto sel = form.select(request.workload, request.device);
    if (sel.IsOk()) {
      out.has_selection = true;
      out.selection = *sel;
    } else {
      out.selection_error = sel.Message();
    }
    // A KV cache's step runs the mask's last q_len rows over all its keys (as `stof select
    // --q-len` cuts them).
    const int64_t q_len = request.workload.q_len;
    const bool cache_step = q_len > 0 && q_len < form.rows;
    Mask storage;
    const Expected<const Mask*> bits = form.bits(cache_step ? q_len : form.rows, storage);
    auto run = !bits.IsOk() ? Expected<MhaRunChoice>(bits.ToStatus())
                            : ChooseRun(request.choose_run, **bits, request.workload, request.device);
    if (run.IsOk()) {
      out.has_run_choice = true;
      out.run_choice = *run;
    } else {
      out.run_choice_why_not = run.Message();
    }
  }

  if (request.with_table) {
    const size_t sizes = DefaultTableBlockSizes().size();
    if (!step(3 * head, "table 0/" + std::to_string(sizes))) return cancelled;
    auto table = form.table(workload, [&](int64_t done, int64_t total) {
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

}  // namespace

Expected<MaskAnalysis> AnalyzeMask(const Mask& mask, const AnalysisRequest& request,
                                   const AnalysisProgress& progress) {
  if (mask.Empty()) return MakeError("analysis: the mask is empty");
  MaskForm form;
  form.rows = mask.Rows();
  form.cols = mask.Cols();
  form.layout = [&](int64_t bm, int64_t bn) { return BlockLayout::Build(mask, bm, bn); };
  form.stats = [&](int64_t bm, int64_t bn) -> Expected<LayoutStats> {
    STOF_ASSIGN_OR_RETURN(const BlockLayout l, BlockLayout::Build(mask, bm, bn));
    return l.Stats();
  };
  form.select = [&](const Workload& w, const DeviceSpec& d) { return SelectKernel(mask, w, d); };
  form.bits = [&](int64_t rows, Mask& storage) -> Expected<const Mask*> {
    if (rows == mask.Rows()) return &mask;
    STOF_ASSIGN_OR_RETURN(storage, mask.LastRows(rows, "workload.q_len"));
    return &storage;
  };
  form.table = [&](const Workload* w, const TableProgress& p) {
    return BuildBlockSizeTable(mask, *w, DefaultTableBlockSizes(), p);
  };
  return Analyze(form, request, progress);
}

Expected<MaskAnalysis> AnalyzeRowRuns(const RowRuns& runs, const AnalysisRequest& request,
                                      const AnalysisProgress& progress) {
  if (runs.Empty()) return MakeError("analysis: the mask is empty");
  // Each size's statistics once (one pass over the runs each): the 128 x 128 figures and
  // Eq. 1's 16 x 16 count are sizes of the table too.
  std::map<std::pair<int64_t, int64_t>, LayoutStats> counted;
  const TableStats stats_at = [&](int64_t bm, int64_t bn) -> Expected<LayoutStats> {
    const auto hit = counted.find({bm, bn});
    if (hit != counted.end()) return hit->second;
    STOF_ASSIGN_OR_RETURN(const LayoutStats s, BlockLayout::StatsOf(runs, bm, bn));
    counted.emplace(std::make_pair(bm, bn), s);
    return s;
  };
  MaskForm form;
  form.rows = runs.Rows();
  form.cols = runs.Cols();
  form.layout = [&](int64_t bm, int64_t bn) { return BlockLayout::Build(runs, bm, bn); };
  form.stats = stats_at;
  form.select = [&](const Workload& w, const DeviceSpec& d) -> Expected<KernelSelection> {
    STOF_ASSIGN_OR_RETURN(const LayoutStats s16, stats_at(Eq1Result::kBlock, Eq1Result::kBlock));
    STOF_ASSIGN_OR_RETURN(Eq1Result eq1,
                          EvaluateEq1FromCounts(runs.Rows(), s16.full_blocks + s16.part_blocks));
    return SelectKernelFromEq1(std::move(eq1), w, d);
  };
  form.bits = [&](int64_t rows, Mask& storage) -> Expected<const Mask*> {
    STOF_ASSIGN_OR_RETURN(storage, runs.LastRowsToMask(rows, "workload.q_len"));
    return &storage;
  };
  form.table = [&](const Workload* w, const TableProgress& p) {
    return BuildBlockSizeTable(runs.Rows(), w, stats_at, DefaultTableBlockSizes(), p);
  };
  return Analyze(form, request, progress);
}

}  // namespace stof::engine
