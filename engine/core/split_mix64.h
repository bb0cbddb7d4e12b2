// SplitMix64: the engine's one seeded random generator (mask generators, MCFuser's search).
// splitmix64 (Steele, Lea, Flood 2014) is tiny and gives the same sequence on every platform,
// which std::*_distribution does not; every draw below is built from Next() alone, so a seed
// reproduces a mask or a search anywhere.
#pragma once

#include <cstdint>

namespace stof::engine {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : m_state(seed) {}
  uint64_t Next() {
    uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n >= 1, without modulo bias: draws below 2^64 mod n are rejected.
  uint64_t Below(uint64_t n) {
    const uint64_t reject_below = (0 - n) % n;
    for (;;) {
      const uint64_t x = Next();
      if (x >= reject_below) return x % n;
    }
  }
  // Uniform in [0, 1) with 53 random bits.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t m_state;
};

}  // namespace stof::engine
