// The name -> MaskPattern table of mask_pattern.h.
#include "engine/mask/mask_pattern.h"

#include <utility>

namespace stof::engine {

MaskPattern MaskPatternFromName(const std::string& name) {
  static const std::pair<const char*, MaskPattern> kTable[] = {
      {"full", MaskPattern::kFull},           {"causal", MaskPattern::kCausal},
      {"sliding_window", MaskPattern::kSlidingWindow}, {"dilated", MaskPattern::kDilated},
      {"global", MaskPattern::kGlobal},       {"random_blocks", MaskPattern::kRandomBlocks},
      {"longformer", MaskPattern::kLongformer}, {"bigbird", MaskPattern::kBigBird},
      {"document", MaskPattern::kDocument},   {"or", MaskPattern::kOr},
      {"and", MaskPattern::kAnd},             {"not", MaskPattern::kNot},
  };
  for (const auto& [n, p] : kTable) {
    if (name == n) return p;
  }
  return MaskPattern::kUnknown;
}

}  // namespace stof::engine
