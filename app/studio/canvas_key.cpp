// CanvasKey (canvas_key.h).
#include "app/studio/canvas_key.h"

#include "app/studio/widgets/texture.h"

namespace stof::app {

std::vector<plots::LegendItem> CanvasKey(Overlay overlay) {
  using engine::BlockClass;
  switch (overlay) {
    case Overlay::kMask:
      return {{"attends", kColorAttend, false}, {"masked", kColorMasked, true}};
    case Overlay::kBlocks:
      return {{"full block", kColorFull, false}, {"part block", kColorPart, false}, {"empty block", kColorEmpty, false}};
    case Overlay::kBlocksOverMask:
      break;
  }
  return {{"full block", BlendedBlockColor(BlockClass::kFull, true), false},
          {"part: attends", BlendedBlockColor(BlockClass::kPart, true), false},
          {"part: masked", BlendedBlockColor(BlockClass::kPart, false), false},
          {"empty block", BlendedBlockColor(BlockClass::kEmpty, false), false}};
}

}  // namespace stof::app
