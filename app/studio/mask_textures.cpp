// MaskTextures (mask_textures.h).
#include "app/studio/mask_textures.h"

#include <algorithm>

namespace stof::app {

namespace {
constexpr int64_t kOverviewMaxSide = 2048;
}  // namespace

void MaskTextures::Rebuild(const engine::Mask& m, const LayoutBlend& blend) {
  m_overview_step = std::max<int64_t>(1, (std::max(m.Rows(), m.Cols()) + kOverviewMaxSide - 1) / kOverviewMaxSide);
  RenderMaskPixels(m, 0, m.Rows(), 0, m.Cols(), m_overview_step, &m_overview_mask, &m_overview_w, &m_overview_h);
  UploadOverview(blend);
}

void MaskTextures::UploadOverview(const LayoutBlend& blend) {
  m_overview_blend = blend.serial;
  std::vector<uint32_t> px = m_overview_mask;
  if (blend.serial != 0)
    BlendBlockClasses(*blend.layout, *blend.classes, 0, 0, m_overview_step, m_overview_w, m_overview_h, &px);
  m_overview.Upload(px, m_overview_w, m_overview_h);
}

void MaskTextures::Update(const engine::Mask& mask, const engine::CellRect& cells, const LayoutBlend& latest) {
  const int64_t s = m_overview_step;
  const int64_t y0 = cells.r0 / s, y1 = (cells.r1 + s - 1) / s;
  const int64_t x0 = cells.c0 / s, x1 = (cells.c1 + s - 1) / s;
  std::vector<uint32_t> px;
  int w = 0, h = 0;
  RenderMaskPixels(mask, y0 * s, y1 * s, x0 * s, x1 * s, s, &px, &w, &h);
  for (int y = 0; y < h; ++y)  // keep the unblended copy current
    std::copy_n(px.begin() + static_cast<ptrdiff_t>(y) * w, w,
                m_overview_mask.begin() + (y0 + y) * m_overview_w + x0);
  if (m_overview_blend != 0 && m_overview_blend == latest.serial)
    BlendBlockClasses(*latest.layout, *latest.classes, y0 * s, x0 * s, s, w, h, &px);
  m_overview.UpdateRegion(px, static_cast<int>(x0), static_cast<int>(y0), w, h);
}

void MaskTextures::Refresh(const LayoutBlend& blend, const LayoutBlend& latest, bool blocks_only) {
  if (latest.layout && m_block_texture_serial != latest.serial && blocks_only) {
    UploadBlockTexture(*latest.layout, &m_block_texture);
    m_block_texture_serial = latest.serial;
  }
  if (blend.serial != m_overview_blend && !m_overview_mask.empty()) UploadOverview(blend);
}

const Texture& MaskTextures::Detail(const engine::Mask& mask, uint64_t version, const LayoutBlend& blend,
                                    int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const DetailKey key{version, blend.serial, r0, r1, c0, c1};
  if (!(key == m_detail_key)) {
    std::vector<uint32_t> px;
    int w = 0, h = 0;
    RenderMaskPixels(mask, r0, r1, c0, c1, 1, &px, &w, &h);
    if (key.blend != 0) BlendBlockClasses(*blend.layout, *blend.classes, r0, c0, 1, w, h, &px);
    m_detail.Upload(px, w, h);
    m_detail_key = key;
  }
  return m_detail;
}

}  // namespace stof::app
