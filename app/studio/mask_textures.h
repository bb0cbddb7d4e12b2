// MaskTextures: the GL textures the mask canvas draws, kept current without redoing work per
// frame: the overview (the whole mask, sub-sampled to at most 2048 texels a side, with the
// block classes pre-blended in "blocks over mask"), the opaque block texture ("blocks only")
// and the exact-cell detail texture of the visible rectangle. The overview keeps its
// unblended pixels, so a new layout or overlay re-blends them (a table lookup per texel)
// without reading the mask again, and an edit re-sends only the changed region. Studio owns
// one and feeds it the mask and the analysis; panels/mask_canvas draws the textures.
#pragma once

#include <cstdint>
#include <vector>

#include "app/studio/widgets/texture.h"
#include "engine/layout/block_layout.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_edit.h"

namespace stof::app {

// A layout to blend into the mask pixels: the analysis' serial (0 = blend nothing), its
// layout and engine::BlockClassMatrix of it.
struct LayoutBlend {
  uint64_t serial = 0;
  const engine::BlockLayout* layout = nullptr;
  const std::vector<uint8_t>* classes = nullptr;
};

class MaskTextures {
 public:
  struct DetailKey {
    uint64_t version = 0;
    uint64_t blend = 0;  // the analysis serial blended in, 0 = none
    int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    bool operator==(const DetailKey&) const = default;
  };

  // The whole overview again (a new mask), blended with `blend`.
  void Rebuild(const engine::Mask& mask, const LayoutBlend& blend);
  // The overview's pixels of the cells an edit changed; blended with `latest` (the newest
  // analysis) when the overview shows that analysis' blend.
  void Update(const engine::Mask& mask, const engine::CellRect& cells, const LayoutBlend& latest);
  // After a new analysis or overlay: the block texture (when `blocks_only` shows it) from
  // `latest`, the overview re-blended when `blend` differs from the one it shows.
  void Refresh(const LayoutBlend& blend, const LayoutBlend& latest, bool blocks_only);
  // The exact-cell texture of rows [r0, r1) x cols [c0, c1), rebuilt only when the rectangle,
  // the mask version or the blended layout changes.
  const Texture& Detail(const engine::Mask& mask, uint64_t version, const LayoutBlend& blend, int64_t r0,
                        int64_t r1, int64_t c0, int64_t c1);

  const Texture& Overview() const { return m_overview; }
  int64_t OverviewStep() const { return m_overview_step; }  // cells per overview texel side
  bool OverviewBlended() const { return m_overview_blend != 0; }
  const Texture& BlockTexture() const { return m_block_texture; }
  const DetailKey& DetailRect() const { return m_detail_key; }

 private:
  void UploadOverview(const LayoutBlend& blend);  // m_overview_mask, blended with `blend`

  Texture m_overview, m_block_texture, m_detail;
  int64_t m_overview_step = 1;
  std::vector<uint32_t> m_overview_mask;  // the overview's mask pixels before blending
  int m_overview_w = 0, m_overview_h = 0;
  uint64_t m_overview_blend = 0;          // the serial blended into m_overview
  uint64_t m_block_texture_serial = 0;
  DetailKey m_detail_key;
};

}  // namespace stof::app
