// Studio (studio.h): commands, the analysis and save round trips, the recent-files list,
// textures and the frame's layout (file bar on top, canvas left, tabbed panels right, status
// bar at the bottom).
#include "app/studio/studio.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "app/studio/panels/export_panel.h"
#include "app/studio/panels/file_bar.h"
#include "app/studio/panels/fusion_panel.h"
#include "app/studio/panels/profile_panel.h"
#include "app/studio/panels/tune_panel.h"
#include "app/studio/panels/layout_panel.h"
#include "app/studio/panels/mask_canvas.h"
#include "app/studio/panels/mask_panel.h"
#include "app/studio/panels/selection_panel.h"
#include "app/studio/widgets/error_text.h"
#include "engine/core/recent_files.h"
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_json.h"
#include "engine/plan/plan.h"
#include "engine/plan/plan_build.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/device_query.h"
#endif

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

namespace {

// The profile tab: the panel, with the studio's word on profiling and its actions.
void DrawProfileTab(Studio& studio) {
  LayerLab& lab = studio.Lab();
  const GpuWorker& gpu = lab.Worker();
  std::string status;
  if (!gpu.Ready()) status = "starting the GPU worker";
  else if (gpu.HasGpu()) status = "profiling runs on " + gpu.DeviceText();
  else status = gpu.DeviceText() + ": open profiles or plans measured elsewhere";
  const ProfilePanelActions a = DrawProfilePanel(lab.Profiles(), gpu.HasGpu() && !gpu.Busy(), status);
  if (a.profile_now) lab.ProfileNow();
  if (a.open) {
    if (a.open_path.empty()) studio.Message(MessageLevel::kError, "open: give a profile or plan file");
    else lab.OpenProfile(a.open_path);
  }
}

// One tab of the side area, in the tab bar's order.
struct PanelRow {
  Panel panel;
  const char* name;   // --panel, --also-panels, the state dump
  const char* title;  // the tab
  bool wide;          // the view needs the width more than the mask canvas does
  // Draws the tab's body; true when it asks for the fusion view.
  bool (*draw)(Studio& studio);
};

const PanelRow kPanels[] = {
    {Panel::kMask, "mask", "Mask", false, [](Studio& s) { DrawMaskPanel(s); return false; }},
    {Panel::kLayout, "layout", "Block layout", false, [](Studio& s) { DrawLayoutPanel(s); return false; }},
    {Panel::kSelection, "selection", "Kernel selection", false, [](Studio& s) { DrawSelectionPanel(s); return false; }},
    {Panel::kFusion, "fusion", "Fusion", true, [](Studio& s) { DrawFusionPanel(s.Lab()); return false; }},
    {Panel::kTune, "tune", "Tune", true, [](Studio& s) { return DrawTunePanel(s.Lab(), s.Ui()); }},
    {Panel::kProfile, "profile", "Profile", true, [](Studio& s) { DrawProfileTab(s); return false; }},
    {Panel::kExport, "export", "Export", false, [](Studio& s) { DrawExportPanel(s); return false; }},
};

const PanelRow& RowOf(Panel p) {
  for (const PanelRow& row : kPanels)
    if (row.panel == p) return row;
  return kPanels[0];
}

}  // namespace

const char* PanelName(Panel p) { return RowOf(p).name; }

engine::Expected<Panel> ParsePanel(const std::string& name, const std::string& what) {
  for (const PanelRow& row : kPanels)
    if (name == row.name) return row.panel;
  return engine::Error{what + ": expected mask, layout, selection, export, fusion, tune or profile, got '" +
                       name + "'"};
}

engine::Status Studio::Init(const StudioOptions& options) {
  auto panel = ParsePanel(options.panel);
  if (!panel.IsOk()) return panel.ToStatus();
  m_panel = *panel;
  STOF_RETURN_IF_ERROR(engine::BlockLayout::CheckBlockSize(options.block_m, options.block_n));
  m_block_m = options.block_m;
  m_block_n = options.block_n;
  m_workload = options.workload;

  m_devices = engine::BuiltinDevices();
  int h100 = 0;
  for (size_t i = 0; i < m_devices.size(); ++i)
    if (m_devices[i].name == "H100-SXM-80GB") h100 = static_cast<int>(i);
  m_device_index = h100;
#ifdef STOF_WITH_KERNELS
  if (auto local = kernels::QueryDeviceSpec(0); local.IsOk()) {
    m_devices.insert(m_devices.begin(), *local);
    m_device_index = 0;
    m_device_note = "this GPU";
  } else {
    m_device_note = "built-in spec: " + local.Message();
  }
#else
  m_device_note = "built-in spec: this build has no CUDA";
#endif
  if (!options.device.empty()) {
    auto d = engine::FindBuiltinDevice(options.device);
    if (!d.IsOk()) return d.ToStatus();
    for (size_t i = 0; i < m_devices.size(); ++i)
      if (m_devices[i].name == d->name && m_devices[i].source == "built-in")
        m_device_index = static_cast<int>(i);
    m_device_note = "chosen with --device";
  }

  m_initial_device = m_device_index;
  m_gpu = std::make_unique<GpuWorker>(options.use_gpu);
  m_lab = std::make_unique<LayerLab>(*m_gpu);
  // The layer the fusion, tune and profile views compute, as the start options give it (the
  // widgets showed --model / --batch while BERT-base at batch 8 was computed: issue 16).
  m_lab->SetChoice({options.model, options.model_config, options.model_batch});

  auto resolved = engine::Resolve(options.spec);
  if (!resolved.IsOk()) return resolved.ToStatus();
  auto mask = engine::Generate(*resolved);
  if (!mask.IsOk()) return mask.ToStatus();
  m_preset = *resolved;
  m_doc.Replace(engine::MaskState{std::move(*mask), *resolved}, false);
  m_view = CanvasView{1.0, Doc().state.mask.Cols() / 2.0, Doc().state.mask.Rows() / 2.0};
  MaskReplaced();
  m_recent_path = options.recent_path;
  LoadRecent();
  if (!options.open.empty()) OpenFile(options.open);
  // Build that layer now at the mask's L: one that cannot be built (batch x L over the limit)
  // is refused at start like any other bad option, not left for the fusion view to show.
  m_lab->SetDevice(Device());
  m_lab->SetMask(Doc().state.mask, Doc().version, Doc().state.spec, MaskLabel());
  if (!m_lab->GraphError().empty())
    return engine::MakeError((options.model_config.empty() ? "--model " + options.model
                                                           : "--config " + options.model_config) +
                             ", --batch " + std::to_string(options.model_batch) + " at L = " +
                             std::to_string(Doc().state.mask.Rows()) + ": " + m_lab->GraphError());
  m_overlay = options.overlay;
  if (options.zoom > 1.0) m_view.zoom = options.zoom;
  return engine::Status::Ok();
}

// ---- the document ------------------------------------------------------------------------

void Studio::MaskReplaced() {
  m_textures.Rebuild(Doc().state.mask, ShownBlend());
  RequestAnalysis();
}

void Studio::SetMask(engine::MaskState state, const std::string& path, const std::string& label) {
  const bool resized = state.mask.Rows() != Doc().state.mask.Rows();
  BeginGesture(label);
  m_doc.Replace(std::move(state), path.empty());
  if (Doc().state.spec) m_preset = *Doc().state.spec;
  m_doc.SetPath(path);
  if (resized) m_view = CanvasView{1.0, Doc().state.mask.Cols() / 2.0, Doc().state.mask.Rows() / 2.0};
  MaskReplaced();
  EndGesture();
  if (!path.empty()) m_doc.MarkSaved(path, Doc().version);  // the document is the file
}

void Studio::OpenFile(const std::string& path) {
  if (path.empty()) return Message(MessageLevel::kError, "open: give a file path (.png, .npy or .json)");
  auto loaded = engine::LoadMask(path);
  if (!loaded.IsOk()) return Message(MessageLevel::kError, loaded.Message());
  engine::MaskState s{std::move(loaded->mask), std::nullopt};
  if (loaded->has_spec) s.spec = loaded->spec;
  if (auto w = s.mask.Rows(); w < 16 || w > 16384)
    Message(MessageLevel::kInfo, "note: L = " + std::to_string(w) + " is outside 16..16384");
  SetMask(std::move(s), path, "open " + path);
  AddRecent(path);
  m_path_buffer = path;
  Message(MessageLevel::kInfo, "opened " + path + " (" + std::to_string(Doc().state.mask.Rows()) +
                                   " x " + std::to_string(Doc().state.mask.Cols()) + ")");
}

void Studio::SaveFile(const std::string& path) {
  if (path.empty()) return Message(MessageLevel::kError, "save: give a file path (.png, .npy or .json)");
  if (auto format = engine::MaskFormatFromPath(path); !format.IsOk())
    return Message(MessageLevel::kError, format.Message());
  EndGesture();
  // The job writes a snapshot; edits made while it runs keep the document "unsaved".
  engine::Status s = m_save.Start(std::make_shared<const engine::Mask>(Doc().state.mask), Doc().state.spec,
                                  path, Doc().version);
  if (!s.IsOk()) return Message(MessageLevel::kError, s.Message());
  Message(MessageLevel::kInfo, "saving " + path + "...");
}

void Studio::PollSave() {
  std::optional<SaveResult> r = m_save.Poll();
  if (!r) return;
  if (!r->status.IsOk()) {
    m_quit_after_save = false;
    return Message(MessageLevel::kError, r->status.Message());
  }
  m_doc.MarkSaved(r->path, r->version);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f s", r->seconds);
  Message(MessageLevel::kInfo, "saved " + r->path + " in " + secs +
                                   (Doc().dirty ? " (the mask changed since: still unsaved)" : ""));
  AddRecent(r->path);
  if (m_quit_after_save) {
    m_quit_after_save = false;
    m_quit_confirmed = RequestQuit();
  }
}

// The list on disk is the truth shared by every studio: read it again before adding, so a
// second window's files are kept. Problems go to the status line; the list then lives in
// memory only.
void Studio::LoadRecent() {
  if (m_recent_path.empty()) return;
  auto list = engine::LoadRecentFiles(m_recent_path);
  if (!list.IsOk()) return Message(MessageLevel::kError, "recent files ignored: " + list.Message());
  m_recent = std::move(*list);
}

void Studio::AddRecent(const std::string& path) {
  if (!m_recent_path.empty()) {
    if (auto on_disk = engine::LoadRecentFiles(m_recent_path); on_disk.IsOk())
      for (auto it = on_disk->rbegin(); it != on_disk->rend(); ++it) m_recent = engine::AddRecentFile(m_recent, *it);
  }
  // Absolute, so the list still works from another working directory next session.
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  m_recent = engine::AddRecentFile(m_recent, ec ? path : absolute.lexically_normal().string());
  if (m_recent_path.empty()) return;
  if (engine::Status s = engine::SaveRecentFiles(m_recent_path, m_recent); !s.IsOk())
    Message(MessageLevel::kError, "recent files not kept: " + s.Message());
}

void Studio::ApplySpec(const engine::MaskSpec& spec, bool record) {
  auto resolved = engine::Resolve(spec);
  if (!resolved.IsOk()) return Message(MessageLevel::kError, resolved.Message());
  auto mask = engine::Generate(*resolved);
  if (!mask.IsOk()) return Message(MessageLevel::kError, mask.Message());
  const bool resized = mask->Rows() != Doc().state.mask.Rows();
  if (record) BeginGesture("preset " + resolved->pattern);
  m_doc.Replace(engine::MaskState{std::move(*mask), *resolved}, true);
  if (resized) m_view = CanvasView{1.0, Doc().state.mask.Cols() / 2.0, Doc().state.mask.Rows() / 2.0};
  MaskReplaced();
  if (record) EndGesture();
  m_message.clear();
}

void Studio::BeginGesture(const std::string& label) { m_doc.BeginGesture(label); }

void Studio::EndGesture() {
  if (m_doc.EndGesture()) RequestAnalysis();
}

void Studio::ApplyEdit(const EditCommand& edit) {
  const engine::Expected<engine::CellRect> changed = m_doc.Apply(edit);
  if (!changed.IsOk()) return Message(MessageLevel::kError, changed.Message());
  if (changed->Empty()) return;
  m_textures.Update(Doc().state.mask, *changed, LatestLayout());
}

void Studio::Undo() { StepHistory(false); }
void Studio::Redo() { StepHistory(true); }

void Studio::StepHistory(bool redo) {
  EndGesture();
  auto r = m_doc.Step(redo);
  if (!r.IsOk()) return Message(MessageLevel::kInfo, r.Message());
  if (Doc().state.spec) m_preset = *Doc().state.spec;
  MaskReplaced();
  Message(MessageLevel::kInfo, (redo ? "redid " : "undid ") + *r);
}

void Studio::Message(MessageLevel level, const std::string& text) {
  m_message_level = level;
  m_message = text;
}

// ---- choices and the analysis ------------------------------------------------------------

void Studio::SetBlockSize(int64_t block_m, int64_t block_n) {
  if (engine::Status s = engine::BlockLayout::CheckBlockSize(block_m, block_n); !s.IsOk())
    return Message(MessageLevel::kError, s.Message());
  m_block_m = block_m;
  m_block_n = block_n;
  RequestAnalysis();
}

void Studio::SetWorkload(const engine::Workload& w) {
  engine::Workload next = w;
  next.seq_len = Doc().state.mask.Rows();
  if (engine::Status s = next.Validate("workload"); !s.IsOk())
    return Message(MessageLevel::kError, s.Message());
  m_workload = next;
  RequestAnalysis();
}

void Studio::SetDevice(int index) {
  if (index < 0 || index >= static_cast<int>(m_devices.size())) return;
  m_device_index = index;
  RequestAnalysis();
}

void Studio::RequestAnalysis() {
  if (m_doc.InGesture()) return;  // after the stroke
  m_workload.seq_len = Doc().state.mask.Rows();
  engine::AnalysisRequest req;
  req.block_m = m_block_m;
  req.block_n = m_block_n;
  req.workload = m_workload;
  req.device = Device();
  m_analyses.Request(Doc().state.mask, Doc().version, req, m_device_index);
}

bool Studio::JobsIdle() const {
  return m_gpu->Ready() && !m_gpu->Busy() && !m_lab->Tuning();
}

void Studio::OpenPlanFile(const std::string& path) {
  auto plan = engine::LoadPlan(path);
  if (!plan.IsOk()) return Message(MessageLevel::kError, plan.Message());
  auto mask = engine::PlanMaskToMask(plan->mask, path);
  if (!mask.IsOk()) return Message(MessageLevel::kError, mask.Message());
  std::optional<engine::MaskSpec> spec;
  if (plan->mask.has_spec) spec = plan->mask.spec;
  if (mask->HashHex() != Doc().state.mask.HashHex())
    SetMask(engine::MaskState{*mask, spec}, "", "open plan");
  m_lab->SetMask(Doc().state.mask, Doc().version, Doc().state.spec, MaskLabel());
  m_lab->OpenPlan(*plan, *mask, path);
  m_panel = Panel::kFusion;
  m_force_panel = true;
}

std::string Studio::MaskLabel() const {
  if (Doc().state.spec) return engine::Describe(*Doc().state.spec);
  return Doc().path.empty() ? std::string("edited mask") : std::filesystem::path(Doc().path).filename().string();
}

bool Studio::AnalysisReady() const {
  return m_analyses.UpToDate() && !m_doc.InGesture();
}

void Studio::ExportLayout(const std::string& path, engine::LayoutExportFormat format) {
  const engine::MaskAnalysis* analysis = Analysis();
  if (!analysis) return Message(MessageLevel::kError, "export: no layout yet");
  if (path.empty()) return Message(MessageLevel::kError, "export: give a file path");
  if (engine::Status s = engine::SaveLayout(path, analysis->layout, format); !s.IsOk())
    return Message(MessageLevel::kError, s.Message());
  Message(MessageLevel::kInfo, std::string("wrote the ") + engine::LayoutExportFormatName(format) +
                                   " layout to " + path);
}

void Studio::ExportPlan(const std::string& path) {
  const engine::MaskAnalysis* analysis = Analysis();
  if (!analysis || !analysis->has_selection)
    return Message(MessageLevel::kError, "export plan: no kernel selection: " +
                                             (analysis ? analysis->selection_error : std::string("not ready")));
  if (path.empty()) return Message(MessageLevel::kError, "export plan: give a file path");
  const engine::MaskSpec* spec = Doc().state.spec ? &*Doc().state.spec : nullptr;
  const engine::Plan plan = engine::MakeAnalyticalPlan(Doc().state.mask, spec, m_workload, Device(),
                                                       analysis->selection, "stof-studio");
  if (engine::Status s = engine::SavePlan(path, plan); !s.IsOk())
    return Message(MessageLevel::kError, s.Message());
  Message(MessageLevel::kInfo, "wrote the plan to " + path);
}

CliCommands Studio::Commands() const {
  CliMaskSource src{Doc().state.spec, Doc().path, !Doc().dirty && !Doc().path.empty()};
  const engine::DeviceSpec& d = Device();
  return MakeCliCommands(src, m_block_m, m_block_n, m_workload,
                         d.source == "queried" ? std::string("local") : d.name);
}

// ---- textures ----------------------------------------------------------------------------

LayoutBlend Studio::LatestLayout() const {
  const engine::MaskAnalysis* a = m_analyses.Latest();
  return a ? LayoutBlend{m_analyses.Serial(), &a->layout, &m_analyses.BlockClasses()} : LayoutBlend{};
}

LayoutBlend Studio::ShownBlend() const {
  return m_overlay == Overlay::kBlocksOverMask && LayoutFits() ? LatestLayout() : LayoutBlend{};
}

const Texture& Studio::Detail(int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  return m_textures.Detail(Doc().state.mask, Doc().version, ShownBlend(), r0, r1, c0, c1);
}

void Studio::ZoomToCells(int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const engine::Mask& m = Doc().state.mask;
  const double span = static_cast<double>(std::max<int64_t>(1, std::max(r1 - r0, c1 - c0)));
  m_view.zoom = std::max(1.0, static_cast<double>(std::max(m.Rows(), m.Cols())) / (span * 1.25));
  m_view.cx = (c0 + c1) / 2.0;
  m_view.cy = (r0 + r1) / 2.0;
}

// ---- the frame ---------------------------------------------------------------------------

void Studio::HandleShortcuts() {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Z), false)) {
    if (io.KeyShift) Redo(); else Undo();
  }
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Y), false)) Redo();
}

bool Studio::RequestQuit() {
  if (m_save.Busy()) {  // let the file be finished; PollSave asks again
    m_quit_after_save = true;
    Message(MessageLevel::kInfo, "quitting once " + m_save.Path() + " is written");
    return false;
  }
  if (!Doc().dirty || m_quit_confirmed) return true;
  m_quit_dialog = true;
  return false;
}

void Studio::DrawQuitDialog() {
  if (m_quit_dialog) {
    ImGui::OpenPopup("Unsaved changes");
    m_quit_dialog = false;
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("The mask has changes that are not saved%s%s.", Doc().path.empty() ? "" : " to ",
                Doc().path.c_str());
    ImGui::TextUnformatted("Save them in the path field's file, quit without saving, or go back.");
    if (ImGui::Button("Save and quit")) {
      SaveFile(m_path_buffer.empty() ? Doc().path : m_path_buffer);
      m_quit_after_save = m_save.Busy();  // PollSave quits once the file is written
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Quit without saving")) {
      m_quit_confirmed = true;
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

// ---- errors in full ------------------------------------------------------------------------
// An error used to be one line of the status bar, clipped at the window's edge (issue 16).
// Now it is a strip above the status bar, wrapped to the window's width, as tall as the text
// (up to kErrorStripLines, then it scrolls), with Copy and Dismiss; a dismissed error can be
// shown again from the status bar until another message replaces it.

namespace {
constexpr int kErrorStripLines = 8;
const char* const kCopyLabel = "Copy";
const char* const kDismissLabel = "Dismiss";

// Room the strip's buttons take on the right of the text.
float StripButtonsWidth() {
  const ImGuiStyle& st = ImGui::GetStyle();
  return ImGui::CalcTextSize(kCopyLabel).x + ImGui::CalcTextSize(kDismissLabel).x +
         4 * st.FramePadding.x + 2 * st.ItemSpacing.x;
}
}  // namespace

const std::string& Studio::StripError() const {
  static const std::string kNone;
  const std::string& e = !m_analyses.Error().empty()               ? m_analyses.Error()
                         : m_message_level == MessageLevel::kError ? m_message
                                                                   : kNone;
  return e == m_dismissed_error ? kNone : e;
}

float Studio::ErrorStripHeight(float width) {
  m_error_view = ErrorView{};
  const std::string& e = StripError();
  if (e.empty()) return 0;
  const ImGuiStyle& st = ImGui::GetStyle();
  const float wrap = width - 2 * st.WindowPadding.x - StripButtonsWidth();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float text_h = ImGui::CalcTextSize(e.c_str(), e.c_str() + e.size(), false, wrap).y;
  m_error_view.shown = true;
  m_error_view.text_height = text_h;
  m_error_view.lines = static_cast<int>(std::lround(text_h / ImGui::GetTextLineHeight()));
  m_error_view.scrolls = m_error_view.lines > kErrorStripLines;
  const float shown_h = std::min(text_h, line * kErrorStripLines);
  m_error_view.strip_height = shown_h + 2 * st.WindowPadding.y;
  return m_error_view.strip_height + st.ItemSpacing.y;
}

void Studio::DrawErrorStrip(float height) {
  if (height <= 0) return;
  const std::string e = StripError();
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0.22f, 0.07f, 0.07f, 1.0f));
  ImGui::BeginChild("error_strip", ImVec2(0, m_error_view.strip_height), true);
  const float top = ImGui::GetCursorPosY();
  ErrorTextWrapped(e, StripButtonsWidth());
  ImGui::SetCursorPos(ImVec2(ImGui::GetWindowContentRegionMax().x - StripButtonsWidth() +
                                 ImGui::GetStyle().ItemSpacing.x,
                             top + ImGui::GetScrollY()));
  if (ImGui::SmallButton(kCopyLabel)) ImGui::SetClipboardText(e.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton(kDismissLabel)) m_dismissed_error = e;
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

void Studio::DrawStatusBar() {
  if (m_gpu->Busy()) {
    const double f = m_gpu->Fraction();
    std::string text = m_gpu->Title();
    const std::string stage = m_gpu->Stage();
    if (!stage.empty()) text = stage;
    ImGui::ProgressBar(f >= 0 ? static_cast<float>(f) : 0.0f, ImVec2(420, 0), text.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("Cancel")) m_lab->CancelJobs();
    ImGui::SameLine();
  }
  if (m_save.Busy()) {
    ImGui::TextColored(ImVec4(0.94f, 0.89f, 0.26f, 1.0f), "saving %s: %.1f s |", m_save.Path().c_str(),
                       m_save.Seconds());
    ImGui::SameLine();
  }
  if (const AnalysisWorker& worker = m_analyses.Worker(); worker.Busy()) {
    ImGui::ProgressBar(static_cast<float>(worker.Progress()), ImVec2(220, 0), worker.Stage().c_str());
    ImGui::SameLine();
  } else if (Analysis()) {
    ImGui::Text("analysis %.0f ms", m_analyses.Seconds() * 1000.0);
    ImGui::SameLine();
  }
  ImGui::Text("| %.0f fps | L = %lld | undo %lld%s | %s", ImGui::GetIO().Framerate,
              static_cast<long long>(Doc().state.mask.Rows()),
              static_cast<long long>(History().UndoCount()), Doc().dirty ? " | unsaved" : "",
              Device().name.c_str());
  if (m_device_index == m_initial_device && !m_device_note.empty()) {
    ImGui::SameLine(0, 4);
    ImGui::TextDisabled("(%s)", m_device_note.c_str());
  }
  ImGui::SameLine(0, 4);
  ImGui::TextUnformatted("|");
  ImGui::SameLine();
  // Errors are in the strip above; a dismissed one comes back from here.
  const bool error = !m_analyses.Error().empty() || m_message_level == MessageLevel::kError;
  if (!error) {
    ImGui::TextUnformatted(m_message.c_str());
  } else if (StripError().empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColour);
    if (ImGui::SmallButton("show the error")) m_dismissed_error.clear();
    ImGui::PopStyleColor();
  }
}

void Studio::Draw() {
  m_analyses.Poll();
  PollSave();
  for (GpuWorker::Done& done : m_gpu->TakeDone()) done();
  m_lab->SetDevice(Device());
  m_lab->SetMask(Doc().state.mask, Doc().version, Doc().state.spec, MaskLabel());
  {
    bool error = false;
    std::string text;
    if (m_lab->TakeMessage(&error, &text)) Message(error ? MessageLevel::kError : MessageLevel::kInfo, text);
  }
  HandleShortcuts();
  m_textures.Refresh(ShownBlend(), LatestLayout(), m_overlay == Overlay::kBlocks);

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("STOF Studio", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollbar);
  DrawFileBar(*this);
  const float status_h = ImGui::GetFrameHeightWithSpacing() + 4.0f;
  const float error_h = ErrorStripHeight(ImGui::GetContentRegionAvail().x);
  const float body_h = ImGui::GetContentRegionAvail().y - status_h - error_h;
  // The fusion, tune and profile views need the width more than the mask canvas does.
  const bool wide = RowOf(m_panel).wide;
  const float full = ImGui::GetContentRegionAvail().x;
  const float side = wide ? full * 0.80f : std::min(700.0f, std::max(420.0f, full * 0.44f));
  ImGui::BeginChild("canvas_area", ImVec2(full - side, body_h), true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawMaskCanvas(*this);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("side", ImVec2(0, body_h), true);
  if (ImGui::BeginTabBar("views")) {
    bool to_fusion = false;
    for (const PanelRow& row : kPanels) {
      const ImGuiTabItemFlags flags = m_force_panel && m_panel == row.panel ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(row.title, nullptr, flags)) {
        if (!m_force_panel) m_panel = row.panel;
        ImGui::BeginChild("panel_body", ImVec2(0, 0), false);
        to_fusion = row.draw(*this) || to_fusion;
        ImGui::EndChild();
        ImGui::EndTabItem();
      }
    }
    m_force_panel = false;
    if (to_fusion) {
      m_panel = Panel::kFusion;
      m_force_panel = true;
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  DrawErrorStrip(error_h);
  DrawStatusBar();
  DrawQuitDialog();
  ImGui::End();
  if (!ImGui::IsAnyMouseDown() && !ImGui::IsAnyItemActive()) EndGesture();
}

// ---- state dump --------------------------------------------------------------------------

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
  j["device_note"] = m_device_note;
  j["workload"] = {{"batch", m_workload.batch}, {"heads", m_workload.heads},
                   {"seq_len", m_workload.seq_len}, {"head_dim", m_workload.head_dim}};
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
  }
  const CliCommands c = Commands();
  j["cli"] = {{"layout", c.layout}, {"select", c.select}, {"note", c.note}};
  j["message"] = {{"level", m_message_level == MessageLevel::kError ? "error" : "info"},
                  {"text", m_message}};
  j["error_strip"] = {{"shown", m_error_view.shown}, {"text", StripError()},
                      {"lines", m_error_view.lines}, {"text_height", m_error_view.text_height},
                      {"strip_height", m_error_view.strip_height},
                      {"scrolls", m_error_view.scrolls}};
  if (!m_analyses.Error().empty()) j["analysis_error"] = m_analyses.Error();
  j["lab"] = m_lab->StateJson();
  return j;
}

}  // namespace stof::app
