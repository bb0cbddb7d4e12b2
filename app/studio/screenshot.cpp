// SaveFramebufferPng (screenshot.h): glReadPixels of the back buffer, flipped to top-first
// rows, encoded to PNG in memory and written atomically (engine/core/atomic_file.h).
#include "app/studio/screenshot.h"

#include <GL/gl.h>

#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/core/byte_files.h"

namespace stof::app {

engine::Status SaveFramebufferPng(const std::string& path, int width, int height) {
  if (width <= 0 || height <= 0) return engine::Error{"screenshot: empty framebuffer"};
  std::vector<unsigned char> px(static_cast<size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  if (GLenum e = glGetError(); e != GL_NO_ERROR)
    return engine::Error{"screenshot: glReadPixels failed (GL error " + std::to_string(e) + ")"};
  const size_t row = static_cast<size_t>(width) * 4;
  // Flip only through the row stride: stb writes from the last row with a negative stride.
  auto png = engine::EncodePng(px.data() + row * (height - 1), width, height, 4, -static_cast<int>(row));
  if (!png.IsOk()) return engine::Error{path + ": " + png.Message()};
  return engine::WriteFileAtomic(path, *png);
}

}  // namespace stof::app
