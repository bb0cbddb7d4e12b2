// Texture upload and the mask / block-class images (texture.h). GL 1.1 entry points only, so
// no loader is needed beyond libGL.
#include "app/studio/widgets/texture.h"

#include <GL/gl.h>

#include <algorithm>

namespace stof::app {

Texture::~Texture() {
  if (m_id) glDeleteTextures(1, &m_id);
}

void Texture::Upload(const std::vector<uint32_t>& rgba, int w, int h) {
  if (!m_id) glGenTextures(1, &m_id);
  glBindTexture(GL_TEXTURE_2D, m_id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  m_w = w;
  m_h = h;
}

void UploadMaskTexture(const engine::Mask& mask, Texture* texture) {
  constexpr int64_t kMaxSide = 2048;
  const int64_t rows = mask.Rows(), cols = mask.Cols();
  const int64_t step = std::max<int64_t>(1, (std::max(rows, cols) + kMaxSide - 1) / kMaxSide);
  const int w = static_cast<int>((cols + step - 1) / step), h = static_cast<int>((rows + step - 1) / step);
  std::vector<uint32_t> px(static_cast<size_t>(w) * h, kColorMasked);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      bool any = step == 1 ? mask.Get(y, x)
                           : mask.CountRect(y * step, (y + 1) * step, x * step, (x + 1) * step) > 0;
      if (any) px[static_cast<size_t>(y) * w + x] = kColorAttend;
    }
  }
  texture->Upload(px, w, h);
}

void UploadBlockTexture(const engine::BlockLayout& layout, Texture* texture) {
  const int w = static_cast<int>(layout.BlockCols()), h = static_cast<int>(layout.BlockRows());
  std::vector<uint32_t> px(static_cast<size_t>(w) * h, kColorEmpty);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      engine::BlockClass c = layout.ClassAt(y, x);
      px[static_cast<size_t>(y) * w + x] = c == engine::BlockClass::kFull   ? kColorFull
                                           : c == engine::BlockClass::kPart ? kColorPart
                                                                            : kColorEmpty;
    }
  }
  texture->Upload(px, w, h);
}

}  // namespace stof::app
