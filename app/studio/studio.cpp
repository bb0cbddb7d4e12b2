// Studio (studio.h): start-up, the commands on the document, the choices and the analysis,
// the save round trip, the recent-files list, plans and exports. The frame is drawn by
// studio_frame.cpp, the state dump written by studio_state_json.cpp.
#include "app/studio/studio.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/common/run_choice.h"
#include "engine/core/recent_files.h"
#include "engine/mask/mask_io.h"
#include "engine/plan/plan.h"
#include "engine/plan/plan_build.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/device_query.h"
#endif

namespace stof::app {

namespace {

// The devices at start: the built-in specs, with this GPU's queried spec first when there is
// one; the choice is --device's built-in spec, else this GPU, else the H100.
engine::Expected<DeviceChoice> StartDevices(const std::string& device) {
  DeviceChoice c;
  c.devices = engine::BuiltinDevices();
  for (size_t i = 0; i < c.devices.size(); ++i)
    if (c.devices[i].name == "H100-SXM-80GB") c.index = static_cast<int>(i);
#ifdef STOF_WITH_KERNELS
  if (auto local = kernels::QueryDeviceSpec(0); local.IsOk()) {
    c.devices.insert(c.devices.begin(), *local);
    c.index = 0;
    c.note = "this GPU";
  } else {
    c.note = "built-in spec: " + local.Message();
  }
#else
  c.note = "built-in spec: this build has no CUDA";
#endif
  if (!device.empty()) {
    auto d = engine::FindBuiltinDevice(device);
    if (!d.IsOk()) return d.ToStatus();
    for (size_t i = 0; i < c.devices.size(); ++i)
      if (c.devices[i].name == d->name && c.devices[i].source == "built-in") c.index = static_cast<int>(i);
    c.note = "chosen with --device";
  }
  c.initial = c.index;
  return c;
}

}  // namespace

engine::Status Studio::Init(const StudioOptions& options) {
  auto panel = ParsePanel(options.panel);
  if (!panel.IsOk()) return panel.ToStatus();
  m_panel = *panel;
  STOF_RETURN_IF_ERROR(engine::BlockLayout::CheckBlockSize(options.block_m, options.block_n));
  m_block_m = options.block_m;
  m_block_n = options.block_n;
  m_workload = options.workload;

  auto devices = StartDevices(options.device);
  if (!devices.IsOk()) return devices.ToStatus();
  m_devices = std::move(*devices);
  m_gpu = std::make_unique<GpuWorker>(options.use_gpu);
  m_workbench = std::make_unique<LayerWorkbench>(*m_gpu);
  // The layer the fusion, tune and profile views compute, as the start options give it (the
  // widgets showed --model / --batch while BERT-base at batch 8 was computed: issue 16).
  m_workbench->SetChoice({options.model, options.model_config, options.model_batch});

  auto resolved = engine::Resolve(options.spec);
  if (!resolved.IsOk()) return resolved.ToStatus();
  auto mask = engine::Generate(*resolved);
  if (!mask.IsOk()) return mask.ToStatus();
  m_mask_ui.preset = *resolved;
  m_doc.Replace(engine::MaskState{std::move(*mask), *resolved}, false);
  m_view = CanvasView::Fitting(Doc().state.mask);
  MaskReplaced();
  m_recent_path = options.recent_path;
  LoadRecent();
  if (!options.open.empty()) OpenFile(options.open);
  // Build that layer now at the mask's L: one that cannot be built (batch x L over the limit)
  // is refused at start like any other bad option, not left for the fusion view to show.
  m_workbench->SetDevice(Device());
  m_workbench->SetMask(Doc().state.mask, Doc().version, Doc().state.spec, MaskLabel());
  if (!m_workbench->GraphError().empty())
    return engine::MakeError((options.model_config.empty() ? "--model " + options.model
                                                           : "--config " + options.model_config) +
                             ", --batch " + std::to_string(options.model_batch) + " at L = " +
                             std::to_string(Doc().state.mask.Rows()) + ": " + m_workbench->GraphError());
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
  if (Doc().state.spec) m_mask_ui.preset = *Doc().state.spec;
  m_doc.SetPath(path);
  if (resized) m_view = CanvasView::Fitting(Doc().state.mask);
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
    m_quit.after_save = false;
    return Message(MessageLevel::kError, r->status.Message());
  }
  m_doc.MarkSaved(r->path, r->version);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f s", r->seconds);
  Message(MessageLevel::kInfo, "saved " + r->path + " in " + secs +
                                   (Doc().dirty ? " (the mask changed since: still unsaved)" : ""));
  AddRecent(r->path);
  if (m_quit.after_save) {
    m_quit.after_save = false;
    m_quit.confirmed = RequestQuit();
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
  if (resized) m_view = CanvasView::Fitting(Doc().state.mask);
  MaskReplaced();
  if (record) EndGesture();
  m_message.text.clear();
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
  if (Doc().state.spec) m_mask_ui.preset = *Doc().state.spec;
  MaskReplaced();
  Message(MessageLevel::kInfo, (redo ? "redid " : "undid ") + *r);
}

void Studio::Message(MessageLevel level, const std::string& text) { m_message = {level, text}; }

const std::string& Studio::CurrentError() const {
  static const std::string kNone;
  return !m_analyses.Error().empty()              ? m_analyses.Error()
         : m_message.level == MessageLevel::kError ? m_message.text
                                                   : kNone;
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
  if (index < 0 || index >= static_cast<int>(m_devices.devices.size())) return;
  m_devices.index = index;
  RequestAnalysis();
}

void Studio::RequestAnalysis() {
  if (m_doc.InGesture()) return;  // after the stroke
  m_workload.seq_len = Doc().state.mask.Rows();
  if (m_workload.q_len >= m_workload.seq_len) m_workload.q_len = 0;  // a shorter mask: all rows
  engine::AnalysisRequest req;
  req.block_m = m_block_m;
  req.block_n = m_block_n;
  req.workload = m_workload;
  req.device = Device();
  static const engine::MhaRunChooser chooser = MakeMhaRunChooser();  // the kernels' rules
  req.choose_run = chooser;
  m_analyses.Request(Doc().state.mask, Doc().version, req, m_devices.index);
}

bool Studio::JobsIdle() const {
  return m_gpu->Ready() && !m_gpu->Busy() && !m_workbench->Tuning();
}

void Studio::OpenPlanFile(const std::string& path) {
  auto plan = engine::LoadPlan(path);
  if (!plan.IsOk()) return Message(MessageLevel::kError, plan.Message());
  // The canvas, the layer and the tuner hold square masks: a plan of a KV cache's last rows
  // past them (schema 3) is refused by name rather than opened as a one-row "layer".
  if (plan->mask.last_rows > 0)
    return Message(MessageLevel::kError,
                   path + ": the plan holds a KV cache's last " +
                       std::to_string(plan->mask.last_rows) + " rows over " +
                       std::to_string(plan->workload.seq_len) +
                       " keys (schema 3); the studio opens plans of square layers (L <= " +
                       std::to_string(engine::Mask::kMaxLen) +
                       "); see it with `stof plan validate` or `stof layout --q-len`");
  auto mask = engine::PlanMaskToMask(plan->mask, path);
  if (!mask.IsOk()) return Message(MessageLevel::kError, mask.Message());
  std::optional<engine::MaskSpec> spec;
  if (plan->mask.has_spec) spec = plan->mask.spec;
  if (mask->HashHex() != Doc().state.mask.HashHex())
    SetMask(engine::MaskState{*mask, spec}, "", "open plan");
  m_workbench->SetMask(Doc().state.mask, Doc().version, Doc().state.spec, MaskLabel());
  m_workbench->OpenPlan(*plan, *mask, path);
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
  const engine::Plan plan = engine::MakeAnalyticalPlan(
      Doc().state.mask, spec, m_workload, Device(), analysis->selection, "stof-studio",
      analysis->has_run_choice ? &analysis->run_choice : nullptr);
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


bool Studio::RequestQuit() {
  if (m_save.Busy()) {  // let the file be finished; PollSave asks again
    m_quit.after_save = true;
    Message(MessageLevel::kInfo, "quitting once " + m_save.Path() + " is written");
    return false;
  }
  if (!Doc().dirty || m_quit.confirmed) return true;
  m_quit.dialog = true;
  return false;
}

}  // namespace stof::app
