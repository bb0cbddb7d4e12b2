// The stof-studio window: GLFW + OpenGL 3.3 + Dear ImGui set up and torn down, the UI font,
// files dropped on the window, close requests (Studio may ask about unsaved changes first)
// and the frame loop, in which Studio draws the UI and the BatchDriver takes its step.
// main.cpp calls RunStudioWindow once, after every option has been checked.
#pragma once

namespace stof::app {

class BatchDriver;
struct StudioOptions;

struct WindowSize {
  int width = 1600, height = 900;
};

// Returns the exit code: 0, 1 (Studio::Init refused the options, or a batch step failed) or
// 2 (no window could be opened; the message says how to run without a display).
int RunStudioWindow(const WindowSize& size, const StudioOptions& options, BatchDriver& driver);

}  // namespace stof::app
