// stof-studio entry point: the linear Dear ImGui + GLFW + OpenGL3 skeleton. Parses options,
// opens the window (or explains how to run without a display), and runs the frame loop; the
// Studio object owns all state. --screenshot renders a few frames, saves a PNG and exits
// (GUI tests and docs); --dump-state writes the state the window shows as JSON.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "app/studio/screenshot.h"
#include "app/studio/studio.h"

namespace {

struct Args {
  std::string pattern = "bigbird";
  int64_t seq = 1024;
  int64_t block = 64;
  std::string device;
  std::string screenshot;
  std::string dump_state;
  int frames = 5;
  int width = 1280, height = 800;
};

void GlfwError(int code, const char* desc) { std::fprintf(stderr, "stof-studio: GLFW error %d: %s\n", code, desc); }

int Run(const Args& args) {
  stof::app::StudioOptions options;
  options.spec.pattern = args.pattern;
  options.spec.seq_len = args.seq;
  options.block_m = options.block_n = args.block;
  options.device = args.device;

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
  if (!args.screenshot.empty()) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(args.width, args.height, "STOF Studio", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "stof-studio: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return 2;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(args.screenshot.empty() ? 1 : 0);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini litter next to the user's files
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");

  int rc = 0;
  {
    stof::app::Studio studio;
    if (stof::engine::Status s = studio.Init(options); !s.IsOk()) {
      std::fprintf(stderr, "stof-studio: %s\n", s.Message().c_str());
      rc = 1;
    } else {
      if (!args.dump_state.empty()) {
        std::ofstream f(args.dump_state);
        f << studio.StateJson().dump(2) << "\n";
        if (!f.good()) {
          std::fprintf(stderr, "stof-studio: %s: cannot write\n", args.dump_state.c_str());
          rc = 1;
        }
      }
      for (int frame = 0; rc == 0 && !glfwWindowShouldClose(window); ++frame) {
        glfwPollEvents();
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        ImGui::NewFrame();
        studio.Draw();
        ImGui::Render();
        int fw = 0, fh = 0;
        glfwGetFramebufferSize(window, &fw, &fh);
        glViewport(0, 0, fw, fh);
        glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        if (!args.screenshot.empty() && frame + 1 >= args.frames) {
          if (stof::engine::Status shot = stof::app::SaveFramebufferPng(args.screenshot, fw, fh); !shot.IsOk()) {
            std::fprintf(stderr, "stof-studio: %s\n", shot.Message().c_str());
            rc = 1;
          } else {
            std::printf("stof-studio: wrote %s (%d x %d)\n", args.screenshot.c_str(), fw, fh);
          }
          break;
        }
        glfwSwapBuffers(window);
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
  CLI::App app{"stof-studio: explore sparse attention masks, their block layouts and STOF's kernel "
               "selection"};
  Args args;
  app.add_option("--pattern", args.pattern, "Mask generator (see stof mask --help)")->capture_default_str();
  app.add_option("--seq", args.seq, "Sequence length")->capture_default_str();
  app.add_option("--block", args.block, "Block size (16, 32, 64 or 128)")->capture_default_str();
  app.add_option("--device", args.device, "Built-in device name (default: this GPU, else H100-SXM-80GB)");
  app.add_option("--screenshot", args.screenshot, "Render --frames frames, save the window as PNG, exit");
  app.add_option("--frames", args.frames, "Frames to render before --screenshot")->capture_default_str();
  app.add_option("--dump-state", args.dump_state, "Write the shown state as JSON to FILE");
  app.add_option("--width", args.width, "Window width")->capture_default_str();
  app.add_option("--height", args.height, "Window height")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return Run(args);
}
