// Texture: an OpenGL RGBA texture owned by the GUI (the only GL object the panels use), plus
// the two images the studio shows: the element mask and the block classes of a layout.
// Rebuilt only when their input changes (Studio::Rebuild), never per frame.
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

// The mask at most 2048 px a side: a pixel is "attend" when any cell it covers attends.
void UploadMaskTexture(const engine::Mask& mask, Texture* texture);
// One texel per block: full, part and empty in the legend's colours (translucent).
void UploadBlockTexture(const engine::BlockLayout& layout, Texture* texture);

inline constexpr uint32_t kColorAttend = Rgba(236, 236, 244);
inline constexpr uint32_t kColorMasked = Rgba(24, 26, 34);
inline constexpr uint32_t kColorFull = Rgba(64, 200, 120, 110);
inline constexpr uint32_t kColorPart = Rgba(250, 160, 40, 110);
inline constexpr uint32_t kColorEmpty = Rgba(0, 0, 0, 0);

}  // namespace stof::app
