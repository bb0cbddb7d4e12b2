// Texture upload and the mask / block-class images (texture.h). GL 1.1 entry points only, so
// no loader is needed beyond libGL. RenderMaskPixels ORs `step` rows of words together, then
// tests each pixel's column range a word at a time: O(cells / 64) per call.
#include "app/studio/widgets/texture.h"

#include <GL/gl.h>

#include <algorithm>
#include <bit>

#include "engine/layout/layout_export.h"

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
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  m_w = w;
  m_h = h;
}

void Texture::UpdateRegion(const std::vector<uint32_t>& rgba, int x, int y, int w, int h) {
  if (!m_id || w <= 0 || h <= 0) return;
  glBindTexture(GL_TEXTURE_2D, m_id);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTexSubImage2D(GL_TEXTURE_2D, 0, x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
}

namespace {
// Whether any bit in [c0, c1) of `words` is set.
bool AnyBit(const std::vector<uint64_t>& words, int64_t c0, int64_t c1) {
  for (int64_t c = c0; c < c1;) {
    const int64_t w = c >> 6, lo = c & 63;
    const int64_t hi = std::min<int64_t>(64, lo + (c1 - c));
    const uint64_t span = hi - lo == 64 ? ~uint64_t{0} : ((uint64_t{1} << (hi - lo)) - 1) << lo;
    if (words[static_cast<size_t>(w)] & span) return true;
    c += hi - lo;
  }
  return false;
}
}  // namespace

void RenderMaskPixels(const engine::Mask& mask, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                      int64_t step, std::vector<uint32_t>* px, int* w, int* h) {
  r0 = std::max<int64_t>(0, r0);
  c0 = std::max<int64_t>(0, c0);
  r1 = std::min(r1, mask.Rows());
  c1 = std::min(c1, mask.Cols());
  step = std::max<int64_t>(1, step);
  *w = static_cast<int>(std::max<int64_t>(0, (c1 - c0 + step - 1) / step));
  *h = static_cast<int>(std::max<int64_t>(0, (r1 - r0 + step - 1) / step));
  px->assign(static_cast<size_t>(*w) * static_cast<size_t>(*h), kColorMasked);
  std::vector<uint64_t> acc(static_cast<size_t>(mask.WordsPerRow()));
  for (int y = 0; y < *h; ++y) {
    const int64_t ra = r0 + y * step, rb = std::min(r1, ra + step);
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t r = ra; r < rb; ++r) {
      const uint64_t* row = mask.RowWords(r);
      for (size_t k = 0; k < acc.size(); ++k) acc[k] |= row[k];
    }
    uint32_t* out = px->data() + static_cast<size_t>(y) * static_cast<size_t>(*w);
    for (int x = 0; x < *w; ++x) {
      const int64_t ca = c0 + x * step, cb = std::min(c1, ca + step);
      if (AnyBit(acc, ca, cb)) out[x] = kColorAttend;
    }
  }
}

namespace {
uint32_t ClassColor(uint8_t cls) {
  const auto c = static_cast<engine::BlockClass>(cls);
  return c == engine::BlockClass::kFull ? kColorFull : c == engine::BlockClass::kPart ? kColorPart : kColorEmpty;
}

// Source-over of `top` at `alpha` on an opaque `bottom`, per 8-bit channel.
uint32_t Over(uint32_t top, uint32_t bottom, uint32_t alpha) {
  uint32_t out = 0xff000000u;
  for (int shift = 0; shift < 24; shift += 8) {
    const uint32_t t = (top >> shift) & 255, b = (bottom >> shift) & 255;
    out |= ((t * alpha + b * (255 - alpha) + 127) / 255) << shift;
  }
  return out;
}
}  // namespace

uint32_t BlendedBlockColor(engine::BlockClass cls, bool attend) {
  return Over(ClassColor(static_cast<uint8_t>(cls)), attend ? kColorAttend : kColorMasked, kBlockOverlayAlpha);
}

void UploadBlockTexture(const engine::BlockLayout& layout, Texture* texture) {
  const int w = static_cast<int>(layout.BlockCols()), h = static_cast<int>(layout.BlockRows());
  if (w == 0 || h == 0) return;
  const std::vector<uint8_t> cls = engine::BlockClassMatrix(layout);
  std::vector<uint32_t> px(cls.size());
  for (size_t i = 0; i < cls.size(); ++i) px[i] = ClassColor(cls[i]);
  texture->Upload(px, w, h);
}

void BlendBlockClasses(const engine::BlockLayout& layout, const std::vector<uint8_t>& classes,
                       int64_t r0, int64_t c0, int64_t step, int w, int h, std::vector<uint32_t>* px) {
  const int64_t brows = layout.BlockRows(), bcols = layout.BlockCols();
  if (brows == 0 || bcols == 0 || static_cast<int64_t>(classes.size()) != brows * bcols ||
      px->size() != static_cast<size_t>(w) * static_cast<size_t>(h))
    return;
  // The six colours a pixel can take: {masked, attend} x {full, part, empty}.
  uint32_t lut[2][3];
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 3; ++c)
      lut[a][c] = Over(ClassColor(static_cast<uint8_t>(c)), a ? kColorAttend : kColorMasked, kBlockOverlayAlpha);
  std::vector<int64_t> block_col(static_cast<size_t>(w));
  for (int x = 0; x < w; ++x) block_col[static_cast<size_t>(x)] = std::min(bcols - 1, (c0 + x * step) / layout.BlockN());
  for (int y = 0; y < h; ++y) {
    const int64_t br = std::min(brows - 1, (r0 + y * step) / layout.BlockM());
    const uint8_t* row_cls = classes.data() + br * bcols;
    uint32_t* out = px->data() + static_cast<size_t>(y) * static_cast<size_t>(w);
    for (int x = 0; x < w; ++x) {
      const uint8_t c = std::min<uint8_t>(row_cls[block_col[static_cast<size_t>(x)]], 2);
      out[x] = lut[out[x] == kColorAttend ? 1 : 0][c];
    }
  }
}

}  // namespace stof::app
