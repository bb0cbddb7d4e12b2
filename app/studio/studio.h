// Studio: the session and UI state of stof-studio and its frame. It owns the mask document
// with its undo history (MaskDocument), the edit tool settings, the view choices (block size,
// overlay, workload, device), the latest analysis (AnalysisCache), the canvas textures
// (MaskTextures), the layer of the fusion / tune / profile views (LayerWorkbench) and the
// recent-files list, and draws the window each frame (studio_frame.cpp). Heavy work never
// runs per frame: mask edits touch only the changed cells and texels, layouts / selection /
// the block-size table run on the AnalysisWorker when the mask version or a choice changes,
// and mask files are written by a SaveJob. Each panel's own widget state (export paths, sort
// order, the preset being edited, the canvas' tool and zoom) lives here, in the struct the
// panel declares, never in function statics, so two studios never share it. app_window.cpp
// draws it each frame and batch_driver.cpp scripts it. The panels never see Studio:
// studio_views.cpp fills the view state each one draws and applies the actions it returns.
// StateJson (studio_state_json.cpp) is what --dump-state writes.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/studio/analysis_cache.h"
#include "app/studio/canvas_state.h"
#include "app/studio/cli_command.h"
#include "app/studio/gpu_worker.h"
#include "app/studio/layer_workbench.h"
#include "app/studio/learn/learn_tour.h"
#include "app/studio/mask_document.h"
#include "app/studio/mask_textures.h"
#include "app/studio/panels/export_panel.h"
#include "app/studio/panels/mask_panel.h"
#include "app/studio/panels/selection_panel.h"
#include "app/studio/save_job.h"
#include "app/studio/studio_defaults.h"
#include "app/studio/widgets/error_strip.h"
#include "engine/analysis/layout_analysis.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/layout/layout_export.h"
#include "engine/mask/mask_spec.h"

namespace stof::app {

// The embedded default (studio_defaults.h): BigBird at L = 1024, BERT-base workload (batch 8,
// 12 heads, d = 64), block 64 x 64, the local GPU's spec or the H100's when there is none.
struct StudioOptions {
  engine::MaskSpec spec = studio_defaults::MaskGenerator();  // paper parameters
  engine::Workload workload;  // of the Kernel selection view (kv_heads, q_len from the options)
  int64_t block_m = studio_defaults::kBlock, block_n = studio_defaults::kBlock;
  std::string device;     // "" = local GPU, else H100-SXM-80GB
  std::string open;       // a mask file to open instead of the spec
  std::string recent_path;  // the recent-files list (engine::RecentFilesPath); "" = not kept
  std::string panel = "mask";
  bool use_gpu = true;    // false: the fusion / tune / profile jobs predict even on a GPU
  std::string model = studio_defaults::kModel;  // the layer of the fusion and tune views
  std::string model_config;                     // a config.json instead of the preset
  int64_t model_batch = studio_defaults::kBatch;
  Overlay overlay = Overlay::kBlocksOverMask;  // the canvas' overlay
  double zoom = 1.0;                           // the canvas' zoom (1 = fit)
};

enum class Panel { kLearn, kMask, kLayout, kSelection, kExport, kFusion, kTune, kProfile };
// "learn", "mask", "layout", "selection", "export", "fusion", "tune", "profile"
const char* PanelName(Panel p);
engine::Expected<Panel> ParsePanel(const std::string& name, const std::string& what = "--panel");

// The devices the views predict for: the built-in specs, this GPU's queried spec first when
// there is one.
struct DeviceChoice {
  std::vector<engine::DeviceSpec> devices;
  int index = 0;     // the chosen one
  int initial = 0;   // the start-up choice
  std::string note;  // why the start-up device was chosen, for the status line
  const engine::DeviceSpec& Current() const { return devices[static_cast<size_t>(index)]; }
};

enum class MessageLevel { kInfo, kError };
struct StatusMessage {  // the status line's text (an error also shows in the error strip)
  MessageLevel level = MessageLevel::kInfo;
  std::string text;
};

class Studio {
 public:
  engine::Status Init(const StudioOptions& options);
  void Draw();                       // one frame of UI over the whole window
  nlohmann::json StateJson() const;  // what --dump-state writes and the GUI tests check
  bool AnalysisReady() const;        // the shown analysis matches the current inputs
  bool JobsIdle() const;             // no GPU job queued or running, every result landed

  // ---- commands of the window (app_window.cpp) and the batch driver --------------------------
  // The panels' requests come back as actions and are applied in studio_views.cpp, through the
  // private commands below.
  void OpenFile(const std::string& path);        // errors become the status message
  void SaveFile(const std::string& path);        // starts a SaveJob; the result comes later
  bool Saving() const { return m_save.Busy(); }
  void ShowPanel(Panel p) {                      // selects the tab on the next frame
    m_panel = p;
    m_force_panel = true;
  }
  // A tuned plan (stof tune, or exported here): its mask goes into the editor, its layer and
  // scheme into the fusion view, its measurements into the profile runs (a baseline).
  void OpenPlanFile(const std::string& path);
  // The Learn tab (learn/learn_tour.h): open a lesson (-1: the lesson list) or step its pages;
  // each page's setup is applied to the real views, and a question page records what it
  // compares the student's change with.
  void OpenLesson(int lesson);
  void StepLesson(int delta);
  void ApplyLessonSetup(const LessonSetup& setup);
  LearnState& Learn() { return m_learn; }
  const LearnState& Learn() const { return m_learn; }
  LessonPage CurrentLessonPage() const;  // from the live views (cheap: copies of their results)
  LearnFacts CurrentLearnFacts() const;  // the live views' results the lessons cite
  // Quitting: returns true when the window may close now; otherwise the unsaved-changes
  // dialog opens and the user decides.
  bool RequestQuit();
  bool QuitConfirmed() const { return m_quit.confirmed; }
  // The error shown now (the analysis' or the last message's), "" when there is none: a
  // batch run that shows one exits non-zero (batch_driver.cpp).
  const std::string& ShownError() const { return CurrentError(); }

  // ---- models the batch driver reads and scripts ---------------------------------------------
  const Document& Doc() const { return m_doc.Get(); }
  LayerWorkbench& Workbench() { return *m_workbench; }
  const LayerWorkbench& Workbench() const { return *m_workbench; }
  CanvasView& View() { return m_view; }  // the canvas' zoom (the batch driver's --fps-zoom)
  std::string& PathBuffer() { return m_path_buffer; }  // the file bar's path field (drops)

 private:
  // ---- commands the views' actions apply (studio.cpp) ----------------------------------------
  void ApplySpec(const engine::MaskSpec& spec, bool record);  // regenerate from a preset
  void Undo();
  void Redo();
  // Mask edits from the canvas: BeginGesture captures the state for undo (Draw records the
  // step once no button is down); ApplyEdit changes the cells and re-sends their texels.
  void BeginGesture(const std::string& label);
  void ApplyEdit(const EditCommand& edit);
  void SetBlockSize(int64_t block_m, int64_t block_n);
  void SetWorkload(const engine::Workload& w);
  void SetDevice(int index);                     // into m_devices.devices
  void SetOverlay(Overlay overlay) { m_overlay = overlay; }  // the textures follow in Draw()
  void ExportLayout(const std::string& path, engine::LayoutExportFormat format);
  void ExportPlan(const std::string& path);
  void Message(MessageLevel level, const std::string& text);

  // ---- state the views are filled from -------------------------------------------------------
  const engine::MaskHistory& History() const { return m_doc.History(); }
  const engine::DeviceSpec& Device() const { return m_devices.Current(); }
  // The latest finished analysis (may be for an older mask version while one is running).
  const engine::MaskAnalysis* Analysis() const { return m_analyses.Latest(); }
  // Bumped each time Analysis() is replaced (caches keyed on it never alias).
  uint64_t AnalysisSerial() const { return m_analyses.Serial(); }
  // The analysis' layout has the mask's shape (it may still be one version behind).
  bool LayoutFits() const { return m_analyses.Fits(Doc().state.mask); }
  CliCommands Commands() const;

  // studio.cpp: the document, the choices, the analysis, files.
  void StepHistory(bool redo);
  void EndGesture();               // records the open gesture's undo step, requests the analysis
  void MaskReplaced();             // after a whole-mask change: textures, analysis request
  void RequestAnalysis();
  LayoutBlend LatestLayout() const;  // the latest analysis' layout (serial 0: none yet)
  LayoutBlend ShownBlend() const;    // the layout the mask textures blend in (serial 0: none)
  void SetMask(engine::MaskState state, const std::string& path, const std::string& label);
  void LoadRecent();
  void AddRecent(const std::string& path);
  void PollSave();
  std::string MaskLabel() const;
  // The error shown in full above the status line: the analysis error, else an error message;
  // "" when there is none (the strip also hides one the user dismissed).
  const std::string& CurrentError() const;
  // studio_views.cpp: each panel's view state filled from the models, its actions applied.
  void ShowFileBar();
  void ShowCanvas();
  // The body of one tab of the side area; true when it asks for the fusion view.
  bool ShowPanelBody(Panel panel);
  void ShowLearnTab();
  void ShowMaskTab();
  void ShowLayoutTab();
  void ShowSelectionTab();
  void ShowExportTab();
  void ShowFusionTab();
  bool ShowTuneTab();  // true: the user asked for the fusion view
  void ShowProfileTab();
  // studio_frame.cpp: the window shell.
  void DrawTabs(float height);
  void DrawStatusBar();
  void DrawQuitDialog();
  void HandleShortcuts();

  MaskDocument m_doc;
  EditSettings m_edit;
  CanvasView m_view;
  Overlay m_overlay = Overlay::kBlocksOverMask;
  Panel m_panel = Panel::kMask;
  bool m_force_panel = true;  // select m_panel's tab on the next frame
  int64_t m_block_m = studio_defaults::kBlock, m_block_n = studio_defaults::kBlock;
  engine::Workload m_workload;
  DeviceChoice m_devices;

  AnalysisCache m_analyses;
  MaskTextures m_textures;
  SaveJob m_save;
  // Declared in this order so the workbench (which holds a reference) dies before the worker.
  std::unique_ptr<GpuWorker> m_gpu;
  std::unique_ptr<LayerWorkbench> m_workbench;
  // The panels' own widget state between frames (never function statics: two studios never
  // share it).
  MaskPanelUi m_mask_ui;      // also the generator the Learn tab and new masks set
  SelectionPanelUi m_selection_ui;
  ExportPanelUi m_export_ui;  // also the tune view's plan path

  LearnState m_learn;
  StatusMessage m_message;
  ErrorStrip m_error_strip;
  std::vector<std::string> m_recent;
  std::string m_recent_path;
  std::string m_path_buffer;
  struct Quit {
    bool after_save = false;  // "Save and quit", or a quit while a save ran
    bool dialog = false;      // open the unsaved-changes dialog on the next frame
    bool confirmed = false;   // the window may close
  } m_quit;
};

}  // namespace stof::app
