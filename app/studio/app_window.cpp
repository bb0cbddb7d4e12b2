// RunStudioWindow (app_window.h): the linear Dear ImGui + GLFW + OpenGL3 skeleton. Studio owns
// all state; the BatchDriver decides when a batch run is over.
#include "app/studio/app_window.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cfloat>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "app/studio/batch_driver.h"
#include "app/studio/studio.h"

namespace stof::app {

namespace {

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

void OpenDropped(Studio& studio, DropQueue& drops) {
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

void LoadFont() {
  // DejaVu Sans (Debian's fonts-dejavu-core) reads better than ImGui's 13 px bitmap font.
  const char* candidates[] = {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                              "/usr/share/fonts/TTF/DejaVuSans.ttf"};
  for (const char* path : candidates) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && ImGui::GetIO().Fonts->AddFontFromFileTTF(path, 16.0f)) return;
  }
}

GLFWwindow* OpenWindow(const WindowSize& size, bool batch) {
  glfwSetErrorCallback(GlfwError);
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "stof-studio: cannot open a window (no display?). Run it under a virtual display:\n"
                 "  xvfb-run -a stof-studio --screenshot studio.png\n"
                 "or use the command line: stof --help\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  if (batch) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(size.width, size.height, "STOF Studio", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "stof-studio: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(batch ? 0 : 1);
  return window;
}

void InitImGui(GLFWwindow* window) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini litter next to the user's files
  ImGui::StyleColorsDark();
  ImGui::GetStyle().FrameRounding = 3.0f;
  LoadFont();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");
}

// The frames until the window closes or the driver ends the run.
void FrameLoop(GLFWwindow* window, Studio& studio, BatchDriver& driver, DropQueue& drops) {
  const bool batch = driver.Batch();
  for (;;) {
    glfwPollEvents();
    if (glfwWindowShouldClose(window)) {
      if (studio.RequestQuit()) break;
      glfwSetWindowShouldClose(window, GLFW_FALSE);
    }
    if (studio.QuitConfirmed()) break;
    OpenDropped(studio, drops);
    const auto t0 = BatchDriver::Clock::now();
    driver.BeforeFrame(studio);
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
    if (driver.AfterRender(studio, fw, fh, t0)) break;
    glfwSwapBuffers(window);
    if (driver.AfterSwap(studio, fw, fh, t0)) break;
  }
}

}  // namespace

int RunStudioWindow(const WindowSize& size, const StudioOptions& options, BatchDriver& driver) {
  GLFWwindow* window = OpenWindow(size, driver.Batch());
  if (!window) return 2;
  DropQueue drops;
  glfwSetWindowUserPointer(window, &drops);
  glfwSetDropCallback(window, GlfwDrop);
  InitImGui(window);

  int rc = 0;
  {
    Studio studio;
    if (engine::Status s = studio.Init(options); !s.IsOk()) {
      std::fprintf(stderr, "stof-studio: %s\n", s.Message().c_str());
      rc = 2;  // a start option that cannot apply (it names the option): a usage error
    } else {
      driver.Start();
      FrameLoop(window, studio, driver, drops);
      rc = driver.ExitCode();
    }
  }  // textures are freed while the GL context is alive
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return rc;
}

}  // namespace stof::app
