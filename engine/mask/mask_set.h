// Masks that differ per batch row or per head, for one kernel launch: the distinct patterns
// stored once each and, per (batch row, query head), the index of its pattern. A padded or
// packed-documents batch whose rows share a pattern costs one mask, not B; per-head sparse
// patterns (a local head beside a global one) cost one mask per distinct head. Built by the C
// API (stof_prepare_patterns) and the Python package, which hand in distinct masks or not:
// MaskSet::Make merges equal ones. Read by the Hopper kernel's layout
// (kernels/attention_common/device_layout.h), which keeps one block layout per pattern.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/mask/mask.h"

namespace stof::engine {

class MaskSet {
 public:
  // `masks` (each L_q x L_k, at least one) and `pattern_of` ([batch][heads] indices into
  // masks). Equal masks are merged (the indices follow), unused ones dropped. Errors name
  // `what` and the field: sizes that differ, an index out of range, batch or heads < 1, a
  // pattern_of of another length.
  static Expected<MaskSet> Make(std::vector<Mask> masks, const std::vector<int32_t>& pattern_of,
                                int64_t batch, int64_t heads, const std::string& what = "masks");

  int64_t Batch() const { return m_batch; }
  int64_t Heads() const { return m_heads; }
  int64_t Rows() const { return m_masks.front().Rows(); }  // L_q
  int64_t Cols() const { return m_masks.front().Cols(); }  // L_k
  int64_t Patterns() const { return static_cast<int64_t>(m_masks.size()); }
  const std::vector<Mask>& Masks() const { return m_masks; }
  const Mask& PatternOf(int64_t batch, int64_t head) const {
    return m_masks[static_cast<size_t>(m_pattern_of[static_cast<size_t>(batch * m_heads + head)])];
  }
  const std::vector<int32_t>& PatternIndices() const { return m_pattern_of; }

  // The mask attending what any pattern attends (the kernel choice is made on it).
  Mask Union() const;
  // Attended elements summed over every (batch row, head).
  int64_t TotalCount() const;
  // Whether every `group` consecutive query heads (the heads sharing a key/value head) of each
  // batch row have one pattern: then a tile may hold several heads' rows (packed GQA).
  bool GroupsShareAPattern(int64_t group) const;
  // The pattern of each work item's head, [batch][item heads]: per query head, or (packed,
  // GroupsShareAPattern) per key/value head, heads / group of them.
  std::vector<int32_t> ItemPatterns(int64_t group, bool packed) const;
  // A 64-bit digest of the patterns (their hashes) and the indices, for caches.
  uint64_t Hash() const;

 private:
  std::vector<Mask> m_masks;
  std::vector<int32_t> m_pattern_of;
  int64_t m_batch = 0, m_heads = 0;
};

}  // namespace stof::engine
