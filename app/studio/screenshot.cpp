// SaveFramebufferPng (screenshot.h): glReadPixels of the back buffer, flipped to top-first rows.
#include "app/studio/screenshot.h"

#include <GL/gl.h>
#include <stb_image_write.h>

#include <vector>

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
  if (!stbi_write_png(path.c_str(), width, height, 4, px.data() + row * (height - 1),
                      -static_cast<int>(row)))
    return engine::Error{path + ": cannot write PNG"};
  return engine::Status::Ok();
}

}  // namespace stof::app
