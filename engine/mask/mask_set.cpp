// MaskSet (mask_set.h): per (batch row, head) patterns, each distinct mask kept once.
#include "engine/mask/mask_set.h"

#include <map>
#include <utility>

#include "engine/core/fnv1a.h"

namespace stof::engine {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

}  // namespace

Expected<MaskSet> MaskSet::Make(std::vector<Mask> masks, const std::vector<int32_t>& pattern_of,
                                int64_t batch, int64_t heads, const std::string& what) {
  if (batch < 1 || heads < 1)
    return MakeError(what + ": batch and heads must be >= 1, got " + Str(batch) + " and " +
                     Str(heads));
  if (masks.empty()) return MakeError(what + ": at least one mask expected, got none");
  if (static_cast<int64_t>(pattern_of.size()) != batch * heads)
    return MakeError(what + ": pattern_of: expected batch x heads = " + Str(batch * heads) +
                     " indices, got " + Str(static_cast<int64_t>(pattern_of.size())));
  for (size_t i = 0; i < masks.size(); ++i) {
    if (masks[i].Empty() || masks[i].Rows() != masks[0].Rows() ||
        masks[i].Cols() != masks[0].Cols())
      return MakeError(what + "[" + Str(static_cast<int64_t>(i)) + "]: size " +
                       Str(masks[i].Rows()) + " x " + Str(masks[i].Cols()) + ", expected " +
                       (masks[0].Empty() ? std::string("a non-empty mask")
                                         : Str(masks[0].Rows()) + " x " + Str(masks[0].Cols()) +
                                               " as " + what + "[0]"));
  }
  // Distinct masks in the order of first use; equal masks (hash, then bits) merge.
  MaskSet s;
  s.m_batch = batch;
  s.m_heads = heads;
  s.m_pattern_of.resize(pattern_of.size());
  std::vector<int32_t> remap(masks.size(), -1);
  std::multimap<uint64_t, int32_t> by_hash;  // hash -> index in s.m_masks
  for (size_t i = 0; i < pattern_of.size(); ++i) {
    const int32_t src = pattern_of[i];
    if (src < 0 || src >= static_cast<int32_t>(masks.size()))
      return MakeError(what + ": pattern_of[" + Str(static_cast<int64_t>(i)) + "] (batch " +
                       Str(static_cast<int64_t>(i) / heads) + ", head " +
                       Str(static_cast<int64_t>(i) % heads) + ") is " + Str(src) +
                       ", expected 0.." + Str(static_cast<int64_t>(masks.size()) - 1));
    int32_t& to = remap[static_cast<size_t>(src)];
    if (to < 0) {
      Mask& m = masks[static_cast<size_t>(src)];
      const uint64_t h = m.Hash();
      for (auto [it, end] = by_hash.equal_range(h); it != end && to < 0; ++it)
        if (s.m_masks[static_cast<size_t>(it->second)] == m) to = it->second;
      if (to < 0) {
        to = static_cast<int32_t>(s.m_masks.size());
        by_hash.emplace(h, to);
        s.m_masks.push_back(std::move(m));
      }
    }
    s.m_pattern_of[i] = to;
  }
  return s;
}

Mask MaskSet::Union() const {
  Mask u = m_masks.front();
  for (size_t i = 1; i < m_masks.size(); ++i) u = *Mask::Or(u, m_masks[i]);  // equal sizes
  return u;
}

int64_t MaskSet::TotalCount() const {
  std::vector<int64_t> counts(m_masks.size());
  for (size_t i = 0; i < m_masks.size(); ++i) counts[i] = m_masks[i].Count();
  int64_t total = 0;
  for (int32_t p : m_pattern_of) total += counts[static_cast<size_t>(p)];
  return total;
}

bool MaskSet::GroupsShareAPattern(int64_t group) const {
  if (group < 1 || m_heads % group != 0) return false;
  for (size_t i = 0; i < m_pattern_of.size(); ++i)
    if (m_pattern_of[i] != m_pattern_of[i - i % static_cast<size_t>(group)]) return false;
  return true;
}

std::vector<int32_t> MaskSet::ItemPatterns(int64_t group, bool packed) const {
  if (!packed) return m_pattern_of;
  std::vector<int32_t> out;
  out.reserve(m_pattern_of.size() / static_cast<size_t>(group));
  for (size_t i = 0; i < m_pattern_of.size(); i += static_cast<size_t>(group))
    out.push_back(m_pattern_of[i]);
  return out;
}

uint64_t MaskSet::Hash() const {
  uint64_t h = 14695981039346656037ull;
  h = Fnv1aMix(h, static_cast<uint64_t>(m_batch));
  h = Fnv1aMix(h, static_cast<uint64_t>(m_heads));
  for (const Mask& m : m_masks) h = Fnv1aMix(h, m.Hash());
  for (int32_t p : m_pattern_of) h = Fnv1aMix(h, static_cast<uint64_t>(p));
  return h;
}

}  // namespace stof::engine
