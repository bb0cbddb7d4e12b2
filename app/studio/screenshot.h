// Saves the current OpenGL framebuffer as a PNG (engine::EncodePng in memory, then the atomic
// writer): used by `stof-studio --screenshot` for the GUI tests and the docs' screenshots.
#pragma once

#include <string>

#include "engine/core/status.h"

namespace stof::app {

engine::Status SaveFramebufferPng(const std::string& path, int width, int height);

}  // namespace stof::app
