// BatchDriver (batch_driver.h): the scripted jobs, --save, --dump-state, --screenshot and
// --fps-frames, each a step of the window's frame loop. Files are written atomically
// (engine/core/atomic_file.h); every failure is one line on stderr and exit code 1.
#include "app/studio/batch_driver.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/studio/screenshot.h"
#include "app/studio/widgets/clip_audit.h"
#include "app/studio/studio.h"
#include "engine/core/atomic_file.h"
#include "engine/core/json_io.h"
#include "engine/tune/tune_session.h"

namespace stof::app {

bool BatchOptions::Scripted() const {
  return tune || !open_plan.empty() || !open_profiles.empty() || !baseline.empty() || run_plan || profile ||
         measure_ladder || !export_plan.empty() || profile_tab >= 0 || learn > 0;
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  for (size_t b = 0; b < list.size();) {
    size_t e = list.find(',', b);
    if (e == std::string::npos) e = list.size();
    if (e > b) out.push_back(list.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

engine::Expected<std::vector<std::string>> SplitMethods(const std::string& list) {
  const std::vector<std::string> names = SplitList(list);
  if (names.empty()) return engine::Error{"--method: expected at least one method, got '" + list + "'"};
  for (const std::string& name : names)
    if (auto m = engine::ParseTuneMethod(name); !m.IsOk())
      return engine::Error{"--" + m.Message() + " (a comma-separated list)"};
  return names;
}

BatchDriver::BatchDriver(const BatchOptions& options)
    : m_opt(options), m_extra_panels(SplitList(options.also_panels)),
      m_script_done(!options.Scripted()), m_save_done(options.save.empty()) {}

void BatchDriver::Start() { m_start = m_fps_start = Clock::now(); }

void BatchDriver::BeforeFrame(Studio& studio) {
  if (m_opt.fps_frames > 0 && m_ready_frames >= 0 && m_opt.fps_zoom > 1.0) {
    // Pan one cell per frame over a zoomed view: grid, UVs and (above L = 2048) the
    // exact-cell texture are redone as a user's drag would.
    studio.View().zoom = m_opt.fps_zoom;
    studio.View().cx += 1.0;
    if (studio.View().cx >= static_cast<double>(studio.Doc().state.mask.Cols())) studio.View().cx = 0;
  }
}

// ---- the scripted jobs ---------------------------------------------------------------------

bool BatchDriver::StepScript(Studio& studio) {
  if (m_script_step == 4) return true;
  if (!studio.JobsIdle()) return false;
  if (m_script_step == 0) {
    if (!StartScript(studio)) {
      m_script_step = 4;
      return true;
    }
    m_script_step = 1;
    return false;
  }
  if (m_script_step == 1) {
    FollowUpJobs(studio);
    m_script_step = 2;
    return false;
  }
  if (m_script_step == 2) {
    m_script_step = 3;
    if (m_opt.learn > 0) {
      studio.ShowPanel(Panel::kLearn);
      studio.OpenLesson(m_opt.learn - 1);
    }
    return false;
  }
  if (m_opt.learn > 0 && !StepLearn(studio)) return false;
  m_script_step = 4;
  return true;
}

bool BatchDriver::StepLearn(Studio& studio) {
  LearnState& s = studio.Learn();
  const int pages = Lessons()[static_cast<size_t>(s.lesson)].pages;
  if (m_opt.learn_page > 0 && s.page + 1 >= m_opt.learn_page) return true;  // --learn-page
  if (s.page + 1 < pages) {
    studio.StepLesson(1);
    return false;
  }
  const std::string what = "--learn " + std::to_string(m_opt.learn);
  if (!m_learn_answer_applied) {
    m_learn_answer_applied = true;
    const std::optional<LessonSetup> answer = DemoAnswer(s.lesson, studio.CurrentLearnFacts(), s.memory);
    if (!answer) {
      std::fprintf(stderr, "stof-studio: %s: no single change answers the question with these views\n", what.c_str());
      m_rc = 1;
      return true;
    }
    studio.ApplyLessonSetup(*answer);
    return false;
  }
  if (!studio.CurrentLessonPage().answered) {
    std::fprintf(stderr, "stof-studio: %s: the change made did not answer the question\n", what.c_str());
    m_rc = 1;
  }
  return true;
}

bool BatchDriver::StartScript(Studio& studio) {
  LayerWorkbench& bench = studio.Workbench();
  if (!m_opt.open_plan.empty()) studio.OpenPlanFile(m_opt.open_plan);
  for (const std::string& p : m_opt.open_profiles) bench.OpenProfile(p);
  if (!m_opt.baseline.empty()) {
    bench.OpenProfile(m_opt.baseline);
    auto& prof = bench.Profiles();
    if (!prof.runs.empty() && prof.runs.back().source == m_opt.baseline) {
      prof.baseline = static_cast<int>(prof.runs.size()) - 1;
      if (prof.runs.size() > 1) prof.current = static_cast<int>(prof.runs.size()) - 2;
    }
  }
  if (m_opt.profile_tab >= 0) bench.Profiles().select_tab = m_opt.profile_tab;
  if (!m_opt.tune) return true;
  TuneSettings t = bench.Settings();
  const std::vector<std::string> chosen = *SplitMethods(m_opt.methods);  // checked before the window opened
  for (TuneMethodRow& row : t.methods)
    row.chosen = std::find(chosen.begin(), chosen.end(), engine::TuneMethodName(row.method)) != chosen.end();
  t.budget = m_opt.budget;
  t.seed = m_opt.tune_seed;
  bench.EditSettings(t);
  bench.StartTune();
  if (bench.Tuning()) return true;
  // The reason is the workbench's message, not yet on the status line.
  bool error = false;
  std::string why = "did not start";
  bench.TakeMessage(&error, &why);
  std::fprintf(stderr, "stof-studio: --tune: %s\n", why.c_str());
  m_rc = 1;
  return false;
}

void BatchDriver::FollowUpJobs(Studio& studio) {
  LayerWorkbench& bench = studio.Workbench();
  if (m_opt.tune && !bench.TuneError().empty()) {
    std::fprintf(stderr, "stof-studio: --tune: %s\n", bench.TuneError().c_str());
    m_rc = 1;
  }
  if (!m_opt.export_plan.empty()) bench.ExportPlan(m_opt.export_plan);
  if (m_opt.measure_ladder) bench.MeasureLadder();
  if (m_opt.run_plan) bench.RunPlan();
  if (m_opt.profile) bench.ProfileNow();
}

// ---- the frame's batch steps -----------------------------------------------------------------

bool BatchDriver::AfterRender(Studio& studio, int fw, int fh, Clock::time_point t0) {
  if (!m_script_done && studio.AnalysisReady() && (m_script_done = StepScript(studio)))
    m_ready_frames = -1;  // the screenshot shows the window after the jobs
  if (m_ready_frames < 0 && m_script_done && studio.AnalysisReady()) {
    m_ready_frames = 0;
    m_fps_start = Clock::now();
  }
  if (m_ready_frames >= 0) ++m_ready_frames;
  const double waited = std::chrono::duration<double>(Clock::now() - m_start).count();
  if (Batch() && (m_ready_frames < 0 || !m_save_done) && waited > m_opt.wait_s) {
    std::fprintf(stderr, "stof-studio: the %s did not finish in %.0f s\n",
                 !m_script_done ? "scripted jobs" : m_ready_frames < 0 ? "analysis" : "save", m_opt.wait_s);
    m_rc = 1;
    return true;
  }
  if (!m_save_done && m_ready_frames >= 0) {
    if ((m_save_done = StepSave(studio, t0))) {
      m_ready_frames = 1;  // screenshot, state and frame rate: the window after the save
      m_fps_start = Clock::now();
      if (m_opt.screenshot.empty() && m_opt.dump_state.empty() && m_opt.fps_frames <= 0) return true;
    }
  }
  // --frames frames after everything is ready, with or without a screenshot: a tab's content
  // settles over its first frames (the clipping audit reads the frame drawn).
  if (m_save_done && !m_opt.dump_state.empty() && !m_dumped && m_ready_frames >= m_opt.frames)
    DumpState(studio);
  // Nothing left to do after the state (with or without a save): --dump-state alone ends here.
  if (m_dumped && m_opt.screenshot.empty() && m_opt.fps_frames <= 0) return true;
  if (m_save_done && !m_opt.screenshot.empty() && m_ready_frames >= m_opt.frames) return TakeScreenshot(studio, fw, fh);
  return false;
}

bool BatchDriver::StepSave(Studio& studio, Clock::time_point t0) {
  if (m_save_state == SaveState::kDone) return true;
  if (m_save_state == SaveState::kIdle) {
    studio.SaveFile(m_opt.save);
    m_save_state = SaveState::kRunning;
    m_save_start = m_save_last = t0;
    return false;
  }
  m_save_longest_ms = std::max(m_save_longest_ms, std::chrono::duration<double, std::milli>(t0 - m_save_last).count());
  m_save_last = t0;
  if (studio.Saving()) {
    ++m_save_frames;
    return false;
  }
  m_save_state = SaveState::kDone;
  const nlohmann::json message = studio.StateJson()["message"];
  const std::string text = message["text"].get<std::string>();
  if (message["level"] == "error") {
    std::fprintf(stderr, "stof-studio: %s\n", text.c_str());
    m_rc = 1;
  } else {
    std::printf("stof-studio: %s; %d frames drawn meanwhile over %.2f s, longest frame gap %.1f ms\n",
                text.c_str(), m_save_frames, std::chrono::duration<double>(t0 - m_save_start).count(),
                m_save_longest_ms);
  }
  return true;
}

void BatchDriver::NoteShownError(const Studio& studio) {
  if (m_error_noted) return;
  m_error_noted = true;
  if (const std::string& e = studio.ShownError(); !e.empty()) {
    std::fprintf(stderr, "stof-studio: %s\n", e.c_str());
    m_rc = 1;
  }
}

void BatchDriver::DumpState(const Studio& studio) {
  NoteShownError(studio);
  m_dumped = true;
  nlohmann::json state = studio.StateJson();
  // Text this frame cut off (the GUI tests want none at 1600 x 900 and 1280 x 720).
  state["clipping"] = nlohmann::json::array();
  for (const ClippedText& c : FindClippedText())
    state["clipping"].push_back({{"window", c.window}, {"what", c.what}});
  state["window_size"] = {ImGui::GetIO().DisplaySize.x, ImGui::GetIO().DisplaySize.y};
  const std::string text = engine::DumpJson(state, 2) + "\n";
  if (engine::Status w = engine::WriteFileAtomic(m_opt.dump_state, text); !w.IsOk()) {
    std::fprintf(stderr, "stof-studio: --dump-state: %s\n", w.Message().c_str());
    m_rc = 1;
  }
}

bool BatchDriver::TakeScreenshot(Studio& studio, int fw, int fh) {
  if (m_shot_index == 0) NoteShownError(studio);
  std::string path = m_opt.screenshot;
  if (m_shot_index > 0) {
    const std::filesystem::path p(m_opt.screenshot);
    path = (p.parent_path() / (p.stem().string() + "-" + m_extra_panels[m_shot_index - 1] + p.extension().string()))
               .string();
  }
  if (engine::Status shot = SaveFramebufferPng(path, fw, fh); !shot.IsOk()) {
    std::fprintf(stderr, "stof-studio: %s\n", shot.Message().c_str());
    m_rc = 1;
  } else {
    std::printf("stof-studio: wrote %s (%d x %d)\n", path.c_str(), fw, fh);
  }
  if (m_shot_index < m_extra_panels.size()) {
    auto panel = ParsePanel(m_extra_panels[m_shot_index]);
    if (!panel.IsOk()) {
      std::fprintf(stderr, "stof-studio: --also-panels: %s\n", panel.Message().c_str());
      m_rc = 1;
      return true;
    }
    studio.ShowPanel(*panel);
    ++m_shot_index;
    m_ready_frames = 0;
    return false;
  }
  return m_opt.fps_frames <= 0;
}

bool BatchDriver::AfterSwap(const Studio& studio, int fw, int fh, Clock::time_point t0) {
  if (!m_save_done || m_ready_frames <= 0 || m_opt.fps_frames <= 0) return false;
  glFinish();
  m_frame_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  if (static_cast<int>(m_frame_ms.size()) < m_opt.fps_frames) return false;
  const double total = std::chrono::duration<double>(Clock::now() - m_fps_start).count();
  std::sort(m_frame_ms.begin(), m_frame_ms.end());
  std::printf("stof-studio: %zu frames in %.2f s: %.1f fps (median %.2f ms, p95 %.2f ms), "
              "L = %lld, %d x %d, GL renderer %s\n",
              m_frame_ms.size(), total, static_cast<double>(m_frame_ms.size()) / total,
              m_frame_ms[m_frame_ms.size() / 2], m_frame_ms[m_frame_ms.size() * 95 / 100],
              static_cast<long long>(studio.Doc().state.mask.Rows()), fw, fh,
              reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  return true;
}

}  // namespace stof::app
