// stof-studio entry point: the linear Dear ImGui + GLFW + OpenGL3 skeleton. Parses options,
// opens the window (or explains how to run without a display), loads the UI font, forwards
// dropped files and close requests to Studio, and runs the frame loop; Studio owns all state.
// Batch modes for tests and docs: --screenshot renders until the analysis is ready, then
// --frames more, saves a PNG and exits; --dump-state writes the state the window shows as
// JSON at that moment; --fps-frames N measures N frames without vsync and prints the rate;
// --save FILE saves the mask as the Save button does and reports the frames drawn meanwhile;
// --tune / --export-plan / --run-plan / --profile / --measure-ladder / --open-plan /
// --open-profile / --baseline run the part-2 jobs in order (Script) before the screenshot.
// The recent-files list lives in $XDG_CONFIG_HOME/stof-studio/recent.json (else ~/.config).
// Files (screenshots, the state dump) are written atomically (engine/core/atomic_file.h); an
// exception that escapes (a bug, memory running out) ends as one line and exit code 1.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>
#include <vector>

#include "app/common/block_size.h"
#include "app/common/option_checks.h"
#include "app/studio/screenshot.h"
#include "app/studio/studio.h"
#include "engine/core/atomic_file.h"
#include "engine/core/json_io.h"
#include "engine/core/recent_files.h"
#include "engine/device/device_spec.h"
#include "engine/graph/model_config.h"
#include "engine/mask/mask_spec.h"
#include "engine/tune/tune_session.h"

namespace {

struct Args {
  std::string pattern = "bigbird";
  int64_t seq = 1024;
  std::string block = "64";
  std::string device;
  std::string open;
  std::string panel = "mask";
  std::string screenshot;
  std::string dump_state;
  std::string save;
  int frames = 5;
  int fps_frames = 0;
  double fps_zoom = 1.0;
  double zoom = 1.0;
  std::string overlay = "blocks-over-mask";
  int width = 1600, height = 900;
  double wait_s = 120;
  // The layer, tuning and profiling (run in order once the analysis is ready; batch modes
  // wait for them before the screenshot and the state dump).
  std::string model = "bert-base";
  std::string model_config;
  int64_t batch = 8;
  bool no_gpu = false;
  bool tune = false;
  std::string methods = "stof";
  std::string budget = "60s";
  uint64_t tune_seed = 1;
  std::string open_plan;
  std::vector<std::string> open_profiles;
  std::string baseline;
  std::string export_plan;
  bool run_plan = false, profile = false, measure_ladder = false;
  std::string also_panels;  // more screenshots: <screenshot stem>-<panel>.png
  int profile_tab = -1;      // the profile view's tab: 0..4 = kernels .. histogram
};

// "a,b,,c" -> {"a", "b", "c"} (--method, --also-panels).
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

// "stof,gtco" -> the methods; an unknown name is an error naming --method.
stof::engine::Expected<std::vector<std::string>> SplitMethods(const std::string& list) {
  const std::vector<std::string> names = SplitList(list);
  if (names.empty()) return stof::engine::Error{"--method: expected at least one method, got '" + list + "'"};
  for (const std::string& name : names)
    if (auto m = stof::engine::ParseTuneMethod(name); !m.IsOk())
      return stof::engine::Error{"--" + m.Message() + " (a comma-separated list)"};
  return names;
}

// The scripted steps of --tune / --run-plan / --profile / ... : 0 = not started, 1 = tuning,
// 2 = follow-up jobs, 3 = done.
struct Script {
  int step = 0;
  bool Any(const Args& a) const {
    return a.tune || !a.open_plan.empty() || !a.open_profiles.empty() || !a.baseline.empty() ||
           a.run_plan || a.profile || a.measure_ladder || !a.export_plan.empty() || a.profile_tab >= 0;
  }
  // One frame; true once every step has finished. *rc = 1 when a step failed.
  bool Step(stof::app::Studio& studio, const Args& a, int* rc) {
    using stof::app::LayerLab;
    LayerLab& lab = studio.Lab();
    if (step == 3) return true;
    if (!studio.JobsIdle()) return false;
    if (step == 0) {
      if (!a.open_plan.empty()) studio.OpenPlanFile(a.open_plan);
      for (const std::string& p : a.open_profiles) lab.OpenProfile(p);
      if (!a.baseline.empty()) {
        lab.OpenProfile(a.baseline);
        auto& prof = lab.Profiles();
        if (!prof.runs.empty() && prof.runs.back().source == a.baseline) {
          prof.baseline = static_cast<int>(prof.runs.size()) - 1;
          if (prof.runs.size() > 1) prof.current = static_cast<int>(prof.runs.size()) - 2;
        }
      }
      if (a.profile_tab >= 0) lab.Profiles().select_tab = a.profile_tab;
      if (a.tune) {
        stof::app::TuneSettings& t = lab.Settings();
        const std::vector<std::string> chosen = *SplitMethods(a.methods);  // CheckArgs passed
        for (stof::app::TuneMethodRow& row : t.methods)
          row.chosen = std::find(chosen.begin(), chosen.end(), stof::engine::TuneMethodName(row.method)) != chosen.end();
        t.budget = a.budget;
        t.seed = a.tune_seed;
        lab.StartTune();
        if (!lab.Tuning()) {  // the reason is the lab's message, not yet on the status line
          bool error = false;
          std::string why = "did not start";
          lab.TakeMessage(&error, &why);
          std::fprintf(stderr, "stof-studio: --tune: %s\n", why.c_str());
          *rc = 1;
          step = 3;
          return true;
        }
      }
      step = 1;
      return false;
    }
    if (step == 1) {
      if (a.tune && !lab.TuneError().empty()) {
        std::fprintf(stderr, "stof-studio: --tune: %s\n", lab.TuneError().c_str());
        *rc = 1;
      }
      if (!a.export_plan.empty()) lab.ExportPlan(a.export_plan);
      if (a.measure_ladder) lab.MeasureLadder();
      if (a.run_plan) lab.RunPlan();
      if (a.profile) lab.ProfileNow();
      step = 2;
      return false;
    }
    step = 3;
    return true;
  }
};

// Files dropped on the window (its user pointer); filled by the GLFW callback, drained at the
// start of a frame.
struct DropQueue {
  std::mutex mutex;
  std::vector<std::string> paths;
};

void GlfwError(int code, const char* desc) { std::fprintf(stderr, "stof-studio: GLFW error %d: %s\n", code, desc); }

void GlfwDrop(GLFWwindow* window, int count, const char** paths) {
  try {  // nothing may propagate through GLFW's C frames
    auto* queue = static_cast<DropQueue*>(glfwGetWindowUserPointer(window));
    if (!queue) return;
    std::lock_guard<std::mutex> lock(queue->mutex);
    for (int i = 0; i < count; ++i) queue->paths.emplace_back(paths[i]);
  } catch (...) {
  }
}

void LoadFont() {
  // DejaVu Sans (Debian's fonts-dejavu-core) reads better than ImGui's 13 px bitmap font.
  const char* candidates[] = {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                              "/usr/share/fonts/TTF/DejaVuSans.ttf"};
  for (const char* path : candidates) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && ImGui::GetIO().Fonts->AddFontFromFileTTF(path, 16.0f)) return;
  }
}

// The options the studio applies later (the layer, the tuning, the extra screenshots, the
// device), checked before a window opens: each error names its option and value, and the
// studio exits 1 as for any bad option.
stof::engine::Status CheckArgs(const Args& a) {
  using stof::engine::MakeError;
  if (auto b = stof::app::ParseBlockSize(a.block, "--block"); !b.IsOk()) return b.ToStatus();
  if (auto p = stof::app::ParsePanel(a.panel); !p.IsOk()) return p.ToStatus();
  for (const std::string& panel : SplitList(a.also_panels))
    if (auto p = stof::app::ParsePanel(panel, "--also-panels"); !p.IsOk()) return p.ToStatus();
  if (!a.device.empty())
    if (auto d = stof::engine::FindBuiltinDevice(a.device); !d.IsOk()) return MakeError("--" + d.Message());
  if (auto m = stof::engine::FindModelPreset(a.model); !m.IsOk()) return MakeError("--" + m.Message());
  if (!a.model_config.empty())
    if (auto c = stof::engine::LoadModelConfig(a.model_config); !c.IsOk())
      return MakeError("--config: " + c.Message());
  if (auto m = SplitMethods(a.methods); !m.IsOk()) return m.ToStatus();
  stof::engine::TuneOptions o;
  STOF_RETURN_IF_ERROR(stof::engine::ParseTuneBudget(a.budget, &o, "--budget"));
  return stof::engine::Status::Ok();
}

using Clock = std::chrono::steady_clock;

// --save: starts the save once the analysis is ready, then counts the frames drawn while the
// SaveJob runs (the window must stay live) and the longest gap between two frame starts.
struct SaveProbe {
  enum class State { kIdle, kRunning, kDone } state = State::kIdle;
  Clock::time_point start, last;
  int frames = 0;
  double longest_ms = 0;

  // One frame; true once the save has finished (rc set to 1 when it failed).
  bool Step(stof::app::Studio& studio, const std::string& path, Clock::time_point t0, int* rc) {
    if (state == State::kDone) return true;
    if (state == State::kIdle) {
      studio.SaveFile(path);
      state = State::kRunning;
      start = last = t0;
      return false;
    }
    longest_ms = std::max(longest_ms, std::chrono::duration<double, std::milli>(t0 - last).count());
    last = t0;
    if (studio.Saving()) {
      ++frames;
      return false;
    }
    state = State::kDone;
    const nlohmann::json message = studio.StateJson()["message"];
    const std::string text = message["text"].get<std::string>();
    if (message["level"] == "error") {
      std::fprintf(stderr, "stof-studio: %s\n", text.c_str());
      *rc = 1;
    } else {
      std::printf("stof-studio: %s; %d frames drawn meanwhile over %.2f s, longest frame gap %.1f ms\n",
                  text.c_str(), frames, std::chrono::duration<double>(t0 - start).count(), longest_ms);
    }
    return true;
  }
};

int Run(const Args& args) {
  stof::app::StudioOptions options;
  options.spec.pattern = args.pattern;
  options.spec.seq_len = args.seq;
  if (stof::engine::Status s = CheckArgs(args); !s.IsOk()) {
    std::fprintf(stderr, "stof-studio: %s\n", s.Message().c_str());
    return 1;
  }
  const auto block = stof::app::ParseBlockSize(args.block, "--block");
  options.block_m = block->block_m;
  options.block_n = block->block_n;
  options.device = args.device;
  options.open = args.open;
  options.panel = args.panel;
  options.use_gpu = !args.no_gpu;
  options.model = args.model;
  options.model_config = args.model_config;
  options.model_batch = args.batch;
  if (auto recent = stof::engine::RecentFilesPath(std::getenv("XDG_CONFIG_HOME"), std::getenv("HOME")); recent.IsOk())
    options.recent_path = *recent;
  else
    std::fprintf(stderr, "stof-studio: %s (recent files kept for this session only)\n", recent.Message().c_str());
  const bool batch = !args.screenshot.empty() || args.fps_frames > 0 || !args.save.empty() ||
                     !args.dump_state.empty();

  glfwSetErrorCallback(GlfwError);
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "stof-studio: cannot open a window (no display?). Run it under a virtual display:\n"
                 "  xvfb-run -a stof-studio --screenshot studio.png\n"
                 "or use the command line: stof --help\n");
    return 2;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  if (batch) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(args.width, args.height, "STOF Studio", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "stof-studio: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return 2;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(batch ? 0 : 1);
  DropQueue drops;
  glfwSetWindowUserPointer(window, &drops);
  glfwSetDropCallback(window, GlfwDrop);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini litter next to the user's files
  ImGui::StyleColorsDark();
  ImGui::GetStyle().FrameRounding = 3.0f;
  LoadFont();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");

  int rc = 0;
  {
    stof::app::Studio studio;
    if (stof::engine::Status s = studio.Init(options); !s.IsOk()) {
      std::fprintf(stderr, "stof-studio: %s\n", s.Message().c_str());
      rc = 1;
    } else {
      if (args.overlay == "mask") studio.OverlayMode() = stof::app::Overlay::kMask;
      if (args.overlay == "blocks") studio.OverlayMode() = stof::app::Overlay::kBlocks;
      if (args.zoom > 1.0) studio.View().zoom = args.zoom;
      const auto start = Clock::now();
      SaveProbe save;
      bool save_done = args.save.empty();
      Script script;
      bool script_done = !script.Any(args);
      size_t shot_index = 0;         // --also-panels: the next extra screenshot
      const std::vector<std::string> extra_panels = SplitList(args.also_panels);
      int ready_frames = -1;         // frames rendered since the analysis was ready
      bool dumped = false;
      std::vector<double> frame_ms;  // --fps-frames
      auto fps_start = Clock::now();
      for (;;) {
        glfwPollEvents();
        if (glfwWindowShouldClose(window)) {
          if (studio.RequestQuit()) break;
          glfwSetWindowShouldClose(window, GLFW_FALSE);
        }
        if (studio.QuitConfirmed()) break;
        {
          std::vector<std::string> dropped;
          {
            std::lock_guard<std::mutex> lock(drops.mutex);
            dropped.swap(drops.paths);
          }
          for (const std::string& p : dropped) {
            studio.PathBuffer() = p;
            studio.OpenFile(p);
          }
        }
        const auto t0 = Clock::now();
        if (args.fps_frames > 0 && ready_frames >= 0 && args.fps_zoom > 1.0) {
          // Pan one cell per frame over a zoomed view: grid, UVs and (above L = 2048) the
          // exact-cell texture are redone as a user's drag would.
          studio.View().zoom = args.fps_zoom;
          studio.View().cx += 1.0;
          if (studio.View().cx >= static_cast<double>(studio.Doc().state.mask.Cols())) studio.View().cx = 0;
        }
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        // Batch runs show no hover: the pointer of a virtual display sits somewhere on the window.
        if (batch) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
        ImGui::NewFrame();
        studio.Draw();
        ImGui::Render();
        int fw = 0, fh = 0;
        glfwGetFramebufferSize(window, &fw, &fh);
        glViewport(0, 0, fw, fh);
        glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

        if (!script_done && studio.AnalysisReady() && (script_done = script.Step(studio, args, &rc)))
          ready_frames = -1;  // the screenshot shows the window after the jobs
        if (ready_frames < 0 && script_done && studio.AnalysisReady()) {
          ready_frames = 0;
          fps_start = Clock::now();
        }
        if (ready_frames >= 0) ++ready_frames;
        const double waited = std::chrono::duration<double>(Clock::now() - start).count();
        if (batch && (ready_frames < 0 || !save_done) && waited > args.wait_s) {
          std::fprintf(stderr, "stof-studio: the %s did not finish in %.0f s\n",
                       !script_done ? "scripted jobs" : ready_frames < 0 ? "analysis" : "save", args.wait_s);
          rc = 1;
          break;
        }
        if (!save_done && ready_frames >= 0) {
          if ((save_done = save.Step(studio, args.save, t0, &rc))) {
            ready_frames = 1;  // screenshot, state and frame rate: the window after the save
            fps_start = Clock::now();
            if (args.screenshot.empty() && args.dump_state.empty() && args.fps_frames <= 0) break;
          }
        }
        if (save_done && !args.dump_state.empty() && !dumped &&
            ready_frames >= (args.screenshot.empty() ? 1 : args.frames)) {
          dumped = true;
          const std::string text = stof::engine::DumpJson(studio.StateJson(), 2) + "\n";
          if (stof::engine::Status w = stof::engine::WriteFileAtomic(args.dump_state, text); !w.IsOk()) {
            std::fprintf(stderr, "stof-studio: --dump-state: %s\n", w.Message().c_str());
            rc = 1;
          }
        }
        if (dumped && !args.save.empty() && args.screenshot.empty() && args.fps_frames <= 0) break;
        if (save_done && !args.screenshot.empty() && ready_frames >= args.frames) {
          // The main screenshot, then one per --also-panels entry (each after --frames frames).
          std::string path = args.screenshot;
          if (shot_index > 0) {
            const std::filesystem::path p(args.screenshot);
            path = (p.parent_path() / (p.stem().string() + "-" + extra_panels[shot_index - 1] + p.extension().string())).string();
          }
          if (stof::engine::Status shot = stof::app::SaveFramebufferPng(path, fw, fh); !shot.IsOk()) {
            std::fprintf(stderr, "stof-studio: %s\n", shot.Message().c_str());
            rc = 1;
          } else {
            std::printf("stof-studio: wrote %s (%d x %d)\n", path.c_str(), fw, fh);
          }
          if (shot_index < extra_panels.size()) {
            auto panel = stof::app::ParsePanel(extra_panels[shot_index]);
            if (!panel.IsOk()) {
              std::fprintf(stderr, "stof-studio: --also-panels: %s\n", panel.Message().c_str());
              rc = 1;
              break;
            }
            studio.ShowPanel(*panel);
            ++shot_index;
            ready_frames = 0;
          } else if (args.fps_frames <= 0) {
            break;
          }
        }
        glfwSwapBuffers(window);
        if (save_done && ready_frames > 0 && args.fps_frames > 0) {
          glFinish();
          frame_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          if (static_cast<int>(frame_ms.size()) >= args.fps_frames) {
            const double total = std::chrono::duration<double>(Clock::now() - fps_start).count();
            std::sort(frame_ms.begin(), frame_ms.end());
            std::printf("stof-studio: %zu frames in %.2f s: %.1f fps (median %.2f ms, p95 %.2f ms), "
                        "L = %lld, %d x %d, GL renderer %s\n",
                        frame_ms.size(), total, static_cast<double>(frame_ms.size()) / total,
                        frame_ms[frame_ms.size() / 2], frame_ms[frame_ms.size() * 95 / 100],
                        static_cast<long long>(studio.Doc().state.mask.Rows()), fw, fh,
                        reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
            break;
          }
        }
      }
    }
  }  // textures are freed while the GL context is alive
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stof-studio: explore sparse attention masks, their block layouts, STOF's kernel "
               "selection and fusion, tune a layer live on this GPU and read CUPTI profiles"};
  Args args;
  using stof::app::IntRange;
  using stof::app::NonEmpty;
  using stof::app::NumberRange;
  stof::app::OneLineErrors(app, "stof-studio");
  const double unbounded = std::numeric_limits<double>::infinity();
  const int most = std::numeric_limits<int>::max();
  std::vector<std::string> patterns;
  for (const std::string& n : stof::engine::MaskPatternNames())
    if (n != "or" && n != "and" && n != "not") patterns.push_back(n);
  std::string presets;
  for (const stof::engine::ModelConfig& c : stof::engine::ModelPresets()) presets += (presets.empty() ? "" : ", ") + c.name;
  app.add_option("--pattern", args.pattern, "Mask generator (see stof mask --help)")->capture_default_str()->check(stof::app::OneOf(patterns));
  app.add_option("--seq", args.seq, "Sequence length")->capture_default_str()->check(IntRange(1, stof::engine::Mask::kMaxLen));
  app.add_option("--block", args.block, "Block size BMxBN (powers of two 16..256)")->capture_default_str();
  app.add_option("--device", args.device, "Built-in device name (default: this GPU, else H100-SXM-80GB)")->check(NonEmpty("a device name"));
  app.add_option("--open", args.open, "Open a mask file (.png, .npy, .json) at start")->check(NonEmpty());
  app.add_option("--panel", args.panel, "Tab to show: mask, layout, selection, fusion, tune, profile, export")->capture_default_str();
  app.add_option("--overlay", args.overlay, "Canvas: mask, blocks-over-mask, blocks")->capture_default_str()->check(stof::app::OneOf({"mask", "blocks-over-mask", "blocks"}));
  app.add_option("--zoom", args.zoom, "Initial canvas zoom (1 = fit)")->capture_default_str()->check(NumberRange(1, unbounded));
  app.add_option("--screenshot", args.screenshot, "Render until the analysis is ready and --frames more, save the window as PNG, exit")->check(NonEmpty());
  app.add_option("--frames", args.frames, "Frames to render after the analysis is ready, before --screenshot")->capture_default_str()->check(IntRange(1, most));
  app.add_option("--dump-state", args.dump_state, "Write the shown state as JSON to FILE (once the analysis is ready)")->check(NonEmpty());
  app.add_option("--save", args.save, "Once the analysis is ready, save the mask to FILE (.png, .npy, .json) as the Save button does; report the frames drawn meanwhile")->check(NonEmpty());
  app.add_option("--fps-frames", args.fps_frames, "Measure N frames without vsync, print the frame rate, exit")->check(IntRange(1, most));
  app.add_option("--fps-zoom", args.fps_zoom, "With --fps-frames: zoom this far in and pan a cell per frame")->capture_default_str()->check(NumberRange(1, unbounded));
  app.add_option("--wait", args.wait_s, "Batch modes: seconds to wait for the analysis and the scripted jobs")->capture_default_str()->check(NumberRange(0, unbounded, /*lo_open=*/true));
  app.add_option("--model", args.model, "Layer of the fusion, tune and profile views: a preset (" + presets + ")")->capture_default_str();
  app.add_option("--config", args.model_config, "A HuggingFace config.json instead of --model")->check(NonEmpty());
  app.add_option("--batch", args.batch, "Batch size of the layer (1.." + std::to_string(stof::engine::Workload::kMaxBatch) + ")")->capture_default_str()->check(IntRange(1, stof::engine::Workload::kMaxBatch));
  app.add_flag("--no-gpu", args.no_gpu, "Never use the GPU: tune and show predictions only");
  app.add_flag("--tune", args.tune, "Once the analysis is ready, tune the layer with --method and --budget (as the Start button)");
  app.add_option("--method", args.methods, "Tuning methods, comma separated: stof, gtco, mcfuser, exhaustive")->capture_default_str();
  app.add_option("--budget", args.budget, "Tuning budget per method: seconds (60s, 2m) or candidates (200c)")->capture_default_str();
  app.add_option("--tune-seed", args.tune_seed, "Tuning seed")->capture_default_str()->check(stof::app::SeedValue());
  app.add_option("--open-plan", args.open_plan, "Open a tuned plan (its mask, layer, scheme and measurements)")->check(NonEmpty());
  app.add_option("--open-profile", args.open_profiles, "Open a layer profile (stof profile layer --out) or a plan as a profile run (repeatable)")->check(NonEmpty());
  app.add_option("--baseline", args.baseline, "Open a layer profile or plan and pin it as the profile baseline")->check(NonEmpty());
  app.add_option("--export-plan", args.export_plan, "After tuning, write the plan to FILE")->check(NonEmpty());
  app.add_flag("--run-plan", args.run_plan, "After tuning (or --open-plan), measure the plan's model again (GPU)");
  app.add_flag("--profile", args.profile, "After tuning, profile the shown scheme's layer (GPU)");
  app.add_flag("--measure-ladder", args.measure_ladder, "Measure the fusion ladder on the GPU");
  app.add_option("--profile-tab", args.profile_tab, "Profile view tab: 0 kernels, 1 timeline, 2 bars, 3 roofline, 4 histogram")->check(IntRange(0, 4));
  app.add_option("--also-panels", args.also_panels, "With --screenshot: also save STEM-PANEL.png for each panel listed (comma separated)");
  app.add_option("--width", args.width, "Window width")->capture_default_str()->check(IntRange(64, 16384));
  app.add_option("--height", args.height, "Window height")->capture_default_str()->check(IntRange(64, 16384));
  try {
    CLI11_PARSE(app, argc, argv);
    return Run(args);
  } catch (const std::exception& e) {
    // A bug or memory running out: one line and a failure code, never std::terminate.
    std::fprintf(stderr, "stof-studio: internal error: %s\n",
                 stof::engine::TextForMessage(e.what()).c_str());
  } catch (...) {
    std::fprintf(stderr, "stof-studio: internal error: an unknown exception\n");
  }
  return 1;
}
