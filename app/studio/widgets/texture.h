// Texture: an OpenGL RGBA texture owned by the GUI (the only GL object the panels use), plus
// the images the studio draws: the element mask (any rectangle of it, at any sub-sampling
// step) and the block classes of a layout. Rebuilt only when their input changes (a mask
// version, a view rectangle), and during a brush stroke only the changed region is re-sent.
// Used by MaskTextures (which owns the canvas' textures) and panels/mask_canvas.cpp (which
// draws them).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/layout/block_layout.h"
#include "engine/mask/mask.h"

namespace stof::app {

class Texture {
 public:
  Texture() = default;
  Texture(const Texture&) = delete;
  Texture& operator=(const Texture&) = delete;
  ~Texture();

  // Uploads w x h RGBA8 pixels (row-major, top row first); nearest-neighbour sampling.
  void Upload(const std::vector<uint32_t>& rgba, int w, int h);
  // Replaces the w x h pixels at (x, y) of an uploaded texture.
  void UpdateRegion(const std::vector<uint32_t>& rgba, int x, int y, int w, int h);
  void* Id() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(m_id)); }
  int Width() const { return m_w; }
  int Height() const { return m_h; }
  bool Valid() const { return m_id != 0; }

 private:
  unsigned int m_id = 0;
  int m_w = 0, m_h = 0;
};

inline constexpr uint32_t Rgba(uint8_t r, uint8_t g, uint8_t b, uint8_t a = 255) {
  return uint32_t{r} | (uint32_t{g} << 8) | (uint32_t{b} << 16) | (uint32_t{a} << 24);
}

// Pixels of mask rows [r0, r1) x cols [c0, c1), each pixel covering step x step cells
// (clipped at the edges): "attend" when any covered cell attends. *w, *h receive the size.
void RenderMaskPixels(const engine::Mask& mask, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                      int64_t step, std::vector<uint32_t>* px, int* w, int* h);

// One opaque texel per block in the legend's colours (the "blocks only" view).
void UploadBlockTexture(const engine::BlockLayout& layout, Texture* texture);

// The "blocks over mask" view pre-blended on the CPU, so the canvas draws one quad, not two
// (a second full-canvas blended quad costs software GL a large share of the frame; measured:
// docs/user-guide.md, "Responsiveness"). `px` holds w x h pixels from
// RenderMaskPixels(mask, r0, .., c0, .., step);
// each pixel is blended (source-over, kBlockOverlayAlpha) with the class of the block that
// holds its top-left cell. `classes` is engine::BlockClassMatrix(layout).
void BlendBlockClasses(const engine::BlockLayout& layout, const std::vector<uint8_t>& classes,
                       int64_t r0, int64_t c0, int64_t step, int w, int h, std::vector<uint32_t>* px);
inline constexpr uint8_t kBlockOverlayAlpha = 120;

// Okabe-Ito colours (safe for the common colour-vision deficiencies): full = blue,
// part = orange, empty = reddish purple; the mask is white on near-black.
inline constexpr uint32_t kColorAttend = Rgba(236, 236, 244);
inline constexpr uint32_t kColorMasked = Rgba(24, 26, 34);
inline constexpr uint32_t kColorFull = Rgba(0, 114, 178);
inline constexpr uint32_t kColorPart = Rgba(230, 159, 0);
inline constexpr uint32_t kColorEmpty = Rgba(204, 121, 167);
// What the "blocks over mask" overlay shows: `cls`'s colour over an attended or a masked cell
// (the canvas' colour keys use it, so they show the canvas' own colours).
uint32_t BlendedBlockColor(engine::BlockClass cls, bool attend);

}  // namespace stof::app
