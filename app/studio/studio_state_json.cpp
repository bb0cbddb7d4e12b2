// Studio::StateJson (studio.h): the state the window shows, as --dump-state writes it and
// tests/app/studio_test.sh reads it: the mask and its history, the choices, the analysis'
// layouts, work, block-size table and kernel selection, the copy-as-CLI lines, the status
// message and error strip, and the layer views (LayerWorkbench::StateJson).
#include "app/common/run_choice.h"
#include "app/studio/studio.h"
#include "engine/mask/mask_json.h"

namespace stof::app {

namespace {
nlohmann::json StatsJson(const engine::LayoutStats& s) {
  return {{"block_m", s.block_m},         {"block_n", s.block_n},
          {"block_rows", s.block_rows},   {"block_cols", s.block_cols},
          {"nnz", s.nnz},                 {"density", s.density},
          {"full_blocks", s.full_blocks}, {"part_blocks", s.part_blocks},
          {"empty_blocks", s.empty_blocks}, {"valid_block_ratio", s.valid_block_ratio},
          {"index_bytes", s.index_bytes}, {"bitmap_bytes", s.bitmap_bytes},
          {"wasted_fraction", s.wasted_fraction},
          {"min_blocks_per_row", s.min_blocks_per_row},
          {"max_blocks_per_row", s.max_blocks_per_row}};
}

nlohmann::json WorkJson(const engine::LayoutWork& w) {
  return {{"block_kernel_flops", w.block_kernel_flops}, {"valid_flops", w.valid_flops},
          {"wasted_flops", w.wasted_flops}, {"wasted_fraction", w.wasted_fraction}};
}
}  // namespace

nlohmann::json Studio::StateJson() const {
  const engine::Mask& m = Doc().state.mask;
  nlohmann::json j;
  j["mask"] = {{"spec", Doc().state.spec ? engine::MaskSpecToJson(*Doc().state.spec) : nlohmann::json()},
               {"seq_len", m.Rows()}, {"nnz", m.Count()}, {"density", m.Density()},
               {"hash", m.HashHex()}, {"path", Doc().path}, {"dirty", Doc().dirty},
               {"version", Doc().version}};
  j["history"] = {{"undo", History().UndoCount()}, {"redo", History().RedoCount()}};
  j["panel"] = PanelName(m_panel);
  j["block"] = {{"block_m", m_block_m}, {"block_n", m_block_n}};
  j["device"] = Device().name;
  j["device_note"] = m_devices.note;
  j["workload"] = {{"batch", m_workload.batch}, {"heads", m_workload.heads},
                   {"seq_len", m_workload.seq_len}, {"head_dim", m_workload.head_dim},
                   {"kv_heads", m_workload.KvHeads()}, {"q_len", m_workload.QLen()}};
  j["analysis_ready"] = AnalysisReady();
  j["saving"] = m_save.Busy();
  j["recent"] = m_recent;
  j["canvas"] = {{"overlay", m_overlay == Overlay::kMask ? "mask" : m_overlay == Overlay::kBlocks ? "blocks" : "blocks-over-mask"},
                 {"mask_blended", m_textures.OverviewBlended()}};
  if (Analysis()) {
    const engine::MaskAnalysis& a = *Analysis();
    j["layout"] = StatsJson(a.stats);
    j["work"] = WorkJson(a.work);
    j["row_valid"] = a.row_valid;
    j["flex"] = {{"layout", StatsJson(a.flex_stats)}, {"work", WorkJson(a.flex_work)}};
    nlohmann::json table = nlohmann::json::array();
    for (const engine::BlockSizeRow& r : a.table)
      table.push_back({{"layout", StatsJson(r.stats)}, {"work", WorkJson(r.work)}});
    j["table"] = table;
    if (a.has_selection) {
      const engine::KernelSelection& s = a.selection;
      j["selection"] = {{"kernel", engine::MhaKernelName(s.kernel)},
                        {"eq1", {{"n", s.eq1.n}, {"valid_blocks", s.eq1.valid_blocks},
                                 {"valid_ratio", s.eq1.valid_ratio}, {"penalty", s.eq1.penalty},
                                 {"threshold", s.eq1.threshold},
                                 {"kernel", engine::MhaKernelName(s.eq1.kernel)}}},
                        {"block_m", s.block_m}, {"block_n", s.block_n},
                        {"num_warps", s.num_warps},
                        {"candidates", s.eq2.candidates.size()}, {"best", s.eq2.best}};
    } else {
      j["selection"] = {{"error", a.selection_error}};
    }
    j["run_choice"] = a.has_run_choice ? engine::MhaRunChoiceJson(a.run_choice)
                                       : nlohmann::json{{"why_not", a.run_choice_why_not}};
  }
  const CliCommands c = Commands();
  j["cli"] = {{"layout", c.layout}, {"select", c.select}, {"note", c.note}};
  j["message"] = {{"level", m_message.level == MessageLevel::kError ? "error" : "info"},
                  {"text", m_message.text}};
  j["error_strip"] = m_error_strip.StateJson(CurrentError());
  if (!m_analyses.Error().empty()) j["analysis_error"] = m_analyses.Error();
  // "lab": the key the GUI tests and the recorded states of docs/bench/ read (LayerWorkbench
  // was called LayerLab).
  j["lab"] = m_workbench->StateJson();
  j["learn"] = {{"lesson", m_learn.lesson + 1}, {"glossary_open", m_learn.glossary_open}};
  if (m_learn.lesson >= 0) {
    j["learn"]["page"] = LessonPageJson(m_learn.lesson, m_learn.page, CurrentLessonPage());
    j["learn"]["transcript"] = m_learn.transcript;
  }
  return j;
}

}  // namespace stof::app
