// FNV-1a 64 over 64-bit values (each value's 8 bytes, low byte first): the one mixing step of
// the engine's content hashes, Mask::Hash (stored in plans as mask.hash, so its basis and
// order never change) and MaskSet::Hash (the device layout cache's key for a set of masks).
#pragma once

#include <cstdint>

namespace stof::engine {

inline constexpr uint64_t kFnv1aPrime = 1099511628211ull;

inline uint64_t Fnv1aMix(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xffu;
    h *= kFnv1aPrime;
  }
  return h;
}

}  // namespace stof::engine
