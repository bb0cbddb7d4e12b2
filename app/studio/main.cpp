// stof-studio entry point: parses and checks the options, then opens the window
// (app_window.h) with the batch driver (batch_driver.h), which runs the scripted jobs and the
// batch modes (--screenshot, --dump-state, --fps-frames, --save) when they are asked for.
// The recent-files list lives in $XDG_CONFIG_HOME/stof-studio/recent.json (else ~/.config).
// Exit codes: 0 ok, 2 a usage error (a bad option, as stof's), 1 failed work: a batch run
// (--screenshot, --dump-state, ...) whose window shows an error, such as --open of a missing
// file, or an exception that escapes (a bug, memory running out), which ends as one line.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "app/common/block_size.h"
#include "app/common/option_checks.h"
#include "app/studio/app_window.h"
#include "app/studio/batch_driver.h"
#include "app/studio/learn/learn_tour.h"
#include "app/studio/studio.h"
#include "app/studio/studio_defaults.h"
#include "engine/core/json_io.h"
#include "engine/core/recent_files.h"
#include "engine/device/device_spec.h"
#include "engine/graph/model_config.h"
#include "engine/mask/mask_spec.h"
#include "engine/tune/tune_session.h"

namespace {

// The defaults are the studio's own (studio_defaults.h), shown by --help.
struct Args {
  std::string pattern = stof::app::studio_defaults::kPattern;
  int64_t seq = stof::app::studio_defaults::kSeqLen;
  std::string block = std::to_string(stof::app::studio_defaults::kBlock);
  std::string device;
  std::string open;
  std::string panel = "mask";
  double zoom = 1.0;
  std::string overlay = "blocks-over-mask";
  stof::app::WindowSize window;
  // The layer of the fusion, tune and profile views.
  std::string model = stof::app::studio_defaults::kModel;
  std::string model_config;
  int64_t batch = stof::app::studio_defaults::kBatch;
  int64_t kv_heads = 0, q_len = 0;  // the Kernel selection's workload (0: as many as heads, all rows)
  bool no_gpu = false;
  stof::app::BatchOptions run;  // the scripted jobs and the batch modes
};

// The options the studio applies later (the layer, the tuning, the extra screenshots, the
// device), checked before a window opens: each error names its option and value, and the
// studio exits 1 as for any bad option.
stof::engine::Status CheckArgs(const Args& a) {
  using stof::engine::MakeError;
  if (auto b = stof::app::ParseBlockSize(a.block, "--block"); !b.IsOk()) return b.ToStatus();
  if (auto p = stof::app::ParsePanel(a.panel); !p.IsOk()) return p.ToStatus();
  for (const std::string& panel : stof::app::SplitList(a.run.also_panels))
    if (auto p = stof::app::ParsePanel(panel, "--also-panels"); !p.IsOk()) return p.ToStatus();
  if (!a.device.empty())
    if (auto d = stof::engine::FindBuiltinDevice(a.device); !d.IsOk()) return MakeError("--" + d.Message());
  if (auto m = stof::engine::FindModelPreset(a.model); !m.IsOk()) return MakeError("--" + m.Message());
  if (!a.model_config.empty())
    if (auto c = stof::engine::LoadModelConfig(a.model_config); !c.IsOk())
      return MakeError("--config: " + c.Message());
  if (auto m = stof::app::SplitMethods(a.run.methods); !m.IsOk()) return m.ToStatus();
  const int64_t heads = stof::engine::Workload{}.heads;  // the Kernel selection's at start
  if (a.kv_heads > 0 && heads % a.kv_heads != 0)
    return MakeError("--kv-heads: expected a divisor of the selection's heads " +
                     std::to_string(heads) + ", got " + std::to_string(a.kv_heads));
  if (a.q_len > a.seq)
    return MakeError("--q-len: expected at most --seq " + std::to_string(a.seq) + ", got " +
                     std::to_string(a.q_len));
  stof::engine::TuneOptions o;
  STOF_RETURN_IF_ERROR(stof::engine::ParseTuneBudget(a.run.budget, &o, "--budget"));
  return stof::engine::Status::Ok();
}

int Run(const Args& args) {
  stof::app::StudioOptions options;
  options.spec.pattern = args.pattern;
  options.spec.seq_len = args.seq;
  if (stof::engine::Status s = CheckArgs(args); !s.IsOk()) {
    std::fprintf(stderr, "stof-studio: %s\n", s.Message().c_str());
    return 2;  // a usage error, as stof's
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
  options.workload.kv_heads = args.kv_heads;
  options.workload.q_len = args.q_len;  // all of the mask's rows is 0 (Studio::RequestAnalysis)
  if (args.overlay == "mask") options.overlay = stof::app::Overlay::kMask;
  if (args.overlay == "blocks") options.overlay = stof::app::Overlay::kBlocks;
  options.zoom = args.zoom;
  if (auto recent = stof::engine::RecentFilesPath(std::getenv("XDG_CONFIG_HOME"), std::getenv("HOME")); recent.IsOk())
    options.recent_path = *recent;
  else
    std::fprintf(stderr, "stof-studio: %s (recent files kept for this session only)\n", recent.Message().c_str());
  stof::app::BatchDriver driver(args.run);
  return stof::app::RunStudioWindow(args.window, options, driver);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stof-studio: explore sparse attention masks, their block layouts, STOF's kernel "
               "selection and fusion, tune a layer live on this GPU and read CUPTI profiles"};
  Args args;
  using stof::app::IntRange;
  using stof::app::NonEmpty;
  using stof::app::NumberRange;
  app.set_version_flag("--version", "stof-studio 0.1.0");
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
  app.add_option("--panel", args.panel, "Tab to show: learn, mask, layout, selection, fusion, tune, profile, export")->capture_default_str();
  app.add_option("--learn", args.run.learn, "Run Learn lesson N (1..3) from start to end, then make the change that answers its question")->check(IntRange(1, static_cast<int>(stof::app::Lessons().size())));
  app.add_option("--learn-page", args.run.learn_page, "With --learn: stop on page P (1-based) of the lesson")->check(IntRange(1, 16))->needs("--learn");
  app.add_option("--overlay", args.overlay, "Canvas: mask, blocks-over-mask, blocks")->capture_default_str()->check(stof::app::OneOf({"mask", "blocks-over-mask", "blocks"}));
  app.add_option("--zoom", args.zoom, "Initial canvas zoom (1 = fit)")->capture_default_str()->check(NumberRange(1, unbounded));
  app.add_option("--screenshot", args.run.screenshot, "Render until the analysis is ready and --frames more, save the window as PNG, exit")->check(NonEmpty());
  app.add_option("--frames", args.run.frames, "Frames to render after the analysis is ready, before --screenshot")->capture_default_str()->check(IntRange(1, most));
  app.add_option("--dump-state", args.run.dump_state, "Write the shown state as JSON to FILE (once the analysis is ready)")->check(NonEmpty());
  app.add_option("--save", args.run.save, "Once the analysis is ready, save the mask to FILE (.png, .npy, .json) as the Save button does; report the frames drawn meanwhile")->check(NonEmpty());
  app.add_option("--fps-frames", args.run.fps_frames, "Measure N frames without vsync, print the frame rate, exit")->check(IntRange(1, most));
  app.add_option("--fps-zoom", args.run.fps_zoom, "With --fps-frames: zoom this far in and pan a cell per frame")->capture_default_str()->check(NumberRange(1, unbounded));
  app.add_option("--wait", args.run.wait_s, "Batch modes: seconds to wait for the analysis and the scripted jobs")->capture_default_str()->check(NumberRange(0, unbounded, /*lo_open=*/true));
  app.add_option("--model", args.model, "Layer of the fusion, tune and profile views: a preset (" + presets + ")")->capture_default_str();
  app.add_option("--config", args.model_config, "A HuggingFace config.json instead of --model")->check(NonEmpty());
  app.add_option("--batch", args.batch, "Batch size of the layer (1.." + std::to_string(stof::engine::Workload::kMaxBatch) + ")")->capture_default_str()->check(IntRange(1, stof::engine::Workload::kMaxBatch));
  app.add_option("--kv-heads", args.kv_heads, "Kernel selection: key/value heads (GQA: a divisor of its heads; 0 = as many)")->capture_default_str()->check(IntRange(0, stof::engine::Workload::kMaxHeads));
  app.add_option("--q-len", args.q_len, "Kernel selection: query rows, a KV cache's last N rows over the mask's keys (0 = all)")->capture_default_str()->check(IntRange(0, stof::engine::Mask::kMaxLen));
  app.add_flag("--no-gpu", args.no_gpu, "Never use the GPU: tune and show predictions only");
  app.add_flag("--tune", args.run.tune, "Once the analysis is ready, tune the layer with --method and --budget (as the Start button)");
  app.add_option("--method", args.run.methods, "Tuning methods, comma separated: stof, gtco, mcfuser, exhaustive")->capture_default_str();
  app.add_option("--budget", args.run.budget, "Tuning budget per method: seconds (60s, 2m) or candidates (200c)")->capture_default_str();
  app.add_option("--tune-seed", args.run.tune_seed, "Tuning seed")->capture_default_str()->check(stof::app::SeedValue());
  app.add_option("--open-plan", args.run.open_plan, "Open a tuned plan (its mask, layer, scheme and measurements)")->check(NonEmpty());
  app.add_option("--open-profile", args.run.open_profiles, "Open a layer profile (stof profile layer --out) or a plan as a profile run (repeatable)")->check(NonEmpty());
  app.add_option("--baseline", args.run.baseline, "Open a layer profile or plan and pin it as the profile baseline")->check(NonEmpty());
  app.add_option("--export-plan", args.run.export_plan, "After tuning, write the plan to FILE")->check(NonEmpty());
  app.add_flag("--run-plan", args.run.run_plan, "After tuning (or --open-plan), measure the plan's model again (GPU)");
  app.add_flag("--profile", args.run.profile, "After tuning, profile the shown scheme's layer (GPU)");
  app.add_flag("--measure-ladder", args.run.measure_ladder, "Measure the fusion ladder on the GPU");
  app.add_option("--profile-tab", args.run.profile_tab, "Profile view tab: 0 kernels, 1 timeline, 2 bars, 3 roofline, 4 histogram")->check(IntRange(0, 4));
  app.add_option("--also-panels", args.run.also_panels, "With --screenshot: also save STEM-PANEL.png for each panel listed (comma separated)");
  app.add_option("--width", args.window.width, "Window width")->capture_default_str()->check(IntRange(64, 16384));
  app.add_option("--height", args.window.height, "Window height")->capture_default_str()->check(IntRange(64, 16384));
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // --help and --version end here with 0; every other parse error is a usage error (2).
      return app.exit(e) == 0 ? 0 : 2;
    }
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
