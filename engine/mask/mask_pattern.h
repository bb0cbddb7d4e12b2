// MaskPattern: MaskSpec::pattern's names as an enum, shared by the two builders of a spec:
// Generate (mask_spec.cpp, L x L bits) and RowRuns::FromSpec (row_runs_spec.cpp, column runs
// per row). One table, so the two cannot disagree on which names exist.
#pragma once

#include <string>

namespace stof::engine {

enum class MaskPattern {
  kFull, kCausal, kSlidingWindow, kDilated, kGlobal, kRandomBlocks,
  kLongformer, kBigBird, kDocument, kOr, kAnd, kNot, kUnknown,
};

// kUnknown for a name that is not one of MaskPatternNames() (mask_spec.h).
MaskPattern MaskPatternFromName(const std::string& name);

inline bool IsCompositionPattern(MaskPattern p) {
  return p == MaskPattern::kOr || p == MaskPattern::kAnd || p == MaskPattern::kNot;
}

}  // namespace stof::engine
