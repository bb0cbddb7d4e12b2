// BatchDriver: the scripted and batch runs of stof-studio, one step per frame of the window's
// loop (app_window.cpp). Scripted jobs (--tune, --open-plan, --open-profile, --baseline,
// --export-plan, --run-plan, --profile, --measure-ladder, --profile-tab) run in order once the
// analysis is ready, in the interactive window too. The batch modes end the program by
// themselves: --save saves the mask as the Save button does and reports the frames drawn
// meanwhile; --dump-state writes the state the window shows as JSON (Studio::StateJson);
// --screenshot renders --frames more frames, saves a PNG (and one per --also-panels entry);
// --fps-frames measures that many frames without vsync (panning a cell per frame with
// --fps-zoom). Each waits at most --wait seconds for the analysis and the jobs. --learn N runs
// a Learn lesson page by page, then makes the change that answers its question. main.cpp
// fills BatchOptions from the command line; the GUI tests (tests/app/studio_test.sh) use it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace stof::app {

class Studio;

struct BatchOptions {
  std::string screenshot;  // PNG of the window, then exit
  std::string dump_state;  // the shown state as JSON
  std::string save;        // the mask file to save
  int frames = 5;          // frames after the analysis is ready, before the screenshot
  int fps_frames = 0;      // frames to time (0 = none)
  double fps_zoom = 1.0;
  double wait_s = 120;     // the longest wait for the analysis and the scripted jobs
  // The scripted jobs (run in order once the analysis is ready; the batch modes wait for
  // them before the screenshot and the state dump).
  bool tune = false;
  std::string methods = "stof";  // "stof,gtco": checked with SplitMethods before the window opens
  std::string budget = "60s";
  uint64_t tune_seed = 1;
  std::string open_plan;
  std::vector<std::string> open_profiles;
  std::string baseline;
  std::string export_plan;
  bool run_plan = false, profile = false, measure_ladder = false;
  std::string also_panels;  // more screenshots: <screenshot stem>-<panel>.png
  int profile_tab = -1;      // the profile view's tab: 0..4 = kernels .. histogram
  int learn = 0;             // 1..3: run that Learn lesson from start to end (page by page,
                             // then the change that answers its question); 0 = none
  int learn_page = 0;        // with learn: stop on this page (1-based) instead; 0 = the end

  // A batch mode was asked for: no vsync, a fixed-size window, no hover, and an exit of its own.
  bool Batch() const { return !screenshot.empty() || fps_frames > 0 || !save.empty() || !dump_state.empty(); }
  // Any scripted job was asked for.
  bool Scripted() const;
};

// "a,b,,c" -> {"a", "b", "c"} (--method, --also-panels).
std::vector<std::string> SplitList(const std::string& list);
// "stof,gtco" -> the methods; an unknown name is an error naming --method.
engine::Expected<std::vector<std::string>> SplitMethods(const std::string& list);

class BatchDriver {
 public:
  using Clock = std::chrono::steady_clock;
  explicit BatchDriver(const BatchOptions& options);

  bool Batch() const { return m_opt.Batch(); }
  // Once Studio::Init succeeded: the --wait clock starts.
  void Start();
  // Before the frame is drawn: the --fps-zoom pan.
  void BeforeFrame(Studio& studio);
  // After the frame is rendered, before it is shown (fw x fh: the framebuffer; t0: the frame's
  // start): the scripted jobs, the save, the state dump and the screenshots. True = exit now.
  bool AfterRender(Studio& studio, int fw, int fh, Clock::time_point t0);
  // After the buffers are swapped: the --fps-frames timing. True = exit now.
  bool AfterSwap(const Studio& studio, int fw, int fh, Clock::time_point t0);
  int ExitCode() const { return m_rc; }  // 0, or 1 when a step failed

 private:
  // The scripted steps: 0 = not started, 1 = tuning, 2 = follow-up jobs, 3 = the lesson of
  // --learn, 4 = done. One frame; true once every step has finished.
  bool StepScript(Studio& studio);
  bool StartScript(Studio& studio);    // step 0: opens files, starts the tuning
  void FollowUpJobs(Studio& studio);   // step 1: export, ladder, run plan, profile
  // Step 3 (--learn N), one page per call once the views are ready, then the demo answer;
  // true when the lesson has ended (an unanswered question is a failure).
  bool StepLearn(Studio& studio);
  // --save: starts the save once the analysis is ready, then counts the frames drawn while
  // the SaveJob runs (the window must stay live) and the longest gap between two frame
  // starts. One frame; true once the save has finished.
  bool StepSave(Studio& studio, Clock::time_point t0);
  void DumpState(const Studio& studio);
  // A batch run whose window shows an error (a start option that failed: --open of a missing
  // file, a plan that does not load, a job that needs a GPU) prints it once and exits 1.
  void NoteShownError(const Studio& studio);
  // The main screenshot, then one per --also-panels entry (each after --frames frames).
  // True = exit now.
  bool TakeScreenshot(Studio& studio, int fw, int fh);

  BatchOptions m_opt;
  std::vector<std::string> m_extra_panels;  // --also-panels
  int m_rc = 0;
  Clock::time_point m_start, m_fps_start;
  int m_script_step = 0;
  bool m_script_done = false;
  bool m_learn_answer_applied = false;
  int m_ready_frames = -1;   // frames rendered since the analysis (and the jobs) were ready
  bool m_save_done = false;
  enum class SaveState { kIdle, kRunning, kDone } m_save_state = SaveState::kIdle;
  Clock::time_point m_save_start, m_save_last;
  int m_save_frames = 0;
  double m_save_longest_ms = 0;
  bool m_dumped = false;
  bool m_error_noted = false;
  size_t m_shot_index = 0;   // --also-panels: the next extra screenshot
  std::vector<double> m_frame_ms;  // --fps-frames
};

}  // namespace stof::app
