// Shared by the tests that need a generated mask (tests/engine, and mha_choice_test.cpp in
// tests/gpu): the paper-default mask of a pattern at length n (the test fails, with the
// generator's message, if generation fails), a seeded mask of independent random cells, and a
// seeded band + global + rectangles mask (full, part and empty blocks at every block size).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "engine/mask/mask_spec.h"

namespace stof::engine::testing {

inline Mask PatternMask(const std::string& pattern, int64_t n) {
  MaskSpec spec;
  spec.pattern = pattern;
  spec.seq_len = n;
  auto m = Generate(spec);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  return m.IsOk() ? std::move(*m) : Mask{};
}

// rows x cols, each cell attended with probability `density`, from std::mt19937_64(seed).
inline Mask RandomMask(int64_t rows, int64_t cols, double density, uint64_t seed) {
  auto m = Mask::Create(rows, cols);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution bit(density);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (bit(rng)) m->Set(r, c);
    }
  }
  return std::move(m).Value();
}

// A band |r - c| <= half plus a few global rows and columns, and random solid rectangles:
// gives full blocks, part blocks with long runs, and empty blocks at every block size.
inline Mask StructuredMask(int64_t rows, int64_t cols, uint64_t seed) {
  auto m = Mask::Create(rows, cols);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  const int64_t half = std::max<int64_t>(1, std::min(rows, cols) / 20);
  for (int64_t r = 0; r < rows; ++r) m->SetRange(r, r - half, r + half + 1);
  m->SetRect(0, std::min<int64_t>(rows, 5), 0, cols);
  m->SetRect(0, rows, 0, std::min<int64_t>(cols, 7));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 6; ++i) {
    const int64_t r0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows));
    const int64_t c0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(cols));
    m->SetRect(r0, r0 + 1 + static_cast<int64_t>(rng() % 300), c0,
               c0 + 1 + static_cast<int64_t>(rng() % 300));
  }
  return std::move(m).Value();
}

}  // namespace stof::engine::testing
